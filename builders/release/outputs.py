"""The files of a staged release folder as its manifest lists them (``outputs``): name, sha256, rows."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.core.hashing import sha256_file
from clinical_corpora.core.release_manifest import MANIFEST_FILE, OutputFile


def folder_files(folder: Path) -> list[str]:
    """Every file under ``folder``, as sorted relative POSIX names."""
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file())


def folder_outputs(folder: Path, within: str = "", known: Iterable[OutputFile] = ()) -> list[OutputFile]:
    """The manifest's entry of every file under ``folder`` (those whose names start with ``within``) but its
    manifest.json: name, sha256 and, for a parquet file, its rows; in name order. A file listed in ``known`` (one
    written earlier and not since) keeps that entry instead of being hashed again."""
    listed = {entry.file: entry for entry in known}
    return [
        listed.get(name)
        or OutputFile(
            file=name,
            sha256=sha256_file(folder / name),
            rows=ReleaseView.rows_in(folder / name) if name.endswith(".parquet") else None,
        )
        for name in folder_files(folder)
        if name.startswith(within) and name != MANIFEST_FILE
    ]
