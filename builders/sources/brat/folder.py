"""The documents of a BRAT folder: each a ``<doc>.txt`` and its ``<doc>.ann``, found by one walk.

Which documents a folder holds, with the files of each (:mod:`builders.sources.discovery`); their ``.ann``
content is read (and written) by :mod:`builders.sources.brat.standoff`, into
:mod:`builders.sources.brat.annotations`' types.
"""

from __future__ import annotations

from pathlib import Path

from clinical_corpora.builders.sources.discovery import BRAT_CONFIGURATION, EXPORT_LISTING, Document, find_documents
from clinical_corpora.core.errors import SourceError

ANN_SUFFIX = ".ann"
TEXT_SUFFIX = ".txt"
BRAT_FILES = "BRAT .txt/.ann files"


def brat_documents(root: str | Path, *, quiet: bool = False) -> list[Document]:
    """The documents under ``root`` (:mod:`builders.sources.discovery`: suffixes in any case, linked folders
    followed, brat's configuration files, an export's ``dropped.tsv`` and hidden files counted in a warning),
    sorted by id; each may lack its ``.txt`` or ``.ann`` (see :func:`brat_document_ids` for a listing that
    refuses that)."""
    return find_documents(
        Path(root),
        (ANN_SUFFIX, TEXT_SUFFIX),
        what=BRAT_FILES,
        ignored=BRAT_CONFIGURATION | {EXPORT_LISTING},
        quiet=quiet,
    )


def brat_document_ids(root: str | Path, *, text_without_ann: bool = False) -> list[str]:
    """Sorted ids (relative path without suffix, ``/``-separated) of the documents under ``root``.

    Every ``.ann`` needs its ``.txt`` and every ``.txt`` its ``.ann``; otherwise a SourceError lists
    the unpaired files. With ``text_without_ann`` a ``.txt`` alone is a document with no
    annotations, as brat shows it (:func:`builders.sources.brat.standoff.read_brat_document` reads it so).
    """
    documents = brat_documents(root)
    unpaired = sorted(
        path.relative_to(root).as_posix()
        for document in documents
        if len(document.paths) == 1 and not (text_without_ann and TEXT_SUFFIX in document.paths)
        for path in document.files.values()
    )
    if unpaired:
        raise SourceError(root, "each document needs both a .txt and a .ann; unpaired: " + ", ".join(unpaired))
    return [document.id for document in documents]
