"""Inter-annotator agreement as the SNOMED CT Entity Linking paper measures it (Davidson et al. 2025).

Each annotator's annotations on the notes both annotated form a set of (entity, concept) items.
Span boundary variation is ignored: two items are the same entity when they are in the same note,
their spans overlap and they carry the same concept. Matching is one-to-one, so
Jaccard = matched / (|A| + |B| - matched). The corpus figure is the mean over annotator pairs.

Matching visits the spans of a note and concept by end offset and pairs each with an unmatched,
already visited span of the other annotator that it overlaps. With each annotator's spans
non-overlapping (the challenge forbids overlaps) this greedy matching is a maximum matching.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from clinical_corpora.core.annotations import SpanAnnotation


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of two annotators on the notes they share."""

    annotator_a: str
    annotator_b: str
    shared_notes: int
    matched: int
    only_a: int
    only_b: int

    @property
    def jaccard(self) -> float:
        """matched / |A ∪ B| (1.0 when neither annotated anything on the shared notes)."""
        union = self.matched + self.only_a + self.only_b
        return self.matched / union if union else 1.0


@dataclass(frozen=True)
class AgreementReport:
    """Pairwise agreements and their mean (pairs without shared notes are left out)."""

    pairs: tuple[PairAgreement, ...]

    @property
    def mean_jaccard(self) -> float:
        return sum(pair.jaccard for pair in self.pairs) / len(self.pairs)


def pair_agreement(
    annotator_a: str,
    a: Sequence[SpanAnnotation],
    annotator_b: str,
    b: Sequence[SpanAnnotation],
    shared_notes: Collection[str] | None = None,
) -> PairAgreement:
    """Jaccard of two annotators over ``shared_notes`` (default: notes present in both)."""
    notes = set(shared_notes) if shared_notes is not None else {x.note_id for x in a} & {x.note_id for x in b}
    groups_a, groups_b = _groups(a, notes), _groups(b, notes)
    matched = sum(_matches(groups_a.get(key, []), groups_b.get(key, [])) for key in groups_a.keys() & groups_b.keys())
    size_a = sum(len(spans) for spans in groups_a.values())
    size_b = sum(len(spans) for spans in groups_b.values())
    return PairAgreement(annotator_a, annotator_b, len(notes), matched, size_a - matched, size_b - matched)


def mean_pairwise_jaccard(annotators: Mapping[str, Sequence[SpanAnnotation]]) -> AgreementReport:
    """Jaccard for every pair of annotators sharing notes, and their mean."""
    pairs = tuple(
        agreement
        for (name_a, a), (name_b, b) in combinations(sorted(annotators.items()), 2)
        if (agreement := pair_agreement(name_a, a, name_b, b)).shared_notes > 0
    )
    if not pairs:
        raise ValueError(f"no two annotators share a note (annotators: {sorted(annotators)})")
    return AgreementReport(pairs)


def _groups(annotations: Sequence[SpanAnnotation], notes: set[str]) -> dict[tuple[str, int], list[tuple[int, int]]]:
    groups: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for annotation in annotations:
        if annotation.note_id in notes:
            groups.setdefault((annotation.note_id, annotation.concept_id), []).append(
                (annotation.start, annotation.end)
            )
    return groups


def _matches(spans_a: list[tuple[int, int]], spans_b: list[tuple[int, int]]) -> int:
    """Size of a greedy one-to-one matching of overlapping spans, visited by end offset."""
    events = sorted([(end, start, 0) for start, end in spans_a] + [(end, start, 1) for start, end in spans_b])
    unmatched: list[list[tuple[int, int]]] = [[], []]
    matched = 0
    for end, start, side in events:
        partner = next(
            (other for other in unmatched[1 - side] if other[0] < end and start < other[1]),
            None,
        )
        if partner is None:
            unmatched[side].append((start, end))
        else:
            unmatched[1 - side].remove(partner)
            matched += 1
    return matched


__all__ = ["AgreementReport", "PairAgreement", "mean_pairwise_jaccard", "pair_agreement"]
