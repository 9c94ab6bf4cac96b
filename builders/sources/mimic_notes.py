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

Note tables stream: pyarrow's streaming CSV reader parses blocks of rows with its threads while its
I/O thread pulls the next bytes, gunzipped by ISA-L (which releases the GIL), so decompression
overlaps with parsing. Rows are selected with ``pyarrow.compute.is_in`` and only the selected ones
become Python objects; their start lines come from the newlines inside the values before them
(read from the Arrow buffers). Memory is bounded by a few blocks whatever the file's size, and
reading stops once every wanted id was seen. A file whose quotes do not pair up (RFC 4180) is an
error naming the line where the open quote's row starts; pyarrow's threads never call back into
Python once the caller left a table half-read.
"""

from __future__ import annotations

import atexit
import codecs
import csv
import weakref
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
from isal import igzip

from clinical_corpora.core.annotations import SpanAnnotation
from clinical_corpora.core.errors import SourceError, excerpt

DEFAULT_BLOCK_SIZE = 4 << 20
"""Bytes of uncompressed CSV parsed per block (memory is a small multiple of it; pyarrow reads a few
blocks ahead). A row must fit in a block: MIMIC notes are at most tens of kilobytes."""

_GZIP_MAGIC = b"\x1f\x8b"
_NEWLINE = ord("\n")
_FEW_ROWS = 32
"""Up to this many selected rows per block, newlines are counted stretch by stretch."""

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
    """The file's bytes, gunzipped by ISA-L (which releases the GIL) when it is gzip."""
    if _is_gzip(path):
        return igzip.open(path, "rb")
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
            data = decoder.getstate()[0] + chunk  # what the decoder sees: a character cut by the last chunk first
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as error:
                return line + data.count(b"\n", 0, error.start), offset + error.start, data[error.start]
            line += chunk.count(b"\n")
            offset += len(data) - len(decoder.getstate()[0])
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
    line = 2
    for batch in _row_batches(path, columns, block_size):
        selected, line = selection.rows(batch, line)
        for start_line, values in selected:
            yield make_record(_Row(path, start_line, values))
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

    def rows(self, batch: pa.RecordBatch, first_line: int) -> tuple[list[tuple[int, dict[str, str]]], int]:
        """``(start line, fields)`` of the selected rows of ``batch`` (whose first row starts on
        ``first_line``), and the line the next batch starts on."""
        keep = np.ones(batch.num_rows, dtype=bool)
        if self.wanted is not None:
            keep = pc.is_in(batch.column(self.id_column), value_set=self.wanted).to_numpy(zero_copy_only=False)
        located = np.flatnonzero(keep)  # wanted ids are remembered whatever the other filters say
        for column, values in self.filters.items():
            keep &= pc.is_in(batch.column(column), value_set=values).to_numpy(zero_copy_only=False)
        lines, next_line = _start_lines(batch, first_line, located)
        if self.wanted is not None:
            self._remember(batch.column(self.id_column).take(located).to_pylist(), lines.tolist())
        kept = keep[located]
        return list(zip(lines[kept].tolist(), batch.take(located[kept]).to_pylist(), strict=True)), next_line

    def _remember(self, ids: list[str], lines: list[int]) -> None:
        for row_id, line in zip(ids, lines, strict=True):
            if row_id in self.seen_at:
                raise SourceError(
                    self.path,
                    f"duplicate {self.id_column} {row_id!r} (first at line {self.seen_at[row_id]})",
                    line=line,
                )
            self.seen_at[row_id] = line


class _CountingStream:
    """The rows after the header, read by pyarrow's I/O thread: counts quotes, keeps read errors.

    pyarrow calls ``read`` from its own thread; ISA-L releases the GIL while it inflates, so
    decompression overlaps with parsing. Errors are kept (and end the stream) for the reading
    thread to raise. ``finish`` ends the stream and lets pyarrow drain it, so pyarrow's threads never
    call back into Python after the caller left or once the interpreter shuts down.
    """

    def __init__(self, path: Path, stream: BinaryIO) -> None:
        self.path = path
        self.stream = stream
        self.quotes = 0
        self.error: SourceError | None = None
        self.stopped = False
        self.ended = False
        self.closed = False
        self.reader: pacsv.CSVStreamingReader | None = None

    def read(self, size: int = -1) -> bytes:
        if self.stopped or self.error is not None:
            return b""
        try:
            chunk = self.stream.read(size)
        except (OSError, EOFError):
            self.error = _truncation_error(self.path)
            return b""
        self.quotes += chunk.count(b'"')
        self.ended = self.ended or (not chunk and size != 0)
        return chunk

    def close(self) -> None:
        self.closed = True

    def finish(self) -> None:
        """End the stream and read pyarrow's remaining (few, read-ahead) batches."""
        self.stopped = True
        while self.reader is not None and _drain(self.reader):
            pass
        self.reader = None


_UNFINISHED: weakref.WeakSet[_CountingStream] = weakref.WeakSet()
"""Streams a caller left half-read, finished at exit while pyarrow's threads can still run Python."""


@atexit.register
def _finish_unfinished() -> None:
    for rows in list(_UNFINISHED):
        rows.finish()


