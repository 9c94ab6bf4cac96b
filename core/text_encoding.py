"""The encodings a user's copy of a source may be read in (``clincorp rehydrate --source-encoding``): UTF-8 unless
named, a name Python's codecs know, and which source each applies to."""

from __future__ import annotations

import codecs
from collections.abc import Mapping

from clinical_corpora.core.errors import ClincorpError

UTF8 = "utf-8"
EVERY_SOURCE = "*"
"""The key of an encoding given without a source name: every source whose reader decodes text."""


def known_encoding(name: str) -> str:
    """``name`` as Python's codecs call it (``latin-1`` → ``iso8859-1``); a ClincorpError for one they lack."""
    try:
        info = codecs.lookup(name)
        "".encode(info.name)  # a bytes-to-bytes codec (base64, zlib) is a LookupError here: no text encoding
    except LookupError:
        raise ClincorpError(
            f"unknown text encoding {name!r}: expected a name Python's codecs know (utf-8, latin-1, cp1252, utf-16, …)"
        ) from None
    return info.name


def source_encoding(encodings: Mapping[str, str], source: str) -> str:
    """The encoding ``source`` is read in: its own, else the one given for every source, else UTF-8."""
    return encodings.get(source) or encodings.get(EVERY_SOURCE) or UTF8
