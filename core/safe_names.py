"""File names made from what a release holds (a record's id, written as ``<id>.ann`` by an export or a baseline).

A release is untrusted input: its ids are bounded by their record model (no whitespace, at most 128 characters)
but may still name a path outside the folder being written (``../x``, ``/tmp/x``). :func:`inside` refuses any
name that is not a relative path of plain parts before a file is written.
"""

from __future__ import annotations

from pathlib import Path

from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.release_manifest import release_path_problem

MAX_PART_BYTES = 200
"""The longest part of a name (a file system's limit is 255 bytes; the writers add suffixes)."""


def inside(root: Path, name: str, suffix: str = "") -> Path:
    """``root / (name + suffix)``, where ``name`` (from a release) is a path a release may list
    (:func:`~clinical_corpora.core.release_manifest.release_path_problem`: relative, no ``..``, ``.`` or empty
    part, no backslash or NUL) with no line break and no part over :data:`MAX_PART_BYTES` bytes; a ClincorpError
    naming it otherwise."""
    unsafe = (
        release_path_problem(name) is not None
        or any(character in name for character in "\n\r")
        or any(len(part.encode("utf-8", "surrogatepass")) > MAX_PART_BYTES for part in name.split("/"))
    )
    if unsafe:
        raise ClincorpError(
            f"the release's id {name[:80]!r} cannot name a file inside {root}: expected a relative path of plain "
            f"names (no '..', no leading '/', no backslash or control character, each part at most "
            f"{MAX_PART_BYTES} bytes)"
        )
    return root / f"{name}{suffix}"
