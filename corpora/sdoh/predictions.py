"""A system's SDOH events drawn against the gold in ``clincorp view --predictions``: a BRAT folder as ``clincorp
score sdoh`` reads it with a release as its gold (``{split}/{source}/<doc>.ann``, the layout ``clincorp baseline
sdoh`` and ``clincorp export brat`` write), its events read as the n2c2 2022 scorer reads them. Triggers are
labelled by event type and arguments by role and subtype, on both sides alike; text-bounds no event uses are left
out, as the scorer leaves them out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.display import DocumentDisplay, RowReader
from clinical_corpora.builders.sources.brat.annotations import TextBound
from clinical_corpora.builders.sources.brat.folder import ANN_SUFFIX, TEXT_SUFFIX, brat_documents
from clinical_corpora.builders.sources.brat.standoff import read_brat_document
from clinical_corpora.builders.sources.discovery import Document
from clinical_corpora.builders.sources.shac import shac_annotations
from clinical_corpora.core.errors import SourceError
from clinical_corpora.corpora.sdoh.display import note_display

NO_SUBTYPE = "N/A"
"""The release's subtype of an argument without a value."""


def prediction_displays(predictions: Path, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
    """The gold and the predicted events of every released note (a note the folder does not hold has no predicted
    event); a document the release does not hold, or whose text is not the note's, is an error naming it."""
    if not predictions.is_dir():
        raise SourceError(
            predictions,
            "expected a folder of BRAT files at the release's {split}/{source}/<doc>.ann paths, as clincorp score "
            "sdoh reads with a release as its gold (clincorp baseline sdoh writes one)",
        )
    documents = {document.id: document for document in brat_documents(predictions, quiet=True)}
    gold: dict[str, DocumentDisplay] = {}
    system: dict[str, DocumentDisplay] = {}
    for split, note in rows("sdoh", None):
        gold[note["id"]] = _events_only(note_display(split, note))
        predicted = {**note, "events": _events(note, documents.pop(note["id"], None))}
        system[note["id"]] = _events_only(note_display(split, predicted))
    if documents:
        unknown = ", ".join(sorted(documents)[:5])
        raise SourceError(predictions, f"holds {len(documents)} document(s) the release does not: {unknown}")
    return {"gold": gold, "system": system}


def _events_only(display: DocumentDisplay) -> DocumentDisplay:
    for passage in display.passages:
        passage.marks = [mark for mark in passage.marks if mark.kind != "textbound"]
    display.listings = []
    return display


def _events(note: dict[str, Any], document: Document | None) -> list[dict[str, Any]]:
    """The events of a predicted document, shaped as the release's (no document: none)."""
    if document is None or ANN_SUFFIX not in document.paths:
        return []
    text, brat = read_brat_document(document, text_without_ann=True)
    where = document.paths[ANN_SUFFIX]
    if TEXT_SUFFIX in document.paths and note["text"] is not None and text != note["text"]:
        raise SourceError(document.paths[TEXT_SUFFIX], f"is not the text of note {note['id']} in the release")
    annotations = shac_annotations(brat, where)
    bounds = annotations.textbounds
    return [
        {
            "id": event.id,
            "type": event.type,
            "trigger": _bound(bounds[event.trigger].textbound),
            "arguments": [
                {
                    **_bound(bounds[target].textbound),
                    "role": role,
                    "type": bounds[target].textbound.type,
                    "subtype": bounds[target].subtype or NO_SUBTYPE,
                }
                for role, target in event.arguments
            ],
        }
        for event in annotations.events
    ]


def _bound(bound: TextBound) -> dict[str, Any]:
    fragments = [{"start": start, "end": end} for start, end in bound.fragments] if len(bound.fragments) > 1 else []
    return {"id": bound.id, "start": bound.start, "end": bound.end, "fragments": fragments}
