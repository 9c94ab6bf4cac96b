"""Corpus-specific CLI commands, registered by name instead of if-chains.

``clincorp score NAME …`` and ``clincorp export FORMAT …`` import the named module only when used; the
module exposes ``configure(parser: argparse.ArgumentParser) -> None`` and ``run(args) -> int``.
"""

from __future__ import annotations

SCORERS: dict[str, str] = {
    "sdoh": "clinical_corpora.corpora.sdoh.commands",
    "snomed": "clinical_corpora.corpora.snomed_el.commands",
    "coref": "clinical_corpora.corpora.rad_coref.commands",
    "clicr": "clinical_corpora.corpora.clicr.commands",
}
EXPORTERS: dict[str, str] = {
    "conll2012": "clinical_corpora.builders.exporters.conll2012",
    "clicr-json": "clinical_corpora.corpora.clicr.clicr_json",
}
