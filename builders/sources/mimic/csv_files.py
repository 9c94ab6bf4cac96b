"""Opening MIMIC CSV files (plain or gzip): their header, typed fields, and the error for a file that cannot be read.

Files are UTF-8 (MIMIC is): a byte that is not UTF-8 is a SourceError naming the line and the byte's offset in
the file, never a replaced character. A gzip file that ends early (an interrupted download) is a SourceError
saying how many bytes and lines were read.
"""

from __future__ import annotations

import codecs
import csv
import zlib
from collections.abc import Callable, Iterator
from datetime import date, datetime
from pathlib import Path
from typing import IO, BinaryIO, TypeVar

from isal import igzip

from clinical_corpora.builders.sources.recoded import utf8_stream
from clinical_corpora.core.errors import EncodingError, SourceError, excerpt
from clinical_corpora.core.text_encoding import UTF8

_GZIP_MAGIC = b"\x1f\x8b"

Parsed = TypeVar("Parsed")


class CsvRow:
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
                self.path, f"column {column}: expected {expected}, found {excerpt(value, 40)}", line=self.line
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
            raise SourceError(
                self.path, f"column {column}: expected 1, 0 or nothing, found {excerpt(value, 40)}", line=self.line
            )
        return value == "1"


def is_gzip(path: Path) -> bool:
    """Whether ``path`` holds gzip data (by content); a ``.gz`` name with other content is an error."""
    try:
        with path.open("rb") as raw:
            gzipped = raw.read(2) == _GZIP_MAGIC
    except OSError as error:
        raise SourceError(path, f"cannot open: {error.strerror or error}") from None
    if not gzipped and path.suffix == ".gz":
        raise SourceError(path, "expected gzip data (the name ends in .gz) but the file is not gzip-compressed")
    return gzipped


def open_text(path: Path, encoding: str = UTF8) -> IO[str]:
    if is_gzip(path):
        return igzip.open(path, "rt", encoding=encoding, newline="")
    return path.open(encoding=encoding, newline="")


def open_binary(path: Path, encoding: str = UTF8) -> BinaryIO:
    """The file's bytes, gunzipped by ISA-L (which releases the GIL) when it is gzip; a file in another
    ``encoding`` (the user's copy, ``--source-encoding``) as UTF-8 bytes."""
    stream = igzip.open(path, "rb") if is_gzip(path) else path.open("rb")
    return stream if encoding == UTF8 else utf8_stream(stream, encoding, str(path))


def read_header(path: Path, encoding: str = UTF8) -> list[str]:
    try:
        with open_text(path, encoding) as stream:
            header = next(csv.reader(stream), None)
    except UnicodeDecodeError as error:
        if encoding != UTF8:
            raise EncodingError(path, f"expected {encoding} text (as --source-encoding says): {error.reason}") from None
        raise encoding_error(path) from None
    except (OSError, EOFError):
        raise truncation_error(path) from None
    except csv.Error as error:
        raise SourceError(path, f"cannot read the header: {error}", line=1) from None
    if header is None:
        raise SourceError(path, "the file is empty; expected a header row", line=1)
    return without_bom(header)


def without_bom(header: list[str]) -> list[str]:
    return [name.lstrip("\ufeff") if index == 0 else name for index, name in enumerate(header)]


def same_columns(header: list[str], columns: tuple[str, ...]) -> bool:
    """Whether ``header`` names ``columns`` in order, whatever the case (MIMIC-III's demo is lower-case)."""
    return [name.casefold() for name in header] == [name.casefold() for name in columns]


def encoding_error(path: Path) -> SourceError:
    """The first byte of ``path`` (gunzipped) that is not UTF-8: its line and offset."""
    try:
        line, offset, byte = _first_invalid_utf8(path)
    except (OSError, EOFError):
        return truncation_error(path)
    return EncodingError(
        path,
        f"expected UTF-8 text, found byte 0x{byte:02x} at byte offset {offset} "
        "(MIMIC files are UTF-8: re-download or convert the file, characters are never replaced)",
        line=line,
    )


def _first_invalid_utf8(path: Path) -> tuple[int, int, int]:
    """``(line, byte offset, byte)`` of the first invalid UTF-8 byte (offsets of the uncompressed data)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, offset = 1, 0
    with open_binary(path) as stream:
        while chunk := stream.read(1 << 20):
            data = decoder.getstate()[0] + chunk  # what the decoder sees: a character cut by the last chunk first
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as error:
                return line + data.count(b"\n", 0, error.start), offset + error.start, data[error.start]
            line += chunk.count(b"\n")
            offset += len(data) - len(decoder.getstate()[0])
    return line, offset, 0


def truncation_error(path: Path) -> SourceError:
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


def find_csv_error(path: Path, n_columns: int, max_row_bytes: int) -> SourceError | None:
    """Re-read the file with the stdlib csv module (strict) to name the first malformed line, or the first row
    longer than ``max_row_bytes`` (what one parsed block holds). No field longer than that is ever held: an
    oversized field is found, never read whole."""
    previous_limit = csv.field_size_limit()
    csv.field_size_limit(max_row_bytes)
    try:
        with open_text(path) as stream:
            reader = csv.reader(_bounded_lines(stream, max_row_bytes), strict=True)
            row_start = 1
            try:
                for fields in reader:
                    if len(fields) != n_columns:
                        start_line = reader.line_num - _newlines(fields)
                        return SourceError(path, f"expected {n_columns} fields, found {len(fields)}", line=start_line)
                    if sum(len(field.encode()) + 1 for field in fields) > max_row_bytes:
                        return SourceError(path, _long_row(max_row_bytes), line=row_start)
                    row_start = reader.line_num + 1
            except _LongLine:
                return SourceError(path, _long_row(max_row_bytes), line=row_start)
            except csv.Error as csv_error:
                if str(csv_error).startswith("field larger than field limit"):
                    return SourceError(path, _long_row(max_row_bytes), line=row_start)
                return SourceError(path, f"malformed CSV: {csv_error}", line=reader.line_num)
            except UnicodeDecodeError:
                return encoding_error(path)
            except (OSError, EOFError):
                return truncation_error(path)
    finally:
        csv.field_size_limit(previous_limit)
    return None


class _LongLine(Exception):
    """A line longer than a row may be (read no further)."""


def _bounded_lines(stream: IO[str], limit: int) -> Iterator[str]:
    """The lines of ``stream``, each read up to ``limit`` characters: a longer one raises :class:`_LongLine`
    instead of being read whole."""
    while line := stream.readline(limit + 1):
        if len(line) > limit:
            raise _LongLine
        yield line


def _long_row(max_row_bytes: int) -> str:
    return (
        f"a row is longer than the block of {max_row_bytes} bytes the CSV is parsed in (a MIMIC note is at most "
        "tens of kilobytes: the file is damaged, or read it with a larger block_size)"
    )


def _newlines(fields: list[str]) -> int:
    return sum(field.count("\n") for field in fields)
