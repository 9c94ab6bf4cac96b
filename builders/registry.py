"""Corpus-specific CLI commands, registered by name instead of if-chains.

A scorer module (``clincorp score <name>``) and an exporter module (``clincorp export --format <name>``)
each expose ``configure(parser: argparse.ArgumentParser) -> None`` and ``run(args) -> int``.
"""

from __future__ import annotations

SCORERS: dict[str, str] = {}
EXPORTERS: dict[str, str] = {}