def _row_batches(path: Path, columns: tuple[str, ...], block_size: int) -> Iterator[pa.RecordBatch]:
    """The rows after the header as record batches of strings.

    pyarrow's streaming CSV reader parses blocks (with its threads) while its I/O thread inflates
    the next ones. A row left open by an odd number of quotes swallows the rest of the file, so it
    only comes once the whole file was read: the quote count is then complete and checked first.
    """
    with _open_binary(path) as raw:
        try:
            raw.readline()  # the header, checked by the caller
        except (OSError, EOFError):
            raise _truncation_error(path) from None
        rows = _CountingStream(path, raw)
        rows.reader = reader = _open_csv(path, rows, columns, block_size)
        _UNFINISHED.add(rows)
        try:
            while (batch := _next_batch(path, rows, reader, block_size)) is not None:
                if rows.ended and rows.quotes % 2:
                    raise _unclosed_quote_error(path)
                yield batch
            if rows.quotes % 2:
                raise _unclosed_quote_error(path)
        finally:
            rows.finish()
            _UNFINISHED.discard(rows)


def _open_csv(path: Path, rows: _CountingStream, columns: tuple[str, ...], block_size: int) -> pacsv.CSVStreamingReader:
    try:
        return pacsv.open_csv(
            pa.PythonFile(rows, mode="r"),
            read_options=pacsv.ReadOptions(column_names=list(columns), use_threads=True, block_size=block_size),
            parse_options=pacsv.ParseOptions(newlines_in_values=True, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types={column: pa.string() for column in columns}, strings_can_be_null=False
            ),
        )
    except pa.ArrowInvalid as error:
        raise _parse_error(path, rows, len(columns), block_size, error) from None


def _next_batch(
    path: Path, rows: _CountingStream, reader: pacsv.CSVStreamingReader, block_size: int
) -> pa.RecordBatch | None:
    try:
        batch = reader.read_next_batch()
    except StopIteration:
        batch = None
    except pa.ArrowInvalid as error:
        raise _parse_error(path, rows, len(reader.schema), block_size, error) from None
    if rows.error is not None:
        raise rows.error
    return batch


def _drain(reader: pacsv.CSVStreamingReader) -> bool:
    """Read and drop one batch of a stopped stream (False once it is exhausted or broken)."""
    try:
        reader.read_next_batch()
    except (StopIteration, pa.ArrowException):
        return False
    return True


def _parse_error(path: Path, rows: _CountingStream, n_columns: int, block_size: int, error: Exception) -> SourceError:
    """The error to raise when pyarrow cannot parse: a read error, else the located one.

    A file the strict stdlib reader accepts fails in pyarrow only when a row is longer than a block.
    """
    if rows.error is not None:
        return rows.error
    located = _find_csv_error(path, n_columns)
    if located is not None:
        return located
    return SourceError(
        path,
        f"a row is longer than the block of {block_size} bytes the CSV is parsed in; read it with a larger "
        f"block_size (pyarrow: {excerpt(str(error), 60)})",
    )


def _unclosed_quote_error(path: Path) -> SourceError:
    """An odd number of quotes: name the line after the last row end where the count was even."""
    line, row_start, quotes = 1, 1, 0
    with _open_binary(path) as stream:
        for raw_line in stream:
            line += 1
            quotes += raw_line.count(b'"')
            if quotes % 2 == 0:
                row_start = line
    return SourceError(
        path,
        "the file ends inside a quoted field (truncated?) or a quote stands inside an unquoted "
        "field (RFC 4180 quoting expected)",
        line=row_start,
    )


def _start_lines(batch: pa.RecordBatch, first_line: int, rows: np.ndarray) -> tuple[np.ndarray, int]:
    """Physical start line of the given rows (sorted indices) of ``batch``, and the line after it.

    A row takes one line plus one per newline inside its quoted values (kept verbatim by pyarrow).
    """
    before = np.zeros(len(rows) + 1, dtype=np.int64)
    for column in batch.columns:
        before += _newlines_before(column, rows)
    lines = first_line + rows + before[:-1]
    return lines, first_line + batch.num_rows + int(before[-1])


def _newlines_before(column: pa.Array, rows: np.ndarray) -> np.ndarray:
    """How many ``\\n`` the values before each of ``rows`` hold, then all the values.

    Read straight from the Arrow offsets and data buffers; a few rows cost one count per stretch
    between them, many rows one search over the newline positions.
    """
    _, offsets_buffer, data_buffer = column.buffers()
    if data_buffer is None:
        return np.zeros(len(rows) + 1, dtype=np.int64)
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[column.offset : column.offset + len(column) + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8)
    bounds = offsets[np.append(rows, len(column))]
    if len(rows) <= _FEW_ROWS:
        starts = np.concatenate(([offsets[0]], bounds[:-1]))
        counts = [np.count_nonzero(data[start:end] == _NEWLINE) for start, end in zip(starts, bounds, strict=True)]
        return np.cumsum(counts, dtype=np.int64)
    newline_positions = np.flatnonzero(data[offsets[0] : offsets[-1]] == _NEWLINE) + offsets[0]
    return np.searchsorted(newline_positions, bounds).astype(np.int64)


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
