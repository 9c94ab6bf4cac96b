"""Cut a line-oriented file (one record per line, no quoted newlines) into shards of whole lines.

:func:`line_chunks` reads the file once, in blocks, and returns byte ranges that start and end at line
boundaries with the number of their first line, so a worker reads its range alone (:func:`chunk_lines`)
and still names file and line in its errors.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

CHUNK_BYTES = 1 << 14


class LineChunk(NamedTuple):
    """Bytes ``start:end`` of a file, whole lines, the first of them line ``first_line`` (1-based)."""

    start: int
    end: int
    first_line: int


def line_chunks(path: str | Path, skip_lines: int = 0, chunk_bytes: int = CHUNK_BYTES) -> list[LineChunk]:
    """The file after its first ``skip_lines`` lines (a header), cut into ranges of about ``chunk_bytes``."""
    chunks = []
    with open(path, "rb") as handle:
        for _ in range(skip_lines):
            handle.readline()
        start, line = handle.tell(), skip_lines + 1
        while block := handle.read(chunk_bytes):
            block += handle.readline()  # on to the end of the line the block cut
            chunks.append(LineChunk(start, start + len(block), line))
            line += block.count(b"\n")
            start += len(block)
    return chunks


def chunk_lines(path: str | Path, chunk: LineChunk) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` of one chunk, without the ``\n`` that ends each line."""
    with open(path, "rb") as handle:
        handle.seek(chunk.start)
        lines = handle.read(chunk.end - chunk.start).split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # the empty piece after the last line end
    for number, line in enumerate(lines):
        yield chunk.first_line + number, line
