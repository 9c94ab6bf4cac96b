"""Streaming readers for MIMIC note tables and the SNOMED CT challenge's span annotations.

Tables read here (RFC 4180 CSV, plain or gzip, text fields quoted and spanning many lines):

- MIMIC-IV-Note ``discharge.csv.gz`` / ``radiology.csv.gz``
  (``note_id,subject_id,hadm_id,note_type,note_seq,charttime,storetime,text``);
- the SNOMED CT Entity Linking Challenge's ``mimic-iv_notes_training_set.csv`` (``note_id,text``);
- MIMIC-III ``NOTEEVENTS.csv(.gz)`` (``ROW_ID,SUBJECT_ID,...,ISERROR,TEXT``, header quoted, as
  in the full release; ``row_id,subject_id,...`` in the demo release);
- the challenge's ``train_annotations.csv`` (``note_id,start,end,concept_id``) and submissions.

Column names are matched whatever their case (and a UTF-8 byte order mark is ignored), quoted or
not. Files are UTF-8 (MIMIC is): a byte that is not UTF-8 is a SourceError naming the line and
the byte's offset in the file, never a replaced character. A gzip file that ends early (an
interrupted download) is a SourceError saying how many bytes and lines were read.

Note tables stream: gzip is inflated by ISA-L in a background thread, the bytes are cut into
blocks of whole rows (a row ends at a newline after an even number of quotes, as RFC 4180 quoting
guarantees), each block is parsed by pyarrow's multithreaded CSV parser, rows are selected with
``pyarrow.compute.is_in`` and only the selected ones become Python objects. Memory is bounded by
the block size whatever the file's size, and reading stops once every wanted id was seen. Each
record carries the physical line where it starts. pyarrow is only handed Arrow-owned buffers,
never a Python file object (its threads calling back into Python can crash at interpreter exit).
"""

from __future__ import annotations

import codecs
import csv
import zlib
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import IO, BinaryIO, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from isal import igzip, igzip_threaded

from clinical_corpora.core.annotations import SpanAnnotation
from clinical_corpora.core.errors import SourceError

DEFAULT_BLOCK_SIZE = 8 << 20
"""Bytes of uncompressed CSV read per block (memory is a small multiple of it)."""

_MAX_ROW_BYTES = 256 << 20
"""A row longer than this means the quoting is broken (MIMIC notes are at most tens of kilobytes)."""

_GZIP_MAGIC = b"\x1f\x8b"

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


Record = TypeVar("Record")
Parsed = TypeVar("Parsed")


class _Row:
    """The raw string fields of one selected CSV row, with typed accessors raising SourceError."""

    __slots__ = ("line", "path", "values")

    def __init__(self, path: Path, line: int, values: dict[str, str]) -> None:
        self.path = path
        self.line = line
        self.values = values

    def text(self, column: str) -> str:
        return self.values[column]

    def optional(self, column: str, parse: Callable[[str], Parsed], expected: str) -> Parsed | None:
        """``parse`` of the field, ``None`` when it is empty."""
        value = self.values[column]
        if value == "":
            return None
        try:
            return parse(value)
        except ValueError:
            raise SourceError(
                self.path, f"column {column}: expected {expected}, found {value!r}", line=self.line
            ) from None

    def integer(self, column: str) -> int:
        value = self.optional(column, int, "an integer")
        if value is None:
            raise SourceError(self.path, f"column {column}: expected an integer, found an empty value", line=self.line)
        return value

    def optional_integer(self, column: str) -> int | None:
        return self.optional(column, int, "an integer or nothing")

    def optional_datetime(self, column: str) -> datetime | None:
        return self.optional(column, datetime.fromisoformat, "a timestamp YYYY-MM-DD HH:MM:SS")

    def optional_date(self, column: str) -> date | None:
        return self.optional(column, date.fromisoformat, "a date YYYY-MM-DD")

    def flag(self, column: str) -> bool:
        value = self.values[column]
        if value not in ("", "0", "1"):
            raise SourceError(self.path, f"column {column}: expected 1, 0 or nothing, found {value!r}", line=self.line)
        return value == "1"


def _mimic_iv_note(row: _Row) -> MimicIvNote:
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


