"""Sentences and tokens with character offsets, deterministic.

Choice (documented in ``corpora/clicr/README.md``):

- **Sentences** come from syntok's rule-based segmenter (no model download, same output on every
  machine). It splits paragraphs at blank lines, and sentences at terminal punctuation while
  keeping abbreviations (``Dr.``, ``e.g.``, ``i.v.``, ``vs.``), decimals and bracketed asides
  together, which cTAKES also did for the original CliCR.
- **Tokens** come from one regular expression, :data:`TOKEN_PATTERN`: a number with decimal or
  thousands separators (``38.5``, ``1,000``), a run of word characters (``COVID19``, ``HbA1c``),
  or any other single non-space character (``-``, ``/``, ``°``, ``(``). The same function splits
  the UMLS strings of the dictionary matcher, so dictionary keys and text split identically, and
  it is fast enough for the recogniser's throughput target (see ``benchmarks/entity_matcher.py``).
- :func:`paragraphs` gives syntok's paragraphs with their tokens without segmenting them (syntok is most
  of the cost): :meth:`Paragraph.sentences` segments one on demand, and :meth:`Paragraph.may_split` says
  whether a sentence could start between two tokens, so a caller can skip segmenting where it cannot.
  ``may_split`` follows syntok 1.4's private rules (``syntok._segmentation_states``, the tokenizer's
  spacing): pyproject pins ``syntok>=1.4.4,<1.5``, and tests/test_text_units.py checks them property by
  property against syntok's own segmentation.

Offsets are 0-based character offsets into the text given, end exclusive.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from syntok import segmenter
from syntok._segmentation_states import State
from syntok.tokenizer import Tokenizer

TOKEN_PATTERN = re.compile(r"\d+(?:[.,]\d+)+|\w+|[^\w\s]")

_SYNTOK_TOKEN = Tokenizer._spaces  # a run of characters syntok makes tokens of
_SPACING = Tokenizer._hyphens_and_underscore | {"\u200b"}  # what syntok leaves between tokens, besides white space
_SENTENCE_EDGES = State.terminals | State.closing_brackets | State.closing_quotes | State.opening_brackets
_MAY_END_SENTENCE = re.compile(f"[{re.escape(''.join(sorted(set(''.join(_SENTENCE_EDGES)))))}]")


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence span and its tokens' (start, end) spans, all offsets into the whole text."""

    start: int
    end: int
    tokens: tuple[tuple[int, int], ...]


def tokenize(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Token (start, end) spans of ``text[start:end]``, as offsets into ``text``."""
    stop = len(text) if end is None else end
    return [match.span() for match in TOKEN_PATTERN.finditer(text, start, stop)]


def token_strings(text: str) -> list[str]:
    """The tokens of ``text`` as strings (used to key the dictionary matcher)."""
    return TOKEN_PATTERN.findall(text)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence (start, end) spans of ``text``, from the first to the last character of each."""
    return [span for offset, paragraph in segmenter.preprocess_with_offsets(text) for span in _spans(paragraph, offset)]


def _spans(paragraph: str, offset: int) -> list[tuple[int, int]]:
    """Sentence spans of one of syntok's paragraphs (offsets into the whole text).

    One paragraph at a time: syntok's analyze() pads each paragraph with as many spaces as its offset
    before tokenizing it, which is quadratic in the length of a many-paragraph text.
    """
    spans = []
    for sentences in segmenter.analyze(paragraph):
        for sentence in sentences:
            if sentence:
                last = sentence[-1]
                spans.append((offset + sentence[0].offset, offset + last.offset + len(last.value)))
    return spans


def split_sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` with their tokens; every token lies in exactly one sentence.

    The text is tokenized once; each token goes to the last sentence starting at or before it
    (tokens before the first sentence go to the first), so no token is cut or lost even where
    syntok leaves a character out of its sentences. A sentence without tokens is left out; a
    sentence runs from its first token's start to its last token's end.
    """
    return [sentence for paragraph in paragraphs(text) for sentence in paragraph.sentences()]


@dataclass(frozen=True, slots=True)
class Paragraph:
    """One of syntok's paragraphs (``text`` starts at ``offset`` of the whole text) and the tokens that
    :func:`split_sentences` gives its sentences: those from its first sentence's start to the next
    paragraph's (and, in the first paragraph, any before)."""

    offset: int
    text: str
    tokens: list[tuple[int, int]]

    def sentences(self) -> list[Sentence]:
        """This paragraph's sentences, as :func:`split_sentences` gives them (syntok runs here)."""
        starts = [start for start, _ in _spans(self.text, self.offset)] or [0]
        groups: list[list[tuple[int, int]]] = [[] for _ in starts]
        for token in self.tokens:
            groups[max(bisect_right(starts, token[0]) - 1, 0)].append(token)
        return [Sentence(group[0][0], group[-1][1], tuple(group)) for group in groups if group]

    def may_split(self, whole: str, first: int, last: int) -> bool:
        """Whether syntok could start a sentence after character ``first`` of ``whole`` and at or before
        character ``last`` (both starts of this paragraph's tokens); False is certain, True only possible.

        syntok 1.4 (``syntok._segmentation_states``) ends a sentence after a terminal, closing bracket or
        closing quote, separated from the next token only by its spacing (white space, zero-width space,
        in-word hyphens and underscores), or before an opening bracket it cannot skip. So a start in
        (first, last] needs one of those characters in ``whole[first : last + 1]``, or a spacing
        character at ``first`` (the terminal being before it).
        """
        return whole[first] in _SPACING or _MAY_END_SENTENCE.search(whole, first, last + 1) is not None


def paragraphs(text: str) -> list[Paragraph]:
    """syntok's paragraphs of ``text`` with their tokens (see :class:`Paragraph`), without segmenting
    them into sentences; every token of ``text`` is in one of them."""
    found: list[tuple[int, str]] = []
    starts: list[int] = []
    for offset, paragraph in segmenter.preprocess_with_offsets(text):
        first = _SYNTOK_TOKEN.search(paragraph)  # syntok's first token, so its first sentence, starts here
        if first is not None:
            found.append((offset, paragraph))
            starts.append(offset + first.start())
    tokens = tokenize(text)
    if not found:
        return [Paragraph(0, text, tokens)]
    token_starts = [start for start, _ in tokens]
    cuts = [0, *(bisect_left(token_starts, start) for start in starts[1:]), len(tokens)]
    return [Paragraph(offset, paragraph, tokens[cuts[k] : cuts[k + 1]]) for k, (offset, paragraph) in enumerate(found)]
