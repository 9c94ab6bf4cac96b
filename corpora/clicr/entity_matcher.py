"""Dictionary recogniser of medical entities from UMLS, with CliCR's boundary refinements.

The dictionary is a :class:`~clinical_corpora.corpora.clicr.umls_index.UmlsIndex`. Matching runs sentence
by sentence, left to right, taking the longest key that starts at a token and ends at a token
(case-insensitive), then resumes after it.

Šuster & Daelemans 2018's refinements (:func:`refine_span`, also usable on entities from another tool): leading
determiners and pronouns are moved out of an entity (a match never starts on one), and a trailing
parenthetical is dropped (``heart failure (HF)`` → ``heart failure``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from clinical_corpora.builders.contract.text_units import Sentence, paragraphs, tokenize
from clinical_corpora.core.labels import Category
from clinical_corpora.corpora.clicr.umls_index import FUNCTION_WORDS, UmlsIndex

CATEGORIES: tuple[Category, ...] = ("problem", "treatment", "test")


@dataclass(frozen=True, slots=True)
class Entity:
    """A recognised entity: character span into the text, UMLS concept and category."""

    start: int
    end: int
    text: str
    cui: str
    sem_type: str
    category: Category


def refine_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span ``text[start:end]`` without leading determiners/pronouns or a trailing parenthetical.

    White space at either end goes too; None when nothing but function words remains.
    """
    tokens = tokenize(text, start, end)
    first = 0
    while first < len(tokens) and text[tokens[first][0] : tokens[first][1]].lower() in FUNCTION_WORDS:
        first += 1
    if first == len(tokens):
        return None
    start, end = tokens[first][0], tokens[-1][1]
    opening = _opening_of_trailing_parenthetical(text, start, end)
    if opening is not None and text[start:opening].strip():
        end = start + len(text[start:opening].rstrip())
    return start, end


def _opening_of_trailing_parenthetical(text: str, start: int, end: int) -> int | None:
    if text[end - 1] != ")":
        return None
    depth = 0
    for position in range(end - 1, start - 1, -1):
        depth += {")": 1, "(": -1}.get(text[position], 0)
        if depth == 0:
            return position
    return None


class EntityMatcher:
    """Longest-match dictionary recogniser over an :class:`UmlsIndex`."""

    def __init__(self, index: UmlsIndex) -> None:
        self.index = index

    def find(self, text: str, sentences: Sequence[Sentence] | None = None) -> list[Entity]:
        """Entities in ``text``, in order, not overlapping, none across a sentence boundary; ``sentences``
        default to :func:`split_sentences` of ``text``.

        Without ``sentences``, a paragraph is split into sentences only when one of its longest matches
        could cross a sentence boundary (:meth:`Paragraph.may_split`); otherwise its matches are the same
        with or without the split, and syntok (most of the matcher's time) is not run.
        """
        if sentences is not None:
            return [entity for sentence in sentences for entity in self._entities(text, sentence.tokens)]
        entities: list[Entity] = []
        for paragraph in paragraphs(text):
            tokens = paragraph.tokens
            matches = self._match_tokens(text, tokens)
            if any(
                last > first and paragraph.may_split(text, tokens[first][0], tokens[last][0])
                for first, last, _ in matches
            ):
                entities += (
                    entity for sentence in paragraph.sentences() for entity in self._entities(text, sentence.tokens)
                )
            else:
                entities += self._refined(text, tokens, matches)
        return entities

    def _entities(self, text: str, tokens: Sequence[tuple[int, int]]) -> list[Entity]:
        """The entities of one sentence's tokens."""
        return self._refined(text, tokens, self._match_tokens(text, tokens))

    def _refined(
        self, text: str, tokens: Sequence[tuple[int, int]], matches: list[tuple[int, int, int]]
    ) -> list[Entity]:
        """Entities of ``matches`` (of ``tokens``), their spans refined; a match left without words is dropped."""
        entities = []
        for first, last, entry in matches:
            refined = refine_span(text, tokens[first][0], tokens[last][1])
            if refined is not None:
                entities.append(self._entity(text, *refined, entry))
        return entities

    def _match_tokens(self, text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int, int]]:
        """``(first token, last token, entry)`` of each longest match."""
        entries = self.index.entries
        tokens = [text[start:end].lower() for start, end in spans]
        matches = []
        position, count = 0, len(tokens)
        while position < count:
            candidate, last, longest = tokens[position], position, None
            while True:
                entry = entries.get(candidate)
                if entry is None:
                    break
                if entry >= 0:
                    longest = (position, last, entry)
                last += 1
                if last == count or not entry & 1:  # -1 (a prefix only) has every bit set
                    break
                candidate = f"{candidate} {tokens[last]}"
            if longest is None:
                position += 1
            else:
                matches.append(longest)
                position = longest[1] + 1
        return matches

    def _entity(self, text: str, start: int, end: int, entry: int) -> Entity:
        cui, sem_type, category = self.index.decode(entry)
        return Entity(start, end, text[start:end], cui, sem_type, category)
