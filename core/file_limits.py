"""The size limit of a file read whole (a note's text, its annotation file, a BMJ page), shared by every reader.

A reader that holds a whole file in memory (BRAT ``.txt``/``.ann``, Knowtator XML, i2b2/VA files, BMJ pages)
checks its size first, so an oversized file is an error naming it, its size and the limit, not a
``MemoryError`` or an Arrow abort later. Real files are far below the default (a clinical note or its
annotations: kilobytes; a BMJ page: ~100 KB). A builder's option ``max_file_bytes`` sets the limit
(``clincorp release --option max_file_bytes=N``); it is at most :data:`ARROW_STRING_BYTES`, so no single
document's text can overflow an Arrow string column.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from clinical_corpora.core.errors import SourceError

MAX_FILE_BYTES = 100_000_000
"""The default limit: 100 MB, a thousand times the largest clinical note or BMJ page."""

MAX_LINE_BYTES = 10_000_000
"""The longest line a line-by-line reader (RF2, UMLS RRF, CoNLL-2012, i2b2 concepts) reads: 10 MB, far above any
real row (an RF2 OWL axiom or an MRCONSO string: kilobytes), so a damaged file with no line end is an error naming
its line, not a ``MemoryError``."""

ARROW_STRING_BYTES = 2**31 - 1
"""The most bytes one Arrow ``string`` value (int32 offsets) may hold: the largest limit allowed."""

LIMIT_OPTION = "max_file_bytes"
"""The builder option that sets the limit."""


def check_file_size(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> int:
    """The size of ``path``; a SourceError naming it, its size and the limit when it holds more than
    ``max_bytes`` bytes. A non-regular file (a pipe, a device) is refused too, without opening it."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise SourceError(path, f"cannot read file: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise SourceError(path, "not a regular file (a pipe, socket, device or folder): expected a file")
    if info.st_size > max_bytes:
        raise SourceError(path, size_message(info.st_size, max_bytes))
    return info.st_size


def size_message(size: int, max_bytes: int) -> str:
    """What an oversized file's error says: its size, the limit, and how to raise the limit."""
    return (
        f"the file is {size:,} bytes, over the {max_bytes:,}-byte limit for one file read whole "
        f"(raise it with --option {LIMIT_OPTION}=N, at most {ARROW_STRING_BYTES:,})"
    )


def read_bounded(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path``, refused as :func:`check_file_size` says, before it is opened; a file growing
    past the limit while read is refused too (never more than ``max_bytes + 1`` bytes are read)."""
    size = check_file_size(path, max_bytes)
    try:
        with open(path, "rb", buffering=0) as handle:  # unbuffered: one read of the whole file
            data = handle.read(size + 1)  # one byte more than the size seen: did it grow?
            if size < len(data) <= max_bytes:
                data += handle.read(max_bytes + 1 - len(data))
    except OSError as error:
        raise SourceError(path, f"cannot read file: {error.strerror}") from error
    if len(data) > max_bytes:
        raise SourceError(path, size_message(len(data), max_bytes))
    return data
