"""sha256 of the input files the readers read whole, computed on the bytes they already hold.

A release fingerprints every input file (``inputs.jsonl``). Readers that read a file whole (BRAT
texts and annotations, through :func:`read_input`) record its digest while a :func:`recording`
block is open, so whoever fingerprints the inputs can take those digests instead of reading each
file a second time. Outside such a block nothing is recorded.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class FileDigest:
    """The sha256 (hex) and size of a file's content as a reader read it."""

    sha256: str
    bytes: int


_RECORDED: ContextVar[dict[str, FileDigest] | None] = ContextVar("read_digests", default=None)


@contextmanager
def recording() -> Iterator[dict[str, FileDigest]]:
    """Within the block, every file read through :func:`read_input` is recorded by its absolute path."""
    digests: dict[str, FileDigest] = {}
    token = _RECORDED.set(digests)
    try:
        yield digests
    finally:
        _RECORDED.reset(token)


def read_input(path: str | Path) -> bytes:
    """The whole content of ``path``; its digest is recorded when a :func:`recording` block is open."""
    with open(path, "rb") as handle:
        data = handle.read()
    digests = _RECORDED.get()
    if digests is not None:
        digests[os.path.abspath(path)] = FileDigest(hashlib.sha256(data).hexdigest(), len(data))
    return data


__all__ = ["FileDigest", "read_input", "recording"]
