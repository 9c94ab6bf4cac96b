"""Streaming readers for MIMIC note tables and the SNOMED CT challenge's span annotations.

Tables read here (RFC 4180 CSV, plain or gzip, text fields quoted and spanning many lines):

- MIMIC-IV-Note ``discharge.csv.gz`` / ``radiology.csv.gz``
  (``note_id,subject_id,hadm_id,note_type,note_seq,charttime,storetime,text``);
- the SNOMED CT Entity Linking Challenge's ``mimic-iv_notes_training_set.csv`` (``note_id,text``);
- MIMIC-III ``NOTEEVENTS.csv(.gz)`` (``ROW_ID,SUBJECT_ID,...,ISERROR,TEXT``, header quoted, as
  in the full release; ``row_id,subject_id,...`` in the demo release);
- the challenge's ``train_annotations.csv`` (``note_id,start,end,concept_id``) and submissions.

Column names are matched whatever their case (and a UTF-8 byte order mark is ignored), quoted or
not. How a file is opened, and the error for a file that cannot be read: :mod:`builders.sources.mimic.csv_files`;
how a note table streams: :mod:`builders.sources.mimic.table_scan`.
"""

from __future__ import annotations

import csv
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from clinical_corpora.builders.sources.mimic.csv_files import (
    CsvRow,
    encoding_error,
    open_text,
    read_header,
    same_columns,
    truncation_error,
    without_bom,
)
from clinical_corpora.builders.sources.mimic.table_scan import DEFAULT_BLOCK_SIZE, TableLayout, scan_table
from clinical_corpora.core.annotations import SpanAnnotation
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.text_encoding import UTF8

MIMIC_IV_NOTE_COLUMNS = (
    "note_id",
    "subject_id",
    "hadm_id",
    "note_type",
    "note_seq",
    "charttime",
    "storetime",
    "text",
)
CHALLENGE_NOTE_COLUMNS = ("note_id", "text")
NOTEEVENTS_COLUMNS = (
    "ROW_ID",
    "SUBJECT_ID",
    "HADM_ID",
    "CHARTDATE",
    "CHARTTIME",
    "STORETIME",
    "CATEGORY",
    "DESCRIPTION",
    "CGID",
    "ISERROR",
    "TEXT",
)
SPAN_ANNOTATION_COLUMNS = ("note_id", "start", "end", "concept_id")


@dataclass(frozen=True, slots=True)
class MimicIvNote:
    """One row of a MIMIC-IV-Note table (discharge or radiology)."""

    note_id: str
    subject_id: int
    hadm_id: int | None
    note_type: str
    note_seq: int
    charttime: datetime | None
    storetime: datetime | None
    text: str
    line: int


@dataclass(frozen=True, slots=True)
class ChallengeNote:
    """One row of the challenge's ``note_id,text`` notes CSV."""

    note_id: str
    text: str
    line: int


@dataclass(frozen=True, slots=True)
class NoteEvent:
    """One row of MIMIC-III ``NOTEEVENTS``."""

    row_id: int
    subject_id: int
    hadm_id: int | None
    chartdate: date | None
    charttime: datetime | None
    storetime: datetime | None
    category: str
    description: str
    cgid: int | None
    iserror: bool
    text: str
    line: int


def _mimic_iv_note(row: CsvRow) -> MimicIvNote:
    return MimicIvNote(
        note_id=row.text("note_id"),
        subject_id=row.integer("subject_id"),
        hadm_id=row.optional_integer("hadm_id"),
        note_type=row.text("note_type"),
        note_seq=row.integer("note_seq"),
        charttime=row.optional_datetime("charttime"),
        storetime=row.optional_datetime("storetime"),
        text=row.text("text"),
        line=row.line,
    )


def _challenge_note(row: CsvRow) -> ChallengeNote:
    return ChallengeNote(note_id=row.text("note_id"), text=row.text("text"), line=row.line)


def _note_event(row: CsvRow) -> NoteEvent:
    return NoteEvent(
        row_id=row.integer("ROW_ID"),
        subject_id=row.integer("SUBJECT_ID"),
        hadm_id=row.optional_integer("HADM_ID"),
        chartdate=row.optional_date("CHARTDATE"),
        charttime=row.optional_datetime("CHARTTIME"),
        storetime=row.optional_datetime("STORETIME"),
        category=row.text("CATEGORY"),
        description=row.text("DESCRIPTION"),
        cgid=row.optional_integer("CGID"),
        iserror=row.flag("ISERROR"),
        text=row.text("TEXT"),
        line=row.line,
    )


_MIMIC_IV_NOTES = TableLayout(MIMIC_IV_NOTE_COLUMNS, "note_id", _mimic_iv_note)
_CHALLENGE_NOTES = TableLayout(CHALLENGE_NOTE_COLUMNS, "note_id", _challenge_note)
_NOTEEVENTS = TableLayout(NOTEEVENTS_COLUMNS, "ROW_ID", _note_event)


