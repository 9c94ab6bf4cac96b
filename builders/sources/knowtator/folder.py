"""The files of one annotator's Knowtator folder: document id -> ``<doc>.txt.knowtator.xml``, found by one walk.

Each file is read over its text by :mod:`builders.sources.knowtator.xml`.
"""

from __future__ import annotations

from pathlib import Path

from clinical_corpora.builders.sources.discovery import find_documents

KNOWTATOR_SUFFIX = ".txt.knowtator.xml"
KNOWTATOR_FILES = f"Knowtator files <doc>{KNOWTATOR_SUFFIX}"


def knowtator_files(annotation_dir: Path, *, quiet: bool = False) -> dict[str, Path]:
    """Document id → ``<doc>.txt.knowtator.xml`` of one annotator's folder (:mod:`builders.sources.discovery`:
    suffix in any case, linked folders followed, hidden files counted in a warning, others an error)."""
    documents = find_documents(annotation_dir, [KNOWTATOR_SUFFIX], what=KNOWTATOR_FILES, quiet=quiet)
    return {document.id: document.require(KNOWTATOR_SUFFIX) for document in documents}
