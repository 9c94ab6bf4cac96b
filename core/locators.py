"""Source documents named by locator: ``<source>:<key>``, the key saying where in the source the text is.

A locator names one licensed string of one source as the builder reads it: a file inside a folder source
(``shac:train/mimic/0101.txt``), a row of a table (``noteevents:12345``, a column other than the text as
``noteevents:12345/DESCRIPTION``), a terminology entry (``umls:C0032285``). Text-free releases store
locators with the sha256 of each text; rehydration reads them back through the corpus's builder.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection

from clinical_corpora.core.errors import ClincorpError

LOCATOR = r"[a-z][a-z0-9_]*:\S{1,200}"
"""A locator as a release records it: ``<source>:<key>``, the key at most 200 characters without white space."""


def locator(source: str, key: str) -> str:
    return f"{source}:{key}"


def split_locator(value: str) -> tuple[str, str]:
    """(source, key) of a locator; an error naming it when it has no ``source:`` part."""
    source, sep, key = value.partition(":")
    if not sep or not source or not key:
        raise ClincorpError(f"document locator {value!r} is not <source>:<key>")
    return source, key


def text_sha256(text: str) -> str:
    """The sha256 a text-free release records for a document's text (its UTF-8 bytes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def keys_of(source: str, locators: Collection[str]) -> list[str]:
    """The keys of the locators naming ``source``, sorted."""
    return sorted(key for name, key in map(split_locator, locators) if name == source)
