"""What ``clincorp view`` shows of a SNOMED CT entity-linking note: each span with its concept id, fully specified
name and hierarchy."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from clinical_corpora.builders.contract.display import DocumentDisplay, Mark, Passage, RowReader
from clinical_corpora.corpora.snomed_el.records import HIERARCHY_NAMES


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