def iter_mimic_iv_notes(
    path: str | Path,
    note_ids: Collection[str] | None = None,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
    encoding: str = UTF8,
) -> Iterator[MimicIvNote]:
    """Stream a MIMIC-IV-Note table (``discharge.csv.gz``, ``radiology.csv.gz``).

    With ``note_ids``, only those notes are yielded (in file order) and reading stops once all
    were seen; the caller compares what it got with what it asked for.
    """
    return scan_table(Path(path), _MIMIC_IV_NOTES, note_ids, {}, block_size, encoding)


def iter_challenge_notes(
    path: str | Path,
    note_ids: Collection[str] | None = None,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
    encoding: str = UTF8,
) -> Iterator[ChallengeNote]:
    """Stream the challenge's ``note_id,text`` CSV (``mimic-iv_notes_training_set.csv``)."""
    return scan_table(Path(path), _CHALLENGE_NOTES, note_ids, {}, block_size, encoding)


def iter_notes(
    path: str | Path,
    note_ids: Collection[str] | None = None,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
    encoding: str = UTF8,
) -> Iterator[MimicIvNote | ChallengeNote]:
    """Stream either notes layout the challenge accepts, chosen by the file's header (``encoding``: the user's
    copy's, when not UTF-8)."""
    path = Path(path)
    header = read_header(path, encoding)
    if same_columns(header, CHALLENGE_NOTE_COLUMNS):
        return iter_challenge_notes(path, note_ids, block_size=block_size, encoding=encoding)
    if same_columns(header, MIMIC_IV_NOTE_COLUMNS):
        return iter_mimic_iv_notes(path, note_ids, block_size=block_size, encoding=encoding)
    raise SourceError(
        path,
        f"expected the columns {','.join(MIMIC_IV_NOTE_COLUMNS)} (MIMIC-IV-Note) or "
        f"{','.join(CHALLENGE_NOTE_COLUMNS)} (challenge notes), found {','.join(header)}",
        line=1,
    )


def iter_noteevents(
    path: str | Path,
    row_ids: Collection[int] | None = None,
    categories: Collection[str] | None = None,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
    encoding: str = UTF8,
) -> Iterator[NoteEvent]:
    """Stream MIMIC-III ``NOTEEVENTS.csv(.gz)``, optionally only some ROW_IDs and/or CATEGORYs.

    Reading stops once every wanted ROW_ID was seen (whatever its category). ``encoding``: the user's copy's,
    when not UTF-8.
    """
    wanted = None if row_ids is None else [str(row_id) for row_id in row_ids]
    filters = {} if categories is None else {"CATEGORY": categories}
    return scan_table(Path(path), _NOTEEVENTS, wanted, filters, block_size, encoding)


def read_span_annotations(path: str | Path) -> list[SpanAnnotation]:
    """Read a ``note_id,start,end,concept_id`` CSV (gold annotations or a submission).

    Offsets are 0-based character offsets, end exclusive; ``0 <= start < end`` is required.
    """
    path = Path(path)
    annotations = []
    with open_text(path) as stream:
        reader = csv.reader(stream, strict=True)
        try:
            header = next(reader, None)
            if header is None or not same_columns(without_bom(header), SPAN_ANNOTATION_COLUMNS):
                raise SourceError(
                    path, f"expected the header {','.join(SPAN_ANNOTATION_COLUMNS)}, found {header}", line=1
                )
            for fields in reader:
                annotations.append(_span_annotation(path, reader.line_num, fields))
        except csv.Error as error:
            raise SourceError(path, f"malformed CSV: {error}", line=reader.line_num) from None
        except UnicodeDecodeError:
            raise encoding_error(path) from None
        except (OSError, EOFError):
            raise truncation_error(path) from None
    return annotations


def _span_annotation(path: Path, line: int, fields: list[str]) -> SpanAnnotation:
    if len(fields) != len(SPAN_ANNOTATION_COLUMNS):
        raise SourceError(
            path,
            f"expected {len(SPAN_ANNOTATION_COLUMNS)} fields ({','.join(SPAN_ANNOTATION_COLUMNS)}), "
            f"found {len(fields)}",
            line=line,
        )
    note_id, start_text, end_text, concept_text = fields
    row = CsvRow(path, line, {"start": start_text, "end": end_text, "concept_id": concept_text})
    start, end, concept_id = row.integer("start"), row.integer("end"), row.integer("concept_id")
    if note_id == "":
        raise SourceError(path, "note_id is empty", line=line)
    if not 0 <= start < end:
        raise SourceError(path, f"expected 0 <= start < end, found start={start} end={end}", line=line)
    return SpanAnnotation(note_id=note_id, start=start, end=end, concept_id=concept_id, line=line)


__all__ = [
    "CHALLENGE_NOTE_COLUMNS",
    "MIMIC_IV_NOTE_COLUMNS",
    "NOTEEVENTS_COLUMNS",
    "SPAN_ANNOTATION_COLUMNS",
    "ChallengeNote",
    "MimicIvNote",
    "NoteEvent",
    "SpanAnnotation",
    "iter_challenge_notes",
    "iter_mimic_iv_notes",
    "iter_noteevents",
    "iter_notes",
    "read_span_annotations",
]
