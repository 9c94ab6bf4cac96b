"""Streaming scan of a MIMIC CSV table: the rows whose id (and column values) are wanted, each with its start line.

pyarrow's streaming CSV reader parses blocks of rows with its threads while its I/O thread pulls the next bytes,
gunzipped by ISA-L (which releases the GIL), so decompression overlaps with parsing. Rows are selected with
``pyarrow.compute.is_in`` and only the selected ones become Python objects; their start lines come from the
newlines inside the values before them (read from the Arrow buffers). Memory is bounded by a few blocks whatever
the file's size, and reading stops once every wanted id was seen. A file whose quotes do not pair up (RFC 4180)
is an error naming the line where the open quote's row starts; pyarrow's threads never call back into Python
once the caller left a table half-read.
"""

from __future__ import annotations

import atexit
import weakref
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Generic, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from clinical_corpora.builders.sources.mimic.csv_files import (
    CsvRow,
    find_csv_error,
    open_binary,
    read_header,
    same_columns,
    truncation_error,
)
from clinical_corpora.core.errors import SourceError, excerpt
from clinical_corpora.core.text_encoding import UTF8

DEFAULT_BLOCK_SIZE = 4 << 20
"""Bytes of uncompressed CSV parsed per block (memory is a small multiple of it; pyarrow reads a few
blocks ahead). A row must fit in a block: MIMIC notes are at most tens of kilobytes."""

_NEWLINE = ord("\n")
_FEW_ROWS = 32
"""Up to this many selected rows per block, newlines are counted stretch by stretch."""


_COPY_SIZE = 1 << 16
"""pyarrow copies what ``read`` returns into its own buffers (through a buffer of this size), so that no
pyarrow thread holds a Python object: one that lets go of one while the interpreter exits aborts it."""

Record = TypeVar("Record")


@dataclass(frozen=True, slots=True)
class TableLayout(Generic[Record]):
    """What a table holds: its columns (in order), the column identifying a row, and the record a row becomes."""

    columns: tuple[str, ...]
    id_column: str
    make_record: Callable[[CsvRow], Record]


def scan_table(
    path: Path,
    layout: TableLayout[Record],
    wanted_ids: Collection[str] | None,
    value_filters: dict[str, Collection[str]],
    block_size: int,
    encoding: str = UTF8,
) -> Iterator[Record]:
    """The records of the rows of ``path`` whose id is in ``wanted_ids`` (every row without them) and whose
    columns hold one of the ``value_filters`` values, in file order; reading stops once every wanted id was seen.
    A file in another ``encoding`` (the user's copy) is read as UTF-8 as it streams. Wanted ids from a table
    with no rows (a header alone) are a SourceError saying so."""
    columns = layout.columns
    header = read_header(path, encoding)
    if not same_columns(header, columns):
        raise SourceError(
            path,
            f"expected the columns {','.join(columns)} (in any case), found {','.join(header)}",
            line=1,
        )
    selection = _Selection(path, layout.id_column, wanted_ids, value_filters)
    if selection.complete:
        return
    line, empty = 2, True
    for batch in _row_batches(path, columns, block_size, encoding):
        empty = False
        selected, line = selection.rows(batch, line)
        for start_line, values in selected:
            yield layout.make_record(CsvRow(path, start_line, values))
        if selection.complete:
            return
    if empty and selection.wanted is not None:
        raise _no_rows_error(path, layout.id_column, selection.wanted.to_pylist())


