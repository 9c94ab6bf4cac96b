"""One annotator's Knowtator annotations of a document in the ODIE anaphora schema (Savova et al. 2011).

The schema's classes and slots (with the values each string slot allows), the markables and pairs read from a
file, and the keys and identity chains by which annotators' documents are compared.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import get_args

from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.labels import (
    BaggaClass,
    GrammaticalCategory,
    RelationType,
    SemanticClass,
    SentenceFunction,
)
from clinical_corpora.core.union_find import UnionFind

MARKABLE_CLASS = "Markable"
PAIR_CLASS = "Pair"
FRAGMENT_SEPARATOR = " ... "
"""How Knowtator joins the texts of a discontinuous span in ``<spannedText>``."""

MARKABLE_STRING_SLOTS: Mapping[str, tuple[str, ...]] = {
    "grammatical_category": get_args(GrammaticalCategory),
    "sentence_function": get_args(SentenceFunction),
    "semantic_class": get_args(SemanticClass),
}
PAIR_STRING_SLOTS: Mapping[str, tuple[str, ...]] = {
    "bagga_class": get_args(BaggaClass),
    "relation_type": get_args(RelationType),
}
PAIR_COMPLEX_SLOTS = ("anaphor", "antecedent")
REQUIRED_SLOTS = {
    MARKABLE_CLASS: ("semantic_class",),
    PAIR_CLASS: ("relation_type", *PAIR_COMPLEX_SLOTS),
}

Fragment = tuple[int, int]
"""A ``(start, end)`` character span, end exclusive."""
MarkableKey = tuple[Fragment, ...]
"""A markable identified by its fragments: comparable across annotators' files."""


@dataclass(frozen=True)
class Markable:
    """A linguistic expression for a clinical concept taking part in anaphoric relations."""

    id: str
    fragments: tuple[Fragment, ...]
    text: str
    semantic_class: SemanticClass
    grammatical_category: GrammaticalCategory | None
    sentence_function: SentenceFunction | None

    @property
    def start(self) -> int:
        return self.fragments[0][0]

    @property
    def end(self) -> int:
        return self.fragments[-1][1]


@dataclass(frozen=True)
class Pair:
    """An anaphor linked to its immediately preceding antecedent."""

    id: str
    anaphor_id: str
    antecedent_id: str
    relation: RelationType
    bagga_class: BaggaClass | None


@dataclass(frozen=True)
class KnowtatorDocument:
    """One annotator's markables and pairs over one document text."""

    doc_id: str
    text: str
    annotators: tuple[str, ...]
    markables: tuple[Markable, ...]
    pairs: tuple[Pair, ...]
    crlf_as_one: bool = False
    """The file's offsets counted CR LF as one character (eHOST); they were mapped back."""
    problems: tuple[SourceError, ...] = field(default=(), compare=False)
    """Broken annotations left out of this document (with the pairs that need them), by line."""

    def markable(self, markable_id: str) -> Markable:
        """The markable with this Knowtator mention id."""
        for markable in self.markables:
            if markable.id == markable_id:
                return markable
        raise KeyError(markable_id)

    def identity_chains(self) -> tuple[tuple[str, ...], ...]:
        """Markable ids linked by identity pairs, each chain in text order (grounding first)."""
        chains = UnionFind(m.id for m in self.markables)  # in text order: chains start with the grounding
        for pair in self.pairs:
            if pair.relation == "identity":
                chains.union(pair.anaphor_id, pair.antecedent_id)
        return tuple(tuple(ids) for ids in chains.groups() if len(ids) > 1)

    def semantic_classes_by_key(self) -> dict[Hashable, str]:
        """Each markable's semantic class, keyed by its fragments (a :data:`MarkableKey`).

        Markables on the same span are one key; it takes the class of the first in text order.
        """
        classes: dict[Hashable, str] = {}
        for markable in self.markables:
            classes.setdefault(markable.fragments, markable.semantic_class)
        return classes

    def pair_keys(self) -> frozenset[tuple[MarkableKey, MarkableKey, str]]:
        """``(anaphor, antecedent, relation)`` with markables keyed by fragments.

        A pair between two markables on the same span has no key (it would link a span to itself).
        """
        fragments = {m.id: m.fragments for m in self.markables}
        keys = ((fragments[p.anaphor_id], fragments[p.antecedent_id], p.relation) for p in self.pairs)
        return frozenset(key for key in keys if key[0] != key[1])

    def identity_chain_keys(self) -> list[list[MarkableKey]]:
        """Identity chains with markables keyed by fragments; chains sharing a span are joined."""
        chains: UnionFind[MarkableKey] = UnionFind()
        fragments = {m.id: m.fragments for m in self.markables}
        for chain in self.identity_chains():
            chains.find(fragments[chain[0]])
            for markable_id in chain[1:]:
                chains.union(fragments[chain[0]], fragments[markable_id])
        return [keys for keys in chains.groups() if len(keys) > 1]
