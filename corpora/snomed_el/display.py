"""What ``clincorp view`` shows of a SNOMED CT entity-linking note: each span with its concept id, fully specified
name and hierarchy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.base import BuildContext
from clinical_corpora.builders.contract.display import DocumentDisplay, Mark, Passage, RowReader
from clinical_corpora.builders.sources.annotators import annotator_folders
from clinical_corpora.builders.sources.mimic.notes import read_span_annotations
from clinical_corpora.core.errors import SourceError
from clinical_corpora.corpora.snomed_el.agreement import RELEASED_ANNOTATOR
from clinical_corpora.corpora.snomed_el.records import HIERARCHY_NAMES

Linked = tuple[int, int, int]
"""(start, end, concept id) of one span."""


def snomed_el_displays(rows: RowReader) -> Iterator[DocumentDisplay]:
    for split, note in rows("snomed_el", None):
        yield note_display(split, note)


def note_display(split: str, note: dict[str, Any]) -> DocumentDisplay:
    marks = []
    for number, span in enumerate(note["annotations"]):
        hierarchy = HIERARCHY_NAMES.get(span["hierarchy"], span["hierarchy"])
        facts = [
            ("concept id", str(span["concept_id"])),
            ("FSN", span["fsn"] if span["fsn"] is not None else "(withheld)"),
            ("hierarchy", hierarchy),
        ]
        label = span["fsn"] if span["fsn"] is not None else f"SCTID {span['concept_id']}"
        marks.append(Mark(f"a{number}", "concept", label, [(span["start"], span["end"])], facts, group=hierarchy))
    return DocumentDisplay(
        id=note["note_id"],
        split=split,
        labels=sorted({HIERARCHY_NAMES.get(span["hierarchy"], span["hierarchy"]) for span in note["annotations"]}),
        passages=[Passage("note", "Discharge note", note["text"], marks)],
        records=[("snomed_el", note["note_id"])],
    )


def annotator_displays(ctx: BuildContext, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
    """The spans of each annotator file of the ``annotators`` source beside the released ones (annotator
    ``released``), on the notes the files annotate, labelled by concept id."""
    if not ctx.has_source("annotators"):
        return {}
    files = annotator_folders(ctx.source("annotators"), ".csv")
    linked: dict[str, dict[str, list[Linked]]] = {}
    for name, path in files.items():
        for span in read_span_annotations(path):
            linked.setdefault(name, {}).setdefault(span.note_id, []).append((span.start, span.end, span.concept_id))
    annotated = {note for notes in linked.values() for note in notes}
    released = linked.setdefault(RELEASED_ANNOTATOR, {})
    for _, note in rows("snomed_el", ["note_id", "annotations"]):
        if note["note_id"] in annotated:
            released[note["note_id"]] = [(s["start"], s["end"], s["concept_id"]) for s in note["annotations"]]
    return {
        name: {note: _linked_display(note, spans) for note, spans in notes.items()} for name, notes in linked.items()
    }


def prediction_displays(predictions: Path, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
    """The released spans (``gold``) and those of a ``note_id,start,end,concept_id`` CSV (``system``, the
    format ``clincorp score snomed`` reads) of every released note, labelled by concept id; a predicted note
    the release does not hold is an error naming it."""
    predicted: dict[str, list[Linked]] = {}
    for span in read_span_annotations(predictions):
        predicted.setdefault(span.note_id, []).append((span.start, span.end, span.concept_id))
    gold = {
        note["note_id"]: [(s["start"], s["end"], s["concept_id"]) for s in note["annotations"]]
        for _, note in rows("snomed_el", ["note_id", "annotations"])
    }
    unknown = sorted(set(predicted) - set(gold))
    if unknown:
        raise SourceError(
            predictions, f"predicts spans of {len(unknown)} note(s) the release does not hold: {', '.join(unknown[:5])}"
        )
    return {
        "gold": {note: _linked_display(note, spans) for note, spans in gold.items()},
        "system": {note: _linked_display(note, predicted.get(note, [])) for note in gold},
    }


def _linked_display(note: str, spans: list[Linked]) -> DocumentDisplay:
    marks = [
        Mark(f"a{n}", "concept", f"SCTID {concept}", [(start, end)]) for n, (start, end, concept) in enumerate(spans)
    ]
    return DocumentDisplay(note, "", [], [Passage("note", "Discharge note", None, marks)])
