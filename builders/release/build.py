"""One run's build: its corpus, builder, record features, context and staging folder, the stage lines it prints,
and the rejects it keeps (rejects.jsonl)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from datasets import Features

from clinical_corpora.builders.contract.base import BuildContext, Builder, Reject
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.release_records import MAX_LINE, RejectLine, write_json_lines


@dataclass
class Build:
    """One run's corpus (with its ``--gates`` overlay), builder, record features, build context and staging."""

    manifest: CorpusManifest
    builder: Builder
    features: dict[str, Features]
    ctx: BuildContext
    staging: Path

    def stage(self, what: str) -> None:
        stage_line(self.manifest.name, what)


def stage_line(corpus: str, what: str) -> None:
    """One line on stderr per stage without a progress bar, so a long run never goes quiet."""
    print(f"{corpus}: {what}", file=sys.stderr, flush=True)


def write_rejects(path: Path, rejects: list[Reject]) -> None:
    """rejects.jsonl: one typed line per record or annotation kept out, with why."""
    lines = [RejectLine(where=_cut(r.where), kind=r.kind, reason=_cut(r.reason)) for r in rejects]
    write_json_lines(path, lines)


def _cut(text: str) -> str:
    """A reject's text cut to what rejects.jsonl holds (its reasons name a record and quote at most a short
    excerpt; a longer one is cut, saying so)."""
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 1] + "…"
