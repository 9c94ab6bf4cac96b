"""UTF-8 text files for the readers, whole or line by line: a byte that is not UTF-8 is a SourceError.

A whole file (:func:`read_utf8`, for the readers whose offsets count every character) is read up to a size
cap. Read line by line (:func:`utf8_lines`), a line is read up to a length cap, and characters are never
replaced: the error names the file, the line and the byte's offset in the file, and says when the file looks
gzip-compressed (a common mistake: an ``.RRF.gz`` unpacked under its name, or a ``.conll.gz`` given as is).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from clinical_corpora.core.errors import EncodingError, SourceError
from clinical_corpora.core.file_limits import MAX_FILE_BYTES, MAX_LINE_BYTES, read_bounded
from clinical_corpora.core.text_encoding import UTF8

GZIP_MAGIC = b"\x1f\x8b"


def utf8_lines(path: str | Path, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` from 1, line ends kept; a line longer than ``max_line_bytes`` is a SourceError
    naming it, read no further than the limit."""
    with open(path, "rb") as handle:
        offset, line_number = 0, 0
        while raw := handle.readline(max_line_bytes + 1):
            line_number += 1
            if len(raw) > max_line_bytes:
                raise SourceError(
                    path,
                    f"the line is longer than {max_line_bytes:,} bytes, the most one row of this file may hold "
                    "(a file with no line ends, or not the file expected)",
                    line=line_number,
                )
            try:
                yield line_number, raw.decode("utf-8")
            except UnicodeDecodeError as error:
                gzipped = (
                    " (the file is gzip-compressed: unpack it first)"
                    if offset == 0 and raw.startswith(GZIP_MAGIC)
                    else ""
                )
                raise EncodingError(
                    path,
                    f"expected UTF-8 text, found byte 0x{raw[error.start]:02x} at byte offset {offset + error.start}"
                    f"{gzipped}; characters are never replaced",
                    line=line_number,
                ) from None
            offset += len(raw)


def read_utf8(path: str | Path, max_bytes: int = MAX_FILE_BYTES, encoding: str = UTF8) -> str:
    """File content as UTF-8 (or the ``encoding`` the user named for their copy), line endings untouched (BRAT
    offsets count every character); a file over ``max_bytes`` is a SourceError naming it, its size and the limit
    (:mod:`core.file_limits`)."""
    try:
        return read_bounded(path, max_bytes).decode(encoding)
    except UnicodeDecodeError as error:
        named = "UTF-8" if encoding == UTF8 else f"{encoding} (as --source-encoding says)"
        raise EncodingError(
            path, f"expected {named} text, found byte 0x{error.object[error.start]:02x} at byte offset {error.start}"
        ) from None
