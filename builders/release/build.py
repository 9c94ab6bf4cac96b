"""One run's build: its corpus, builder, record features, context and staging folder, the stage lines it prints,
the rejects it keeps (rejects.jsonl) and what its readers changed (reader-changes.jsonl)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from datasets import Features

from clinical_corpora.builders.contract.base import BuildContext, Builder, Reject
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.reader_changes import ReaderChange
from clinical_corpora.core.release_records import MAX_LINE, ReaderChangeLine, RejectLine, write_json_lines


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


def write_reader_changes(path: Path, changes: list[ReaderChange]) -> None:
    """reader-changes.jsonl: one typed line per line of the input read otherwise than written."""
    lines = [ReaderChangeLine(kind=c.kind, where=_cut(c.location), what=_cut(c.message)) for c in changes]
    write_json_lines(path, lines)


def _cut(text: str) -> str:
    """A reject's text cut to what rejects.jsonl holds (its reasons name a record and quote at most a short
    excerpt; a longer one is cut, saying so)."""
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 1] + "…"
