"""A tiny corpus that proves the pipeline: notes in a TSV, problem/test/treatment spans in another.

Raw format: ``notes.tsv`` (header ``note_id  split  text``, text with ``\\n`` escaped) and
``spans.tsv`` (header ``note_id  start  end  label``); an optional second annotator's ``spans.tsv``
gives the agreement measure ``span_f1`` (exact-span F1).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import pyarrow.compute as pc

from clinical_corpora.builders.contract.base import AgreementReport, BuildContext, Builder, Row
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.sources.line_chunks import LineChunk, chunk_lines, line_chunks
from clinical_corpora.core.card import CardSection, Table
from clinical_corpora.core.errors import SourceError
from clinical_corpora.schemas.spans import Span, TextRecord

Label = Literal["problem", "test", "treatment"]


class LabelledSpan(Span):
    label: Label


class Note(TextRecord):
    id: str
    text: str
    spans: list[LabelledSpan]


def read_spans(path: Path) -> dict[str, list[tuple[int, int, str, int]]]:
    """note_id → (start, end, label, line) from a spans.tsv."""
    spans: dict[str, list[tuple[int, int, str, int]]] = defaultdict(list)
    with path.open(encoding="utf-8") as handle:
        if handle.readline().rstrip("\n").split("\t") != ["note_id", "start", "end", "label"]:
            raise SourceError(path, "expected the header note_id, start, end, label", line=1)
        for line, text in enumerate(handle, start=2):
            fields = text.rstrip("\n").split("\t")
            try:
                note_id, start, end, label = fields
                spans[note_id].append((int(start), int(end), label, line))
            except ValueError:
                raise SourceError(
                    path, f"expected note_id, start, end, label with integer offsets, got {fields}", line=line
                ) from None
    return spans


class TinyBuilder(Builder):
    CONFIGS = {"notes": Note}
    RECORD_CONFIG = "notes"

    def shards(self, ctx: BuildContext) -> dict[str, list[LineChunk]]:
        """One shard per note line (a real corpus would cut larger chunks)."""
        return {"chunks": line_chunks(ctx.source("notes"), skip_lines=1, chunk_bytes=1)}

    def generate_shard(self, ctx: BuildContext, chunks: Sequence[LineChunk] = ()) -> Iterator[Row]:
        notes = ctx.source("notes")
        spans = read_spans(ctx.source("spans"))
        for chunk in chunks:
            for line, raw in chunk_lines(notes, chunk):
                note_id, split, text = raw.decode("utf-8").rstrip("\r").split("\t")
                with ctx.record(f"{notes}:{line}"):
                    text = text.replace("\\n", "\n")
                    yield Row(
                        "notes",
                        split,
                        Note.model_validate(
                            {
                                "id": note_id,
                                "text": text,
                                "spans": [
                                    {"start": s, "end": e, "text": text[s:e] if e <= len(text) else "", "label": label}
                                    for s, e, label, _ in spans.get(note_id, [])
                                ],
                            }
                        ),
                    )

    def source_documents(self, ctx: BuildContext, config: str, row: Mapping[str, Any]) -> list[str]:
        return [f"notes:{row['id']}"]

    def read_documents(self, ctx: BuildContext, locators: Collection[str]) -> Iterator[tuple[str, str]]:
        with ctx.source("notes").open(encoding="utf-8", newline="") as handle:
            next(handle)
            for raw in handle:
                note_id, _, text = raw.rstrip("\n").rstrip("\r").split("\t")
                yield f"notes:{note_id}", text.replace("\\n", "\n")

    def agreement(self, ctx: BuildContext, release: ReleaseView) -> AgreementReport | None:
        if not ctx.has_source("second_annotator"):
            return None
        first = {(note, start, end, label) for note, _, start, end, label in released_spans(release)}
        second = {
            (n, s, e, label)
            for n, items in read_spans(ctx.source("second_annotator")).items()
            for s, e, label, _ in items
        }
        both = len(first & second)
        f1 = 2 * both / (len(first) + len(second)) if first or second else 1.0
        table = Table(["annotator A spans", "annotator B spans", "shared", "F1"], [[len(first), len(second), both, f1]])
        return AgreementReport({"span_f1": f1}, [CardSection("Agreement", table=table)])

    def statistics(self, release: ReleaseView) -> list[CardSection]:
        labels = Counter((split, label) for _, split, _, _, label in released_spans(release))
        rows = [[split, label, count] for (split, label), count in sorted(labels.items())]
        values = {"spans": float(sum(labels.values()))}
        for (_, label), count in labels.items():
            values[f"spans.{label}"] = values.get(f"spans.{label}", 0.0) + count
        table = Table(["split", "label", "spans"], rows)
        return [CardSection("Spans by label", table=table, values=values, counted=("spans.",))]


def released_spans(release: ReleaseView) -> Iterator[tuple[str, str, int, int, str]]:
    """(note_id, split, start, end, label) of every released span, read column-wise from Arrow."""
    table = release.arrow("notes", columns=["id", "spans"])
    spans = table.column("spans").combine_chunks()
    parents = pc.list_parent_indices(spans)
    items = pc.list_flatten(spans)
    names = release.features("notes")["spans"].feature["label"].names
    return zip(
        table.column("id").take(parents).to_pylist(),
        release.split_labels("notes").take(parents).to_pylist(),
        items.field("start").to_pylist(),
        items.field("end").to_pylist(),
        (names[i] for i in items.field("label").to_pylist()),
        strict=True,
    )
