"""The tiny corpus's own commands: a span scorer and a TSV exporter, registered by its plugin module."""

from __future__ import annotations

import argparse
from pathlib import Path

from tests.tiny_corpus.builder import read_spans, released_spans


class SpanScore:
    """Exact-span F1 of predicted spans.tsv against gold spans.tsv."""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("gold", type=Path)
        parser.add_argument("pred", type=Path)

    def run(self, args: argparse.Namespace) -> int:
        gold, pred = (
            {(note, s, e, label) for note, items in read_spans(path).items() for s, e, label, _ in items}
            for path in (args.gold, args.pred)
        )
        shared = len(gold & pred)
        print(f"span_f1 {2 * shared / (len(gold) + len(pred)):.4f}")
        return 0


class TsvExport:
    """A tiny release as the raw notes.tsv and spans.tsv it was built from."""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        """No options beyond the release and --out."""

    def run(self, args: argparse.Namespace) -> int:
        view = args.release.view  # a GivenRelease: the command line opened it through the door
        args.out.mkdir(parents=True, exist_ok=True)
        notes = ["note_id\tsplit\ttext\n"] + [
            f"{row['id']}\t{split}\t{escape_newlines(row['text'])}\n" for split, row in view.rows("notes")
        ]
        spans = ["note_id\tstart\tend\tlabel\n"] + [
            f"{note}\t{start}\t{end}\t{label}\n" for note, _, start, end, label in released_spans(view)
        ]
        (args.out / "notes.tsv").write_text("".join(notes), encoding="utf-8")
        (args.out / "spans.tsv").write_text("".join(spans), encoding="utf-8")
        return 0


def escape_newlines(text: str) -> str:
    return text.replace("\n", "\\n")


span_score = SpanScore()
tsv_export = TsvExport()
