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

Offsets are 0-based character offsets into the text given, end exclusive.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from syntok import segmenter

TOKEN_PATTERN = re.compile(r"\d+(?:[.,]\d+)+|\w+|[^\w\s]")


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
    spans = []
    # One paragraph at a time: syntok's analyze() pads each paragraph with as many spaces as its
    # offset before tokenizing it, which is quadratic in the length of a many-paragraph text.
    for offset, paragraph in segmenter.preprocess_with_offsets(text):
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
    tokens = tokenize(text)
    starts = [start for start, _ in sentence_spans(text)] or [0]
    groups: list[list[tuple[int, int]]] = [[] for _ in starts]
    for token in tokens:
        groups[max(bisect_right(starts, token[0]) - 1, 0)].append(token)
    return [Sentence(group[0][0], group[-1][1], tuple(group)) for group in groups if group]
