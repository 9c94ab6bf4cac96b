"""The normalised text of a source document, and where each of its characters comes from.

Two copies of one note often differ only in ways that do not change what it says: a byte-order mark, CRLF
line ends, spaces left at the end of lines, or an accented letter stored decomposed (NFD) instead of
composed (NFC). The normalised text removes exactly those differences: the leading BOM is dropped, spaces
and tabs ending a line (or the text) are dropped, ``\\r\\n`` becomes ``\\n``, and each run of non-ASCII
characters (with the letter before it) is put in Unicode NFC.

Each difference is an *edit*: a region of the text replaced by a (possibly empty) normalised piece. Every
character outside the edits is copied unchanged, so a position outside them maps exactly in both directions;
a character inside an edit maps nowhere. A text-free release records the edits of the maintainer's text
(positions and lengths only, never their characters), so the maintainer's offsets map into the normalised
text without the text itself.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import numpy as np

BOM = "\ufeff"
_LINE_END = re.compile(r"[ \t]*\r\n|[ \t]+(?=\n|\Z)")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_NOT_COMPOSING = " \t\r\n"
"""Characters that never compose with a following combining mark: a non-ASCII run is extended over the
character before it unless it is one of these."""

Edit = tuple[int, int, int]
"""(start, end, normalised length): ``text[start:end]`` becomes that many normalised characters."""


@dataclass(frozen=True)
class EditCounts:
    """How a text differs from its normalised form: a BOM, CRLF line ends, lines ending in spaces or tabs,
    non-NFC runs."""

    bom: bool = False
    crlf: int = 0
    trailing_whitespace: int = 0
    unicode: int = 0

    def describe(self) -> list[str]:
        return [
            *(["a byte-order mark"] if self.bom else []),
            *([f"{self.crlf} CRLF line ends"] if self.crlf else []),
            *([f"{self.trailing_whitespace} lines ending in spaces or tabs"] if self.trailing_whitespace else []),
            *([f"{self.unicode} characters not in Unicode NFC"] if self.unicode else []),
        ]


@dataclass(frozen=True)
class Normalised:
    """A text's normalised form, its edits, and for each normalised character the position of the original
    character it copies (-1 when an edit made it)."""

    text: str
    edits: list[Edit]
    copied_from: np.ndarray
    counts: EditCounts


def normalise(text: str) -> Normalised:
    """The normalised form of ``text`` (see the module docstring) with its edits."""
    edits: list[tuple[int, int, str]] = []
    first = 1 if text.startswith(BOM) else 0
    if first:
        edits.append((0, 1, ""))
    crlf = trailing = 0
    for match in _LINE_END.finditer(text, first):
        if match.group().endswith("\r\n"):
            crlf += 1
            trailing += match.end() - match.start() > 2
            edits.append((match.start(), match.end() - 1, ""))
        else:
            trailing += 1
            edits.append((match.start(), match.end(), ""))
    unicode = 0
    for match in _NON_ASCII.finditer(text, first):
        start = (
            match.start() - 1
            if match.start() > first and text[match.start() - 1] not in _NOT_COMPOSING
            else match.start()
        )
        edit = _nfc_edit(text, start, match.end())
        if edit is not None:
            unicode += 1
            edits.append(edit)
    edits.sort()
    return _apply(text, edits, EditCounts(bool(first), crlf, trailing, unicode))


def _nfc_edit(text: str, start: int, end: int) -> tuple[int, int, str] | None:
    """The smallest region of ``text[start:end]`` that NFC changes, with its NFC form; None when none."""
    piece = text[start:end]
    composed = unicodedata.normalize("NFC", piece)
    if composed == piece:
        return None
    head = 0
    while head < min(len(piece), len(composed)) and piece[head] == composed[head]:
        head += 1
    tail = 0
    while tail < min(len(piece), len(composed)) - head and piece[-1 - tail] == composed[-1 - tail]:
        tail += 1
    return start + head, end - tail, composed[head : len(composed) - tail]


def _apply(text: str, edits: list[tuple[int, int, str]], counts: EditCounts) -> Normalised:
    pieces: list[str] = []
    copied: list[np.ndarray] = []
    position = 0
    for start, end, replacement in edits:
        pieces += [text[position:start], replacement]
        copied += [np.arange(position, start, dtype=np.int64), np.full(len(replacement), -1, dtype=np.int64)]
        position = end
    pieces.append(text[position:])
    copied.append(np.arange(position, len(text), dtype=np.int64))
    return Normalised(
        "".join(pieces),
        [(start, end, len(replacement)) for start, end, replacement in edits],
        np.concatenate(copied),
        counts,
    )


def original_to_normalised(length: int, edits: list[Edit]) -> np.ndarray:
    """For each character of a text of ``length`` characters with ``edits``, its position in the normalised
    text (-1 inside an edit): computed from the edits alone, without the text."""
    mapped = np.full(length, -1, dtype=np.int64)
    position = normalised = 0
    for start, end, replaced in edits:
        mapped[position:start] = np.arange(normalised, normalised + start - position)
        normalised += start - position + replaced
        position = end
    mapped[position:] = np.arange(normalised, normalised + length - position)
    return mapped


def normalised_length(length: int, edits: list[Edit]) -> int:
    return length - sum(end - start for start, end, _ in edits) + sum(replaced for _, _, replaced in edits)
