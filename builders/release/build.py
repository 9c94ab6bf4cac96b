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
from clinical_corpora.core.release_manifest import cut_text
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
    lines = [
        RejectLine(where=cut_text(r.where, MAX_LINE), kind=r.kind, reason=cut_text(r.reason, MAX_LINE)) for r in rejects
    ]
    write_json_lines(path, lines)


def write_reader_changes(path: Path, changes: list[ReaderChange]) -> None:
    """reader-changes.jsonl: one typed line per line of the input read otherwise than written."""
    lines = [
        ReaderChangeLine(kind=c.kind, where=cut_text(c.location, MAX_LINE), what=cut_text(c.message, MAX_LINE))
        for c in changes
    ]
    write_json_lines(path, lines)
