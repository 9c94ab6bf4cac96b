"""Write the SNOMED CT Entity Linking Challenge's CSV files: the ``note_id,text`` notes file and the
``note_id,start,end,concept_id`` annotations file (RFC 4180, UTF-8), as ``builders.sources.mimic.notes`` reads them."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path

from clinical_corpora.builders.sources.mimic.notes import CHALLENGE_NOTE_COLUMNS, SPAN_ANNOTATION_COLUMNS
from clinical_corpora.core.annotations import SpanAnnotation


def write_challenge_notes(path: Path, notes: Iterable[tuple[str, str]]) -> int:
    """Write (note_id, text) rows; returns how many. Texts are quoted, line endings untouched."""
    return _write(path, CHALLENGE_NOTE_COLUMNS, notes)


def write_span_annotations(path: Path, annotations: Iterable[SpanAnnotation]) -> int:
    """Write annotations in the given order; returns how many."""
    return _write(path, SPAN_ANNOTATION_COLUMNS, ((a.note_id, a.start, a.end, a.concept_id) for a in annotations))


def _write(path: Path, header: tuple[str, ...], rows: Iterable[tuple[object, ...]]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow(row)
            count += 1
    return count
