"""Lines of a UTF-8 text file, for the line-based readers: a byte that is not UTF-8 is a SourceError.

Characters are never replaced: the error names the file, the line and the byte's offset in the file,
and says when the file looks gzip-compressed (a common mistake: an ``.RRF.gz`` unpacked under its
name, or a ``.conll.gz`` given as is).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from clinical_corpora.core.errors import SourceError

GZIP_MAGIC = b"\x1f\x8b"


def utf8_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` from 1, line ends kept."""
    with open(path, "rb") as handle:
        offset = 0
        for line_number, raw in enumerate(handle, start=1):
            try:
                yield line_number, raw.decode("utf-8")
            except UnicodeDecodeError as error:
                gzipped = (
                    " (the file is gzip-compressed: unpack it first)"
                    if offset == 0 and raw.startswith(GZIP_MAGIC)
                    else ""
                )
                raise SourceError(
                    path,
                    f"expected UTF-8 text, found byte 0x{raw[error.start]:02x} at byte offset {offset + error.start}"
                    f"{gzipped}; characters are never replaced",
                    line=line_number,
                ) from None
            offset += len(raw)
