"""Corpus-specific CLI commands, registered by name instead of if-chains.

``clincorp score NAME …`` and ``clincorp export FORMAT …`` import the named module only when used; the
module exposes ``configure(parser: argparse.ArgumentParser) -> None`` and ``run(args) -> int``.
"""

from __future__ import annotations

SCORERS: dict[str, str] = {
    "sdoh": "validation.metrics.sdoh_cli",
    "snomed": "validation.metrics.iou_cli",
    "coref": "validation.metrics.coref_cli",
    "clicr": "validation.metrics.clicr_cli",
}
EXPORTERS: dict[str, str] = {
    "conll2012": "builders.exporters.conll2012",
    "clicr-json": "builders.exporters.clicr_json",
}