def _no_rows_error(path: Path, id_column: str, wanted: list[str]) -> SourceError:
    """A header-only table asked for rows: say so, rather than name the first wanted id as missing."""
    shown = ", ".join(wanted[:3]) + (f" and {len(wanted) - 3} more" if len(wanted) > 3 else "")
    return SourceError(
        path,
        f"the table has no rows (a header and nothing after it): expected the rows of {len(wanted)} "
        f"{id_column}(s) ({shown}); is this the complete file?",
        line=2,
    )


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

    def __init__(self, path: Path, stream: BinaryIO, first: bytes = b"") -> None:
        self.path = path
        self.stream = stream
        self.first = first
        """Bytes already read from ``stream`` (to tell an empty table), given back first."""
        self.quotes = 0
        self.error: SourceError | None = None
        self.stopped = False
        self.ended = False
        self.closed = False
        self.reader: pacsv.CSVStreamingReader | None = None
        self.arrow_file: pa.PythonFile | None = None
        """pyarrow's handle on this stream; closed by ``finish`` so that no pyarrow thread needs the GIL
        to let go of it (one that tries while the interpreter exits aborts it)."""

    def read(self, size: int = -1) -> bytes:
        if self.stopped or self.error is not None:
            return b""
        first, self.first = self.first, b""
        try:
            chunk = first + self.stream.read(size - len(first) if size > 0 else size)
        except (OSError, EOFError):
            self.error = truncation_error(self.path)
            return b""
        except SourceError as error:  # a byte that is not text in the encoding the user named
            self.error = error
            return b""
        self.quotes += chunk.count(b'"')
        self.ended = self.ended or (not chunk and size != 0)
        return chunk

    def close(self) -> None:
        self.closed = True

    def finish(self) -> None:
        """End the stream and read pyarrow's remaining (few, read-ahead) batches."""
        self.stopped = True
        reader, self.reader = self.reader, None
        if reader is not None:
            while _drain(reader):
                pass
            reader.close()
        arrow_file, self.arrow_file = self.arrow_file, None
        if arrow_file is not None:
            arrow_file.close()


_UNFINISHED: weakref.WeakSet[_CountingStream] = weakref.WeakSet()
"""Streams a caller left half-read, finished at exit while pyarrow's threads can still run Python."""


@atexit.register
def _finish_unfinished() -> None:
    for rows in list(_UNFINISHED):
        rows.finish()


def _row_batches(path: Path, columns: tuple[str, ...], block_size: int, encoding: str) -> Iterator[pa.RecordBatch]:
    """The rows after the header as record batches of strings.

    pyarrow's streaming CSV reader parses blocks (with its threads) while its I/O thread inflates
    the next ones. A row left open by an odd number of quotes swallows the rest of the file, so it
    only comes once the whole file was read: the quote count is then complete and checked first.
    A header with no row after it (MIMIC-III demo's empty ``NOTEEVENTS.csv``) is an empty table: no batch.
    """
    with open_binary(path, encoding) as raw:
        try:
            raw.readline()  # the header, checked by the caller
            first = raw.read(1)
        except (OSError, EOFError):
            raise truncation_error(path) from None
        if not first:
            return
        rows = _CountingStream(path, raw, first)
        rows.reader = _open_csv(path, rows, columns, block_size)
        _UNFINISHED.add(rows)
        try:
            while (batch := _next_batch(path, rows, block_size)) is not None:
                if rows.ended and rows.quotes % 2:
                    raise _unclosed_quote_error(path)
                yield batch
            if rows.quotes % 2:
                raise _unclosed_quote_error(path)
        finally:
            rows.finish()
            _UNFINISHED.discard(rows)


def _open_csv(path: Path, rows: _CountingStream, columns: tuple[str, ...], block_size: int) -> pacsv.CSVStreamingReader:
    rows.arrow_file = pa.PythonFile(rows, mode="r")
    try:
        return pacsv.open_csv(
            pa.BufferedInputStream(rows.arrow_file, _COPY_SIZE),
            read_options=pacsv.ReadOptions(column_names=list(columns), use_threads=True, block_size=block_size),
            parse_options=pacsv.ParseOptions(newlines_in_values=True, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types={column: pa.string() for column in columns}, strings_can_be_null=False
            ),
        )
    except pa.ArrowInvalid as error:
        raise _parse_error(path, rows, len(columns), block_size, error) from None


def _next_batch(path: Path, rows: _CountingStream, block_size: int) -> pa.RecordBatch | None:
    reader = rows.reader
    if reader is None:  # finished at exit
        return None
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
    located = find_csv_error(path, n_columns, block_size)
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
    with open_binary(path) as stream:
        tail = b""
        while chunk := stream.read(1 << 20):  # by chunks: a line may be gigabytes long
            *ended, tail = chunk.split(b"\n")
            for piece in ended:
                line += 1
                quotes += piece.count(b'"')
                if quotes % 2 == 0:
                    row_start = line
            quotes += tail.count(b'"')
        if tail:
            line += 1
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
