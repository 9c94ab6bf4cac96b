"""Reading the documents a text-free release names from a folder source (locators: ``core/locators.py``)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator

from clinical_corpora.builders.sources.discovery import Document
from clinical_corpora.builders.sources.text_lines import read_utf8
from clinical_corpora.core.file_limits import MAX_FILE_BYTES
from clinical_corpora.core.locators import keys_of, locator
from clinical_corpora.core.text_encoding import UTF8


def read_document_files(
    source: str,
    documents: Iterable[Document],
    locators: Collection[str],
    max_bytes: int = MAX_FILE_BYTES,
    encoding: str = UTF8,
) -> Iterator[tuple[str, str]]:
    """(locator, text) of every wanted ``<source>:<document id><suffix>`` among the documents a reader's
    discovery found (so a locator names a file whatever the case of its suffix on disk), read as UTF-8 (or
    ``encoding``) with line endings untouched (a file over ``max_bytes`` is a SourceError naming it)."""
    wanted = set(keys_of(source, locators))
    for document in documents:
        for suffix, path in document.files.items():
            if f"{document.id}{suffix}" in wanted:
                yield locator(source, f"{document.id}{suffix}"), read_utf8(path, max_bytes, encoding)
