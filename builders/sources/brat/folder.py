"""BRAT standoff annotations: reader and writer.

The documents of a folder (each a ``<doc>.txt`` and its ``<doc>.ann``), each one's text and
annotations, and ``.ann`` content written from a document. The annotations are
:mod:`builders.sources.brat.annotations`' types, the lines are read by
:mod:`builders.sources.brat.standoff` and broken annotations left out by
:mod:`builders.sources.brat.resolution`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from clinical_corpora.builders.sources.brat.annotations import BratDocument, OnBroken
from clinical_corpora.builders.sources.brat.standoff import parse_brat
from clinical_corpora.builders.sources.discovery import BRAT_CONFIGURATION, Document, find_documents
from clinical_corpora.builders.sources.text_lines import read_utf8
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.file_limits import MAX_FILE_BYTES

ANN_SUFFIX = ".ann"
TEXT_SUFFIX = ".txt"


def read_brat(
    ann_path: str | Path, text: str, *, on_broken: OnBroken | None = None, max_bytes: int = MAX_FILE_BYTES
) -> BratDocument:
    """Read the ``.ann`` file at ``ann_path``, checking it against the document ``text``; a file over
    ``max_bytes`` is a SourceError (:mod:`core.file_limits`)."""
    return parse_brat(read_utf8(ann_path, max_bytes), text, ann_path, on_broken=on_broken)


def write_brat(doc: BratDocument) -> str:
    """Serialise ``doc`` as ``.ann`` content, one kind after the other."""
    lines: list[str] = []
    for textbound in doc.textbounds:
        offsets = ";".join(f"{start} {end}" for start, end in textbound.fragments)
        lines.append(f"{textbound.id}\t{textbound.type} {offsets}\t{textbound.text}")
    for event in doc.events:
        pairs = [(event.type, event.trigger), *event.arguments]
        lines.append(f"{event.id}\t" + " ".join(f"{role}:{target}" for role, target in pairs))
    for attribute in doc.attributes:
        value = "" if attribute.value is None else f" {attribute.value}"
        lines.append(f"{attribute.id}\t{attribute.name} {attribute.target}{value}")
    for relation in doc.relations:
        arguments = " ".join(f"{role}:{target}" for role, target in relation.arguments)
        lines.append(f"{relation.id}\t{relation.type} {arguments}")
    for normalization in doc.normalizations:
        reference = f"{normalization.resource}:{normalization.entry}"
        lines.append(
            f"{normalization.id}\t{normalization.type} {normalization.target} {reference}\t{normalization.text}"
        )
    for note in doc.notes:
        lines.append(f"{note.id}\t{note.type} {note.target}\t{note.text}")
    for equivalence in doc.equivalences:
        lines.append(f"*\t{equivalence.type} " + " ".join(equivalence.members))
    for line in lines:
        if "\n" in line or "\r" in line:
            raise ValueError(f"cannot write a BRAT line containing a line break: {line!r}")
    return "".join(f"{line}\n" for line in lines)


BRAT_FILES = "BRAT .txt/.ann files"


def brat_documents(root: str | Path, *, quiet: bool = False) -> list[Document]:
    """The documents under ``root`` (:mod:`builders.sources.discovery`: suffixes in any case, linked folders
    followed, brat's configuration files and hidden files counted in a warning), sorted by id; each
    may lack its ``.txt`` or ``.ann`` (see :func:`brat_document_ids` for a listing that refuses that)."""
    return find_documents(
        Path(root), (ANN_SUFFIX, TEXT_SUFFIX), what=BRAT_FILES, ignored=BRAT_CONFIGURATION, quiet=quiet
    )


def brat_document_ids(root: str | Path, *, text_without_ann: bool = False) -> list[str]:
    """Sorted ids (relative path without suffix, ``/``-separated) of the documents under ``root``.

    Every ``.ann`` needs its ``.txt`` and every ``.txt`` its ``.ann``; otherwise a SourceError lists
    the unpaired files. With ``text_without_ann`` a ``.txt`` alone is a document with no
    annotations, as brat shows it (:func:`read_brat_document` reads it so).
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


def read_brat_document(
    document: Document,
    *,
    text_without_ann: bool = False,
    on_broken: OnBroken | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> tuple[str, BratDocument]:
    """Text and annotations of a document (as listed by :func:`brat_documents`). A missing companion is a
    SourceError naming the file found, except a ``.txt`` alone with ``text_without_ann``: no annotations. A
    file over ``max_bytes`` is a SourceError naming it (:mod:`core.file_limits`)."""
    text = read_utf8(document.paths.get(TEXT_SUFFIX) or document.require(TEXT_SUFFIX), max_bytes)
    ann = document.paths.get(ANN_SUFFIX)
    if ann is None and text_without_ann:
        return text, BratDocument()
    return text, read_brat(ann or document.require(ANN_SUFFIX), text, on_broken=on_broken, max_bytes=max_bytes)


def iter_brat_folder(root: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> Iterator[tuple[str, str, BratDocument]]:
    """Yield (document id, text, annotations) for every document under ``root``, sorted by id; a document
    lacking its ``.txt`` or ``.ann`` is a SourceError naming it."""
    for document in brat_documents(root):
        text, doc = read_brat_document(document, max_bytes=max_bytes)
        yield document.id, text, doc
