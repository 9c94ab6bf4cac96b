"""Record models of the ODIE anaphora corpus (Savova et al., JAMIA 2011): one row per note.

A note carries its markables, its pairs (an anaphor linked to its immediately preceding
antecedent) and its identity chains. Value sets come from :mod:`clinical_corpora.core.labels`, the one source
of truth for the attributes of Savova et al. 2011. A discontinuous markable (``CT ... pelvis``) is released as
its covering span (``start``, ``end``, ``text`` from the first fragment's start to the last
fragment's end) plus the list of its ``fragments``; a contiguous markable has one fragment.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_corpora.core.labels import (
    BaggaClass,
    GrammaticalCategory,
    RelationType,
    SemanticClass,
    SentenceFunction,
)
from clinical_corpora.core.union_find import UnionFind
from clinical_corpora.schemas.bounded import Identifier
from clinical_corpora.schemas.licensed import LicensedText
from clinical_corpora.schemas.spans import Span, TextRecord, unique_ids

Institution = Literal["mayo", "upmc"]
NoteType = Literal["cc", "p", "er", "ds", "sp", "rad"]
"""Savova et al. 2011's note types: clinical notes, pathology (Mayo); ER, discharge summaries, surgical
pathology and radiology notes (UPMC)."""
RELATION_TYPES: tuple[RelationType, ...] = get_args(RelationType)
SEMANTIC_CLASSES: tuple[SemanticClass, ...] = get_args(SemanticClass)


class Fragment(Span):
    """One contiguous piece of a markable."""


class Markable(Span):
    """A clinical concept or person mention; attributes are None where nobody assigned them."""

    id: Identifier
    fragments: list[Fragment] = Field(min_length=1)
    grammatical_category: GrammaticalCategory | None
    sentence_function: SentenceFunction | None
    semantic_class: SemanticClass

    @model_validator(mode="after")
    def _fragments_make_up_the_span(self) -> Markable:
        if (self.fragments[0].start, self.fragments[-1].end) != (self.start, self.end):
            raise ValueError(
                f"markable {self.id!r}: fragments {self._pieces()} do not start and end "
                f"where the markable does ({self.start}-{self.end})"
            )
        if any(left.end > right.start for left, right in pairwise(self.fragments)):
            raise ValueError(f"markable {self.id!r}: fragments {self._pieces()} overlap or are out of order")
        return self

    def _pieces(self) -> list[tuple[int, int]]:
        return [(fragment.start, fragment.end) for fragment in self.fragments]


class Pair(BaseModel):
    """An anaphoric relation; ``bagga_class`` is None where it was not assigned (or not in the input)."""

    model_config = ConfigDict(extra="forbid")
    id: Identifier
    anaphor_id: Identifier
    antecedent_id: Identifier
    bagga_class: BaggaClass | None
    relation: RelationType


class Chain(BaseModel):
    """Markables joined by identity pairs, in text order (grounding instance first)."""

    model_config = ConfigDict(extra="forbid")
    id: Identifier
    markable_ids: list[Identifier] = Field(min_length=2)


class OdieDocument(TextRecord):
    """One clinical note with its anaphoric annotations."""

    id: Identifier
    institution: Institution
    note_type: NoteType
    text: LicensedText
    markables: list[Markable]
    pairs: list[Pair]
    chains: list[Chain]

    @model_validator(mode="after")
    def _references_resolve(self) -> OdieDocument:
        unique_ids(self.markables, what="markable")
        unique_ids(self.pairs, what="pair")
        unique_ids(self.chains, what="chain")
        known = {markable.id for markable in self.markables}
        for pair in self.pairs:
            for role, target in (("anaphor", pair.anaphor_id), ("antecedent", pair.antecedent_id)):
                if target not in known:
                    raise ValueError(f"pair {pair.id!r} names {role} {target!r}, which is not a markable")
            if pair.anaphor_id == pair.antecedent_id:
                raise ValueError(f"pair {pair.id!r} links markable {pair.anaphor_id!r} to itself")
        chained = [markable_id for chain in self.chains for markable_id in chain.markable_ids]
        for markable_id in chained:
            if markable_id not in known:
                raise ValueError(f"a chain names {markable_id!r}, which is not a markable")
        if len(chained) != len(set(chained)):
            raise ValueError("a markable belongs to more than one chain (or twice to one)")
        expected = identity_components(self.pairs)
        found = {frozenset(chain.markable_ids) for chain in self.chains}
        if found != expected:
            raise ValueError(
                f"chains {sorted(map(sorted, found))} are not the markables joined by "
                f"identity pairs {sorted(map(sorted, expected))}"
            )
        return self


def identity_components(pairs: list[Pair]) -> set[frozenset[str]]:
    """The sets of markable ids connected by identity pairs (two or more each)."""
    components: UnionFind[str] = UnionFind()
    for pair in pairs:
        if pair.relation == "identity":
            components.union(pair.anaphor_id, pair.antecedent_id)
    return {frozenset(ids) for ids in components.groups()}
