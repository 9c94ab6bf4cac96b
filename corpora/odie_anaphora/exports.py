"""odie_anaphora's exports: identity chains as CoNLL-2012 (one document per note)."""

from __future__ import annotations

from clinical_corpora.builders.exporters.conll2012 import ChainLayout, Conll2012Export

CONFIG = "odie_anaphora"
NOTE_CHAINS = ChainLayout(config=CONFIG, id_field="id", mentions_field="markables", members_field="markable_ids")
conll2012 = Conll2012Export(NOTE_CHAINS)
