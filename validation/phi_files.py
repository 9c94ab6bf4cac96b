"""The strings the PHI gate reads in an HTML page (``clincorp view``'s) and a PNG figure (the card's).

An HTML page: the text of every element and the value of every attribute, each with its line; the text under an
element marked ``data-licensed`` (a full release's note text and the spans cut from it, which the gate leaves out
as it leaves out the licensed text fields of the release itself) is not read, and the page's own scripts and style
sheet (the package's, not the release's) neither. Pages are parsed with lxml, network access off.

A PNG figure: its text chunks (``tEXt``, ``zTXt``, ``iTXt``). Matplotlib writes the ones the card asks for
(:data:`FIGURE_KEYWORDS`): their text is read as any string is; any other is a finding in itself. The chunks are
read here, not with Pillow's ``Image.text``: that merges the three kinds into one mapping by keyword, and a
finding names its chunk's kind (``zTXt:Description``) and every chunk, a repeated keyword included.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator

from lxml import html

from clinical_corpora.core.errors import ClincorpError

LICENSED = "data-licensed"
"""The attribute marking an element of a view's page whose text is a full release's licensed text."""
FIGURE_KEYWORDS = frozenset({"Software", "Description"})
"""The text chunks a card's figure holds (``builders/release/card/figures.py``'s matplotlib metadata)."""
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_TEXT_CHUNKS = (b"tEXt", b"zTXt", b"iTXt")
_NOT_DATA = frozenset({"script", "style"})
PageString = tuple[str, str, int | None]
"""A string of a page: its text, its place (``td``, ``a@href``) and its line."""


def page_strings(page: bytes, name: str) -> tuple[list[PageString], int]:
    """The strings of an HTML page, and how many licensed elements were left out."""
    parser = html.HTMLParser(no_network=True, remove_comments=False)
    try:
        root = html.document_fromstring(page, parser=parser)
    except Exception as error:  # lxml raises several kinds for a page it cannot read
        raise ClincorpError(f"{name}: not an HTML page ({error})") from None
    strings: list[PageString] = []
    left_out = 0
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        line = element.sourceline
        strings += [(value, f"{element.tag}@{key}", line) for key, value in element.attrib.items()]
        left_out += element.get(LICENSED) is not None
        if element.text and element.text.strip() and element.tag not in _NOT_DATA and not _licensed(element):
            strings.append((element.text, element.tag, line))
        parent = element.getparent()
        if element.tail and element.tail.strip() and parent is not None and not _licensed(parent):
            strings.append((element.tail, parent.tag, line))
    return strings, left_out


def _licensed(element: html.HtmlElement) -> bool:
    """Whether ``element`` is marked licensed or sits in one that is."""
    return element.get(LICENSED) is not None or any(a.get(LICENSED) is not None for a in element.iterancestors())


def png_texts(figure: bytes, name: str) -> Iterator[tuple[str, str]]:
    """Each text chunk of a PNG figure as (``tEXt:keyword``, its text)."""
    if not figure.startswith(PNG_SIGNATURE):
        raise ClincorpError(f"{name}: not a PNG image (its first bytes are not PNG's signature)")
    at = len(PNG_SIGNATURE)
    while at + 8 <= len(figure):
        length, kind = struct.unpack(">I4s", figure[at : at + 8])
        data = figure[at + 8 : at + 8 + length]
        if len(data) != length:
            raise ClincorpError(f"{name}: a PNG chunk at byte {at} runs past the end of the file")
        if kind in _TEXT_CHUNKS:
            yield _text_chunk(kind, data, name)
        at += 12 + length


def _text_chunk(kind: bytes, data: bytes, name: str) -> tuple[str, str]:
    """A text chunk's place (``tEXt:Description``) and text (inflated when compressed)."""
    keyword, _, rest = data.partition(b"\0")
    try:
        if kind == b"zTXt":
            text = zlib.decompress(rest[1:]).decode("latin-1")
        elif kind == b"iTXt":
            compressed, rest = rest[0], rest[2:]
            _, _, rest = rest.partition(b"\0")  # language tag
            _, _, rest = rest.partition(b"\0")  # translated keyword
            text = (zlib.decompress(rest) if compressed else rest).decode("utf-8", "replace")
        else:
            text = rest.decode("latin-1")
    except (zlib.error, IndexError) as error:
        raise ClincorpError(f"{name}: a {kind.decode()} chunk cannot be read ({error})") from None
    return f"{kind.decode()}:{keyword.decode('latin-1')}", text
