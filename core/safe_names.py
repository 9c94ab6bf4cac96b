"""File names made from what a release holds (a record's id, written as ``<id>.ann`` by an export or a baseline).

A release is untrusted input: its ids are bounded by their record model (no whitespace, at most 128 characters)
but may still name a path outside the folder being written (``../x``, ``/tmp/x``). :func:`inside` refuses any
name that is not a relative path of plain parts before a file is written.
"""

from __future__ import annotations

from pathlib import Path

from clinical_corpora.core.errors import ClincorpError

MAX_PART_BYTES = 200
"""The longest part of a name (a file system's limit is 255 bytes; the writers add suffixes)."""


def inside(root: Path, name: str, suffix: str = "") -> Path:
    """``root / (name + suffix)``, where ``name`` (from a release) is a relative path of plain parts: not absolute,
    no ``..`` or ``.`` or empty part, no backslash, NUL or line break, each part at most :data:`MAX_PART_BYTES`
    bytes; a ClincorpError naming it otherwise."""
    parts = name.split("/")
    unsafe = (
        not name
        or name.startswith("/")
        or any(part in ("", ".", "..") for part in parts)
        or any(character in name for character in "\\\x00\n\r")
        or any(len(part.encode("utf-8", "surrogatepass")) > MAX_PART_BYTES for part in parts)
    )
    if unsafe:
        raise ClincorpError(
            f"the release's id {name[:80]!r} cannot name a file inside {root}: expected a relative path of plain "
            f"names (no '..', no leading '/', no backslash or control character, each part at most "
            f"{MAX_PART_BYTES} bytes)"
        )
    return root / f"{name}{suffix}"
