"""The odie_anaphora corpus plugin: ODIE anaphoric relations in clinical notes (Savova et al. 2011)."""

from pathlib import Path

from clinical_corpora.core.registry import corpora

corpora.register("odie_anaphora", Path(__file__).parent)
