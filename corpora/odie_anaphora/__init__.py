"""The odie_anaphora corpus plugin: ODIE anaphoric relations in clinical notes (Savova et al. 2011)."""

from pathlib import Path

from clinical_corpora.core.registry import Command, baselines, corpora, exporters

corpora.register("odie_anaphora", Path(__file__).parent)
exporters.register(
    ("conll2012", "odie_anaphora"),
    Command("clinical_corpora.corpora.odie_anaphora.exports:conll2012", "identity chains, one document per note"),
)
exporters.register(
    ("i2b2", "odie_anaphora"),
    Command(
        "clinical_corpora.corpora.odie_anaphora.exports:i2b2",
        "the i2b2/VA 2011 coreference layout: docs/, concepts/, chains/ and pairs/",
    ),
)
exporters.register(
    ("knowtator", "odie_anaphora"),
    Command(
        "clinical_corpora.corpora.odie_anaphora.exports:knowtator",
        "Knowtator XML (Markable and Pair classes) beside the note texts",
    ),
)
baselines.register(
    ("odie_anaphora", "exact-string"),
    Command(
        "clinical_corpora.corpora.odie_anaphora.baselines:exact_string",
        "gold markables with one lower-cased text form a chain (ours, of the i2b2/VA 2011 kind)",
    ),
)
baselines.register(
    ("odie_anaphora", "head-match"),
    Command(
        "clinical_corpora.corpora.odie_anaphora.baselines:head_match",
        "gold markables with one head word form a chain (ours, of the i2b2/VA 2011 kind)",
    ),
)
