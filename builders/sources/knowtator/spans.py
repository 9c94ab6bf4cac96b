"""How the spans of a Knowtator ``<annotation>`` line up with the document's text, as Knowtator and eHOST write them.

Files written by eHOST (South et al. 2012) are read the way eHOST reads them: fragments may come in any order
(eHOST keeps the order they were drawn in) and a repeated one counts once; ``spannedText`` is compared with the
text whitespace aside (eHOST writes line breaks as spaces); offsets that count CR LF as one character (eHOST's
text pane) are detected per file and mapped back to offsets into the text as read.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass

from clinical_corpora.builders.sources.knowtator.document import FRAGMENT_SEPARATOR, Fragment
from clinical_corpora.core.errors import SourceError


@dataclass(frozen=True)
class WrittenAnnotation:
    """An ``<annotation>`` as the file writes it (its spans unchecked)."""

    written: tuple[tuple[int, int, int], ...]
    """``(start, end, line)`` of each ``<span>``, as written."""
    spanned_text: str
    annotator: str | None
    line: int
    spanned_line: int
    broken: SourceError | None = None


class OffsetCounting:
    """How a file's offsets count: characters of the text as read, or eHOST's CR LF as one character.

    eHOST shows a note in a Java text pane, which turns every CR LF into one LF, and writes offsets
    into that; they are mapped back to offsets into the text as read (the released text).
    """

    def __init__(self, text: str, crlf_as_one: bool = False) -> None:
        self.crlf_as_one = crlf_as_one
        self.text = text.replace("\r\n", "\n") if crlf_as_one else text
        # Where each CR LF's LF stands in the LF-only text: the k-th sits k characters before its CR.
        self._newlines = [m.start() - k for k, m in enumerate(re.finditer("\r\n", text))] if crlf_as_one else []

    @classmethod
    def matching(cls, text: str, annotations: Iterable[WrittenAnnotation]) -> OffsetCounting:
        """CR LF as one character when more annotations line up with the text that way."""
        as_read = cls(text)
        if "\r\n" not in text:
            return as_read
        crlf_as_one = cls(text, crlf_as_one=True)
        spanned = [a for a in annotations if a.written and a.broken is None]
        if sum(map(crlf_as_one.lines_up, spanned)) > sum(map(as_read.lines_up, spanned)):
            return crlf_as_one
        return as_read

    def lines_up(self, annotation: WrittenAnnotation) -> bool:
        written = [(start, end) for start, end, _ in annotation.written]
        if not all(0 <= start < end <= len(self.text) for start, end in written):
            return False
        return spanned_text_matches(annotation.spanned_text, written, self.text)

    def released(self, offset: int) -> int:
        """The offset into the text as read."""
        return offset + bisect_left(self._newlines, offset)


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def spanned_text_matches(spanned_text: str, fragments: list[Fragment], text: str) -> bool:
    """spannedText equals the fragments' texts joined by `` ... `` (in the order written, or in text
    order), whitespace aside: eHOST writes line breaks as spaces, XML parsing turns CR LF into LF."""
    expected = _squeeze(spanned_text)
    return any(
        expected == _squeeze(FRAGMENT_SEPARATOR.join(text[start:end] for start, end in order))
        for order in (fragments, sorted(fragments), sorted(set(fragments)))
    )


def joined_fragments(fragments: list[Fragment]) -> list[Fragment]:
    """Fragments in text order, a repeated one once, overlapping ones joined into one."""
    joined: list[Fragment] = []
    for start, end in sorted(set(fragments)):
        if joined and start < joined[-1][1]:
            joined[-1] = (joined[-1][0], max(end, joined[-1][1]))
        else:
            joined.append((start, end))
    return joined
