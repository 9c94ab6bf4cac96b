"""Reader for Knowtator XML anaphora annotations: one annotator's ``<doc>.txt.knowtator.xml`` files and their texts.

A file's annotations are read by :mod:`builders.sources.knowtator.xml` into a
:class:`~builders.sources.knowtator.document.KnowtatorDocument`. A file whose name does not match its
``textSource``, or whose text is not in the text folder, raises :class:`SourceError` (as does one that is not
a Knowtator file at all).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from clinical_corpora.builders.sources.discovery import find_documents, split_suffix
from clinical_corpora.builders.sources.knowtator.document import KnowtatorDocument
from clinical_corpora.builders.sources.knowtator.xml import document_from_xml, parse_xml_safely
from clinical_corpora.builders.sources.text_lines import read_utf8
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.file_limits import MAX_FILE_BYTES, check_file_size

KNOWTATOR_SUFFIX = ".txt.knowtator.xml"
KNOWTATOR_FILES = f"Knowtator files <doc>{KNOWTATOR_SUFFIX}"


def knowtator_files(annotation_dir: Path, *, quiet: bool = False) -> dict[str, Path]:
    """Document id → ``<doc>.txt.knowtator.xml`` of one annotator's folder (:mod:`builders.sources.discovery`:
    suffix in any case, linked folders followed, hidden files counted in a warning, others an error)."""
    documents = find_documents(annotation_dir, [KNOWTATOR_SUFFIX], what=KNOWTATOR_FILES, quiet=quiet)
    return {document.id: document.require(KNOWTATOR_SUFFIX) for document in documents}


def iter_knowtator_dir(
    annotation_dir: Path, text_dir: Path, *, max_bytes: int = MAX_FILE_BYTES
) -> Iterator[KnowtatorDocument]:
    """Read every ``*.knowtator.xml`` of one annotator's folder, in document-id order."""
    for xml_path in knowtator_files(annotation_dir).values():
        yield read_knowtator_file(xml_path, text_dir, max_bytes=max_bytes)


def read_knowtator_file(xml_path: Path, text_dir: Path, *, max_bytes: int = MAX_FILE_BYTES) -> KnowtatorDocument:
    """Read one Knowtator file; its text is ``text_dir / textSource``.

    Raises :class:`SourceError` when the file cannot be read at all (or it or its text holds more than
    ``max_bytes`` bytes: :mod:`core.file_limits`); its broken annotations are left out and listed
    in the document's ``problems`` instead.
    """
    check_file_size(xml_path, max_bytes)
    root = parse_xml_safely(xml_path)
    text_source = root.get("textSource")
    if root.tag != "annotations" or not text_source:
        raise SourceError(xml_path, 'expected a root <annotations textSource="<doc>.txt">', line=root.sourceline)
    named = split_suffix(xml_path.name, [KNOWTATOR_SUFFIX])
    stem = named[0] if named else ""
    if not (named and text_source.startswith(stem) and text_source[len(stem) :].lower() == ".txt"):
        raise SourceError(
            xml_path,
            f"file name does not match textSource {text_source!r}: expected {text_source}.knowtator.xml",
            line=root.sourceline,
        )
    text_path = text_dir / text_source
    if not text_path.is_file():
        raise SourceError(xml_path, f"text source {text_path} not found", line=root.sourceline)
    text = read_utf8(text_path, max_bytes)
    return document_from_xml(root, xml_path, text, Path(text_source).stem)