def _challenge_note(row: _Row) -> ChallengeNote:
    return ChallengeNote(note_id=row.text("note_id"), text=row.text("text"), line=row.line)


def _note_event(row: _Row) -> NoteEvent:
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


def iter_mimic_iv_notes(
    path: str | Path,
    note_ids: Collection[str] | None = None,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> Iterator[MimicIvNote]:
    """Stream a MIMIC-IV-Note table (``discharge.csv.gz``, ``radiology.csv.gz``).

    With ``note_ids``, only those notes are yielded (in file order) and reading stops once all
    were seen; the caller compares what it got with what it asked for.
    """
    return _iter_table(Path(path), MIMIC_IV_NOTE_COLUMNS, "note_id", note_ids, {}, _mimic_iv_note, block_size)


def iter_challenge_notes(
    path: str | Path,
    note_ids: Collection[str] | None = None,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> Iterator[ChallengeNote]:
    """Stream the challenge's ``note_id,text`` CSV (``mimic-iv_notes_training_set.csv``)."""
    return _iter_table(Path(path), CHALLENGE_NOTE_COLUMNS, "note_id", note_ids, {}, _challenge_note, block_size)


def iter_notes(
    path: str | Path,
    note_ids: Collection[str] | None = None,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> Iterator[MimicIvNote | ChallengeNote]:
    """Stream either notes layout the challenge accepts, chosen by the file's header."""
    path = Path(path)
    header = _read_header(path)
    if _same_columns(header, CHALLENGE_NOTE_COLUMNS):
        return iter_challenge_notes(path, note_ids, block_size=block_size)
    if _same_columns(header, MIMIC_IV_NOTE_COLUMNS):
        return iter_mimic_iv_notes(path, note_ids, block_size=block_size)
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
) -> Iterator[NoteEvent]:
    """Stream MIMIC-III ``NOTEEVENTS.csv(.gz)``, optionally only some ROW_IDs and/or CATEGORYs.

    Reading stops once every wanted ROW_ID was seen (whatever its category).
    """
    wanted = None if row_ids is None else [str(row_id) for row_id in row_ids]
    filters = {} if categories is None else {"CATEGORY": categories}
    return _iter_table(Path(path), NOTEEVENTS_COLUMNS, "ROW_ID", wanted, filters, _note_event, block_size)


def read_span_annotations(path: str | Path) -> list[SpanAnnotation]:
    """Read a ``note_id,start,end,concept_id`` CSV (gold annotations or a submission).

    Offsets are 0-based character offsets, end exclusive; ``0 <= start < end`` is required.
    """
    path = Path(path)
    annotations = []
    with _open_text(path) as stream:
        reader = csv.reader(stream, strict=True)
        try:
            header = next(reader, None)
            if header is None or not _same_columns(_without_bom(header), SPAN_ANNOTATION_COLUMNS):
                raise SourceError(
                    path, f"expected the header {','.join(SPAN_ANNOTATION_COLUMNS)}, found {header}", line=1
                )
            for fields in reader:
                annotations.append(_span_annotation(path, reader.line_num, fields))
        except csv.Error as error:
            raise SourceError(path, f"malformed CSV: {error}", line=reader.line_num) from None
        except UnicodeDecodeError:
            raise _encoding_error(path) from None
        except (OSError, EOFError):
            raise _truncation_error(path) from None
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
    row = _Row(path, line, {"start": start_text, "end": end_text, "concept_id": concept_text})
    start, end, concept_id = row.integer("start"), row.integer("end"), row.integer("concept_id")
    if note_id == "":
        raise SourceError(path, "note_id is empty", line=line)
    if not 0 <= start < end:
        raise SourceError(path, f"expected 0 <= start < end, found start={start} end={end}", line=line)
    return SpanAnnotation(note_id=note_id, start=start, end=end, concept_id=concept_id, line=line)


def _is_gzip(path: Path) -> bool:
    """Whether ``path`` holds gzip data (by content); a ``.gz`` name with other content is an error."""
    try:
        with path.open("rb") as raw:
            gzipped = raw.read(2) == _GZIP_MAGIC
    except OSError as error:
        raise SourceError(path, f"cannot open: {error.strerror or error}") from None
    if not gzipped and path.suffix == ".gz":
        raise SourceError(path, "expected gzip data (the name ends in .gz) but the file is not gzip-compressed")
    return gzipped


def _open_text(path: Path) -> IO[str]:
    if _is_gzip(path):
        return igzip.open(path, "rt", encoding="utf-8", newline="")
    return path.open(encoding="utf-8", newline="")


def _open_binary(path: Path) -> BinaryIO:
    """The file's bytes, gunzipped by ISA-L in a background thread when it is gzip."""
    if _is_gzip(path):
        return igzip_threaded.open(path, "rb", threads=1)
    return path.open("rb")


def _read_header(path: Path) -> list[str]:
    try:
        with _open_text(path) as stream:
            header = next(csv.reader(stream), None)
    except UnicodeDecodeError:
        raise _encoding_error(path) from None
    except (OSError, EOFError):
        raise _truncation_error(path) from None
    except csv.Error as error:
        raise SourceError(path, f"cannot read the header: {error}", line=1) from None
    if header is None:
        raise SourceError(path, "the file is empty; expected a header row", line=1)
    return _without_bom(header)


def _without_bom(header: list[str]) -> list[str]:
    return [name.lstrip("\ufeff") if index == 0 else name for index, name in enumerate(header)]


def _same_columns(header: list[str], columns: tuple[str, ...]) -> bool:
    """Whether ``header`` names ``columns`` in order, whatever the case (MIMIC-III's demo is lower-case)."""
    return [name.casefold() for name in header] == [name.casefold() for name in columns]


def _encoding_error(path: Path) -> SourceError:
    """The first byte of ``path`` (gunzipped) that is not UTF-8: its line and offset."""
    try:
        line, offset, byte = _first_invalid_utf8(path)
    except (OSError, EOFError):
        return _truncation_error(path)
    return SourceError(
        path,
        f"expected UTF-8 text, found byte 0x{byte:02x} at byte offset {offset} "
        "(MIMIC files are UTF-8: re-download or convert the file, characters are never replaced)",
        line=line,
    )


def _first_invalid_utf8(path: Path) -> tuple[int, int, int]:
    """``(line, byte offset, byte)`` of the first invalid UTF-8 byte (offsets of the uncompressed data)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, offset = 1, 0
    with _open_binary(path) as stream:
        while chunk := stream.read(1 << 20):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as error:
                bad = offset + error.start
                return line + chunk.count(b"\n", 0, error.start), bad, chunk[error.start]
            line += chunk.count(b"\n")
            offset += len(chunk)
    return line, offset, 0


def _truncation_error(path: Path) -> SourceError:
    """A gzip file that ends early or is corrupt: how far it could be read (zlib, one pass)."""
    read, lines, compressed, chunk = 0, 0, 0, b""
    inflate = zlib.decompressobj(wbits=31)
    try:
        with path.open("rb") as raw:
            while chunk := raw.read(64 << 10):
                while chunk:
                    data = inflate.decompress(chunk)
                    read, lines = read + len(data), lines + data.count(b"\n")
                    compressed += len(chunk) - len(inflate.unused_data)
                    chunk = inflate.unused_data
                    if inflate.eof:  # a gzip file may hold several members
                        inflate = zlib.decompressobj(wbits=31)
    except zlib.error as error:
        return SourceError(
            path,
            f"corrupt gzip data within compressed bytes {compressed}-{compressed + len(chunk)} ({error}), "
            f"after {read} uncompressed bytes ({lines} lines); download the file again",
            line=lines + 1,
        )
    return SourceError(
        path,
        f"the gzip data ends early (truncated?) after {compressed} compressed bytes, {read} uncompressed "
        f"bytes ({lines} lines); download the file again",
        line=lines + 1,
    )


def _iter_table(
    path: Path,
    columns: tuple[str, ...],
    id_column: str,
    wanted_ids: Collection[str] | None,
    value_filters: dict[str, Collection[str]],
    make_record: Callable[[_Row], Record],
    block_size: int,
) -> Iterator[Record]:
    header = _read_header(path)
    if not _same_columns(header, columns):
        raise SourceError(
            path,
            f"expected the columns {','.join(columns)} (in any case), found {','.join(header)}",
            line=1,
        )
    selection = _Selection(path, id_column, wanted_ids, value_filters)
    if selection.complete:
        return
    with _open_binary(path) as stream:
        for first_line, block, newlines in _whole_row_blocks(path, stream, block_size):
            table = _parse_block(path, block, columns, first_line)
            line_starts = _row_start_lines(path, table, newlines + (not block.endswith(b"\n")), first_line)
            for line, values in selection.rows(table, line_starts):
                yield make_record(_Row(path, line, values))
            if selection.complete:
                return


class _Selection:
    """Which rows to keep: wanted ids (tracked so reading can stop early) and column value filters."""

    def __init__(
        self,
        path: Path,
        id_column: str,
        wanted_ids: Collection[str] | None,
        value_filters: dict[str, Collection[str]],
    ) -> None:
        self.path = path
        self.id_column = id_column
        self.wanted = None if wanted_ids is None else pa.array(sorted(set(wanted_ids)), type=pa.string())
        self.filters = {
            column: pa.array(sorted(set(values)), type=pa.string()) for column, values in value_filters.items()
        }
        self.seen_at: dict[str, int] = {}

    @property
    def complete(self) -> bool:
        """Whether every wanted id was seen (never, without wanted ids)."""
        return self.wanted is not None and len(self.seen_at) == len(self.wanted)

    def rows(self, table: pa.Table, line_starts: np.ndarray) -> Iterator[tuple[int, dict[str, str]]]:
        """``(start line, fields)`` of the selected rows of ``table``."""
        keep = pa.array(np.ones(table.num_rows, dtype=bool))
        if self.wanted is not None:
            keep = pc.is_in(table.column(self.id_column), value_set=self.wanted)
            self._remember(
                table.column(self.id_column).filter(keep).to_pylist(),
                line_starts[keep.to_numpy(zero_copy_only=False)].tolist(),
            )
        for column, values in self.filters.items():
            keep = pc.and_(keep, pc.is_in(table.column(column), value_set=values))
        lines = line_starts[keep.to_numpy(zero_copy_only=False)].tolist()
        return zip(lines, table.filter(keep).to_pylist(), strict=True)

    def _remember(self, ids: list[str], lines: list[int]) -> None:
        for row_id, line in zip(ids, lines, strict=True):
            if row_id in self.seen_at:
                raise SourceError(
                    self.path,
                    f"duplicate {self.id_column} {row_id!r} (first at line {self.seen_at[row_id]})",
                    line=line,
                )
            self.seen_at[row_id] = line


def _whole_row_blocks(path: Path, stream: BinaryIO, block_size: int) -> Iterator[tuple[int, bytes, int]]:
    """Cut the rows after the header into blocks of whole rows: ``(first line, block, newlines in it)``.

    A row ends at a newline preceded by an even number of quote characters (RFC 4180: quotes only
    enclose fields and are doubled inside them), so a block never ends inside a quoted text.
    """
    try:
        stream.readline()  # the header, checked by the caller
    except (OSError, EOFError):
        raise _truncation_error(path) from None
    first_line, pending = 2, b""
    while chunk := _read(path, stream, block_size, first_line):
        data = pending + chunk
        end = _end_of_last_row(data)
        if end == 0 and len(data) > _MAX_ROW_BYTES:
            raise SourceError(
                path,
                f"no row ends within {_MAX_ROW_BYTES >> 20} MiB: a quoted field is not closed "
                "or a quote stands inside an unquoted field (RFC 4180 quoting expected)",
                line=first_line,
            )
        block, pending = data[:end], data[end:]
        if block:
            newlines = block.count(b"\n")
            yield first_line, block, newlines
            first_line += newlines
    if pending.count(b'"') % 2:
        raise SourceError(
            path,
            "the file ends inside a quoted field (truncated?) or a quote stands inside an unquoted "
            "field (RFC 4180 quoting expected)",
            line=first_line,
        )
    if pending:
        yield first_line, pending, pending.count(b"\n")


def _read(path: Path, stream: BinaryIO, size: int, line: int) -> bytes:
    try:
        return stream.read(size)
    except (OSError, EOFError):
        raise _truncation_error(path) from None


def _end_of_last_row(data: bytes) -> int:
    """Offset just after the last newline outside quotes in ``data`` (0 if there is none)."""
    quotes_before = data.count(b'"')
    end = len(data)
    while (newline := data.rfind(b"\n", 0, end)) >= 0:
        quotes_before -= data.count(b'"', newline, end)
        if quotes_before % 2 == 0:
            return newline + 1
        end = newline
    return 0


def _parse_block(path: Path, block: bytes, columns: tuple[str, ...], first_line: int) -> pa.Table:
    """Parse a block of whole rows (all fields as strings) with pyarrow's multithreaded CSV parser."""
    copy = pa.BufferOutputStream()  # Arrow-owned: no Python object is left for pyarrow's threads
    copy.write(block)
    try:
        return pacsv.read_csv(
            pa.BufferReader(copy.getvalue()),
            read_options=pacsv.ReadOptions(column_names=list(columns), use_threads=True),
            parse_options=pacsv.ParseOptions(newlines_in_values=True, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types={column: pa.string() for column in columns}, strings_can_be_null=False
            ),
        )
    except pa.ArrowInvalid as error:
        raise _locate_parse_error(path, len(columns), first_line, error) from None


def _row_start_lines(path: Path, table: pa.Table, line_breaks: int, first_line: int) -> np.ndarray:
    """Physical start line of each row of ``table``, parsed from a block of ``line_breaks`` lines.

    Newlines inside values are counted in the last column (the note text) first, and in every
    column only when that does not account for all the line breaks of the block.
    """
    newlines = _newlines_per_row(table.column(table.num_columns - 1))
    if int(newlines.sum()) + table.num_rows != line_breaks:
        for column in table.columns[:-1]:
            newlines = newlines + _newlines_per_row(column)
    if int(newlines.sum()) + table.num_rows != line_breaks:
        raise SourceError(path, "parsed rows do not line up with the lines of the file", line=first_line)
    return first_line + np.cumsum(newlines + 1) - (newlines + 1)


def _newlines_per_row(column: pa.ChunkedArray) -> np.ndarray:
    """How many ``\\n`` each string holds, read straight from the Arrow offsets and data buffers.

    (Several times faster than ``pyarrow.compute.count_substring`` on long texts.)
    """
    counts = [np.zeros(0, dtype=np.int64)]
    for chunk in column.chunks:
        _, offsets_buffer, data_buffer = chunk.buffers()
        offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[chunk.offset : chunk.offset + len(chunk) + 1]
        data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
        newline_offsets = np.flatnonzero(data == ord("\n"))
        counts.append(np.diff(np.searchsorted(newline_offsets, offsets)))
    return np.concatenate(counts)


def _locate_parse_error(path: Path, n_columns: int, from_line: int, error: Exception) -> SourceError:
    """The error to raise when pyarrow cannot parse: the located one, else pyarrow's message."""
    located = _find_csv_error(path, n_columns)
    if located is not None:
        return located
    return SourceError(path, f"cannot parse the CSV at or after this line: {error}", line=from_line)


def _find_csv_error(path: Path, n_columns: int) -> SourceError | None:
    """Re-read the file with the stdlib csv module (strict) to name the first malformed line."""
    previous_limit = csv.field_size_limit()
    csv.field_size_limit(1 << 30)
    try:
        with _open_text(path) as stream:
            reader = csv.reader(stream, strict=True)
            try:
                for fields in reader:
                    if len(fields) != n_columns:
                        start_line = reader.line_num - _newlines(fields)
                        return SourceError(path, f"expected {n_columns} fields, found {len(fields)}", line=start_line)
            except csv.Error as csv_error:
                return SourceError(path, f"malformed CSV: {csv_error}", line=reader.line_num)
            except UnicodeDecodeError:
                return _encoding_error(path)
            except (OSError, EOFError):
                return _truncation_error(path)
    finally:
        csv.field_size_limit(previous_limit)
    return None


def _newlines(fields: list[str]) -> int:
    return sum(field.count("\n") for field in fields)


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
