"""Jaccard agreement over (entity, concept) sets with overlap matching (seed 001's IAA)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinical_corpora.builders.sources.mimic.notes import read_span_annotations
from clinical_corpora.core.annotations import SpanAnnotation
from clinical_corpora.validation.agreement.jaccard import mean_pairwise_jaccard, pair_agreement

SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "snomed_el" / "sample"


def span(note_id: str, start: int, end: int, concept_id: int) -> SpanAnnotation:
    return SpanAnnotation(note_id=note_id, start=start, end=end, concept_id=concept_id)


def jaccard(a: list[SpanAnnotation], b: list[SpanAnnotation]) -> float:
    return pair_agreement("a", a, "b", b).jaccard


def test_overlapping_spans_with_the_same_concept_are_one_entity() -> None:
    assert jaccard([span("n", 0, 10, 1)], [span("n", 5, 12, 1)]) == 1.0


def test_same_span_with_another_concept_is_two_items() -> None:
    agreement = pair_agreement("a", [span("n", 0, 10, 1)], "b", [span("n", 0, 10, 2)])

    assert (agreement.matched, agreement.only_a, agreement.only_b, agreement.jaccard) == (0, 1, 1, 0.0)


def test_touching_spans_do_not_overlap() -> None:
    assert jaccard([span("n", 0, 10, 1)], [span("n", 10, 20, 1)]) == 0.0


def test_matching_is_one_to_one() -> None:
    # one entity split in two by the other annotator: one match, one extra item → 1 / 2
    assert jaccard([span("n", 0, 10, 1)], [span("n", 0, 4, 1), span("n", 6, 10, 1)]) == 0.5


def test_matching_is_maximal_along_chains_of_overlaps() -> None:
    # a0=[0,10) overlaps b0=[0,2) and b1=[8,12); a1=[11,15) overlaps only b1: best is a0-b0, a1-b1
    a = [span("n", 0, 10, 1), span("n", 11, 15, 1)]
    b = [span("n", 0, 2, 1), span("n", 8, 12, 1)]

    assert jaccard(a, b) == 1.0
    assert jaccard(b, a) == 1.0


def test_only_shared_notes_count() -> None:
    a = [span("shared", 0, 5, 1), span("only-a", 0, 5, 1)]
    b = [span("shared", 1, 5, 1), span("only-b", 0, 5, 2)]

    agreement = pair_agreement("a", a, "b", b)

    assert (agreement.shared_notes, agreement.jaccard) == (1, 1.0)


def test_mean_over_annotator_pairs() -> None:
    x = [span("n", 0, 5, 1), span("n", 10, 15, 2)]
    y = [span("n", 0, 5, 1), span("n", 10, 15, 3)]  # with x: 1 match, 1 + 1 unmatched → 1/3
    z = [span("n", 0, 5, 1), span("n", 10, 15, 2)]  # with x: 2/2; with y: 1/3
    w = [span("elsewhere", 0, 5, 1)]  # shares no note: left out

    report = mean_pairwise_jaccard({"x": x, "y": y, "z": z, "w": w})

    assert [(pair.annotator_a, pair.annotator_b) for pair in report.pairs] == [
        ("x", "y"),
        ("x", "z"),
        ("y", "z"),
    ]
    assert report.mean_jaccard == pytest.approx((1 / 3 + 1 + 1 / 3) / 3)


def test_no_shared_notes_is_an_error() -> None:
    with pytest.raises(ValueError, match="no two annotators share a note"):
        mean_pairwise_jaccard({"x": [span("a", 0, 1, 1)], "y": [span("b", 0, 1, 1)]})


def test_sample_second_annotator() -> None:
    # annotator_b re-annotated 3 of the notes (58 gold items there): it moved 4 boundaries (still
    # matching), dropped 2 items, relinked 2 to other concepts and added 1 → 54 / (54 + 4 + 3)
    gold = read_span_annotations(SAMPLE / "train_annotations.csv")
    second = read_span_annotations(SAMPLE / "annotators" / "annotator_b.csv")

    agreement = pair_agreement("gold", gold, "annotator_b", second)

    assert (agreement.shared_notes, agreement.matched, agreement.only_a, agreement.only_b) == (3, 54, 4, 3)
    assert agreement.jaccard == pytest.approx(54 / 61)
