"""A streaming builder for the release benchmark: shards of whole lines, hooks over bounded batches.

Raw format: ``notes.tsv`` (header ``note_id  split  text  spans``; spans ``start:end:label`` joined by
commas) and, for agreement, annotator B's ``spans.tsv`` (header ``note_id  spans``, one line per note in
the release's order: split by split, sorted by name, notes in the notes file's order within a split).
Nothing is indexed in memory: workers read their byte ranges, and statistics and agreement read the
written release one batch at a time. ``sample/`` holds a dozen notes the benchmark's generator wrote.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.compute as pc

from clinical_corpora.builders.contract.base import AgreementReport, BuildContext, Builder, Row
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.sources.line_chunks import LineChunk, chunk_lines, line_chunks
from clinical_corpora.core.card import CardSection, Table
from clinical_corpora.core.errors import SourceError
from clinical_corpora.schemas.spans import Span, TextRecord

Label = Literal["problem", "test", "treatment"]
NOTES_HEADER = b"note_id\tsplit\ttext\tspans"
SPANS_HEADER = "note_id\tspans"
BATCH_ROWS = 10_000


class LabelledSpan(Span):
    label: Label


class Note(TextRecord):
    id: str
    text: str
    spans: list[LabelledSpan]


def parse_spans(field: str, text: str) -> list[dict[str, object]]:
    spans = []
    for item in filter(None, field.split(",")):
        start, end, label = item.split(":")
        spans.append({"start": int(start), "end": int(end), "text": text[int(start) : int(end)], "label": label})
    return spans


class StreamingBuilder(Builder):
    VERSION = "1.0.0"
    CONFIGS = {"notes": Note}

    def shards(self, ctx: BuildContext) -> dict[str, list[LineChunk]]:
        notes = ctx.source("notes")
        with notes.open("rb") as handle:
            if handle.readline().rstrip(b"\r\n") != NOTES_HEADER:
                raise SourceError(notes, "expected the header note_id, split, text, spans", line=1)
        return {"chunks": line_chunks(notes, skip_lines=1)}

    def generate_shard(self, ctx: BuildContext, chunks: Sequence[LineChunk] = ()) -> Iterator[Row]:
        notes = ctx.source("notes")
        for chunk in chunks:
            for line, raw in chunk_lines(notes, chunk):
                with ctx.record(f"{notes}:{line}"):
                    try:
                        note_id, split, text, spans = raw.decode("utf-8").split("\t")
                        parsed = parse_spans(spans, text)
                    except ValueError:
                        message = "expected note_id, split, text and start:end:label spans"
                        raise SourceError(notes, message, line=line) from None
                    yield Row("notes", split, Note.model_validate({"id": note_id, "text": text, "spans": parsed}))

    def agreement(self, ctx: BuildContext, release: ReleaseView) -> AgreementReport | None:
        """Exact-span F1 of the release against annotator B, note batch by note batch."""
        if not ctx.has_source("second_annotator"):
            return None
        path = ctx.source("second_annotator")
        names = release.features("notes")["spans"].feature["label"].names
        first = second = shared = 0
        with path.open(encoding="utf-8") as handle:
            if handle.readline().rstrip("\n") != SPANS_HEADER:
                raise SourceError(path, "expected the header note_id, spans", line=1)
            for split in release.splits("notes"):
                for batch in release.batches("notes", split, columns=["id", "spans"], batch_size=BATCH_ROWS):
                    ours = released_keys(batch, names)
                    theirs = annotator_keys(path, list(islice(handle, batch.num_rows)), batch.column("id"))
                    first, second = first + len(ours), second + len(theirs)
                    shared += pc.sum(pc.is_in(ours, value_set=theirs)).as_py() or 0
        f1 = 2 * shared / (first + second) if first or second else 1.0
        table = Table(["annotator A spans", "annotator B spans", "shared", "F1"], [[first, second, shared, f1]])
        return AgreementReport({"span_f1": f1}, [CardSection("Agreement", table=table)])

    def statistics(self, release: ReleaseView) -> list[CardSection]:
        names = release.features("notes")["spans"].feature["label"].names
        labels: Counter[tuple[str, str]] = Counter()
        for split in release.splits("notes"):
            for batch in release.batches("notes", split, columns=["spans"]):
                counts = pc.value_counts(pc.list_flatten(batch.column("spans")).field("label"))
                for item in counts.to_pylist():
                    labels[split, names[item["values"]]] += item["counts"]
        rows = [[split, label, count] for (split, label), count in sorted(labels.items())]
        return [CardSection("Spans by label", table=Table(["split", "label", "spans"], rows))]


def released_keys(batch: pa.RecordBatch, names: list[str]) -> pa.Array:
    """``note|start:end:label`` of every span of a batch of released notes."""
    spans = batch.column("spans")
    items = pc.list_flatten(spans)
    labels = pa.array(names).take(items.field("label"))
    ids = batch.column("id").take(pc.list_parent_indices(spans))
    return pc.binary_join_element_wise(
        ids, pc.cast(items.field("start"), pa.string()), pc.cast(items.field("end"), pa.string()), labels, ":"
    )


def annotator_keys(path: Path, lines: list[str], ids: pa.Array) -> pa.Array:
    """The same keys for annotator B's lines of the same notes; an error when B's notes are not these."""
    rows = pc.split_pattern(pa.array([line.rstrip("\n") for line in lines]), "\t", max_splits=1)
    notes, spans = pc.list_element(rows, 0), pc.list_element(rows, 1)
    if not notes.equals(ids):
        raise SourceError(path, "expected one line per released note, in the release's order")
    items = pc.split_pattern(spans, ",")
    flat = pc.list_flatten(items)
    keys = pc.binary_join_element_wise(notes.take(pc.list_parent_indices(items)), flat, ":")
    return keys.filter(pc.not_equal(flat, ""))
