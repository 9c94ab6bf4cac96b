"""The sha256 of a file, read in chunks (``hashlib.file_digest``): one helper for every file the package hashes.

A release is untrusted input: its files are hashed with ``regular_only``, which opens a file without following a
symbolic link and without blocking, and refuses anything but a regular file (a pipe would block, a device never
end)."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path


def sha256_file(path: Path | str, regular_only: bool = False) -> str:
    """The hex sha256 of the file's bytes; an OSError when it cannot be read (with ``regular_only``, also when
    it is a symbolic link, a pipe, a socket or a device)."""
    with open(path, "rb", opener=_regular if regular_only else None) as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def regular_file_sha256(path: Path) -> str | None:
    """The sha256 of a regular file, or None when it is not one or cannot be read."""
    try:
        return sha256_file(path, regular_only=True)
    except OSError:
        return None


def _regular(path: str, flags: int) -> int:
    descriptor = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise OSError(f"{path}: not a regular file")
    return descriptor
