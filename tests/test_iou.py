"""Character IoU as the SNOMED CT Entity Linking Challenge scores it, with hand-derived values."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clinical_corpora.core.annotations import SpanAnnotation
from clinical_corpora.corpora.snomed_el.scoring import score_files
from clinical_corpora.validation.metrics.iou import (
    macro_char_iou,
    per_concept_char_iou,
    score,
    support_weighted_char_iou,
)

SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "snomed_el" / "sample"
CT_HEAD = 303653007  # the paper's example: "CT head revealed no internal hemorrhage."


def span(note_id: str, start: int, end: int, concept_id: int) -> SpanAnnotation:
    return SpanAnnotation(note_id=note_id, start=start, end=end, concept_id=concept_id)


def test_paper_example_missing_characters() -> None:
    gold = [span("n1", 0, 7, CT_HEAD)]  # "CT head"

    assert macro_char_iou(gold, [span("n1", 0, 2, CT_HEAD)]) == pytest.approx(2 / 7)  # "CT"


def test_paper_example_extra_characters() -> None:
    # "CT head revealed": 7 shared characters out of 16 (the paper prints 2/16, a slip: "CT head" is inside)
    assert macro_char_iou([span("n1", 0, 7, CT_HEAD)], [span("n1", 0, 16, CT_HEAD)]) == pytest.approx(7 / 16)


GOLD = [span("A", 0, 10, 1), span("A", 20, 30, 2), span("B", 0, 4, 1)]
PRED = [span("A", 5, 15, 1), span("A", 20, 30, 3), span("B", 0, 4, 1)]


def test_characters_are_pooled_over_notes_and_one_sided_concepts_score_zero() -> None:
    # concept 1: gold 10+4 chars, pred 10+4, shared 5+4 → 9 / 19 (not the mean of per-note IoUs, 2/3)
    # concept 2 only in gold, concept 3 only predicted: 0 each; macro over the union of concepts
    assert macro_char_iou(GOLD, PRED) == pytest.approx((9 / 19 + 0 + 0) / 3)


def test_support_weights_are_gold_span_counts() -> None:
    # weights: concept 1 has 2 gold spans, concept 2 one, concept 3 none
    assert support_weighted_char_iou(GOLD, PRED) == pytest.approx((2 * 9 / 19 + 1 * 0) / 3)


def test_per_concept_table() -> None:
    rows = {row.concept_id: row for row in per_concept_char_iou(GOLD, PRED)}

    assert sorted(rows) == [1, 2, 3]
    assert (rows[1].intersection_chars, rows[1].union_chars, rows[1].gold_spans, rows[1].pred_spans) == (
        9,
        19,
        2,
        2,
    )
    assert (rows[2].iou, rows[2].gold_chars, rows[2].pred_chars) == (0.0, 10, 0)
    assert (rows[3].iou, rows[3].gold_spans, rows[3].pred_spans) == (0.0, 0, 1)


def test_later_overlapping_span_overwrites_characters_like_the_reference() -> None:
    gold = [span("n", 0, 10, 1)]
    # concept 2 takes characters 5-9 from concept 1: concept 1 scores 5/10, concept 2 (pred only) 0
    assert macro_char_iou(gold, [span("n", 0, 10, 1), span("n", 5, 10, 2)]) == pytest.approx(0.25)
    # concept 1 written last takes every character back; concept 2 keeps no character and scores 0
    assert macro_char_iou(gold, [span("n", 5, 10, 2), span("n", 0, 10, 1)]) == pytest.approx(0.5)


def test_overlapping_spans_of_one_concept_count_each_character_once() -> None:
    assert macro_char_iou([span("n", 0, 10, 1)], [span("n", 0, 6, 1), span("n", 4, 10, 1)]) == 1.0


def test_nothing_to_score_is_an_error() -> None:
    with pytest.raises(ValueError, match="nothing to score"):
        macro_char_iou([], [])


def test_single_note_bootstrap_is_degenerate() -> None:
    result = score([span("n", 0, 10, 1)], [span("n", 0, 5, 1)], replicates=200)

    assert result["macro_char_iou_ci95"] == pytest.approx([0.5, 0.5])


def test_bootstrap_resamples_notes() -> None:
    # note A alone scores 1 (concept 1 found), note B alone 0 (concept 2 missed), both together 0.5;
    # a quarter of the replicates draw A twice and a quarter B twice, so the 95% interval is [0, 1]
    gold = [span("A", 0, 4, 1), span("B", 0, 4, 2)]
    pred = [span("A", 0, 4, 1)]

    result = score(gold, pred, replicates=1000, seed=7)

    assert result["macro_char_iou"] == 0.5
    assert result["macro_char_iou_ci95"] == [0.0, 1.0]
    assert result == score(gold, pred, replicates=1000, seed=7)


def test_bootstrap_equals_scoring_literally_resampled_notes() -> None:
    gold = [*GOLD, span("C", 3, 9, 2), span("D", 0, 5, 4)]
    pred = [*PRED, span("C", 4, 9, 2), span("D", 1, 5, 1)]
    replicates, seed = 60, 11
    notes = sorted({a.note_id for a in gold} | {a.note_id for a in pred})
    rng = np.random.default_rng(seed)
    expected = []
    for _ in range(replicates):
        drawn = [notes[i] for i in rng.integers(0, len(notes), len(notes))]
        copies = [(f"{note}#{k}", note) for k, note in enumerate(drawn)]
        resampled_gold = [
            span(copy, a.start, a.end, a.concept_id) for copy, note in copies for a in gold if a.note_id == note
        ]
        resampled_pred = [
            span(copy, a.start, a.end, a.concept_id) for copy, note in copies for a in pred if a.note_id == note
        ]
        expected.append(macro_char_iou(resampled_gold, resampled_pred))

    result = score(gold, pred, replicates=replicates, seed=seed)

    assert result["macro_char_iou_ci95"] == pytest.approx(np.percentile(expected, [2.5, 97.5]).tolist())


def _set_based_macro_iou(gold: list[SpanAnnotation], pred: list[SpanAnnotation]) -> float:
    """Independent restatement: label (note, char) cells per side, last write wins, then set IoU."""

    def cells(annotations: list[SpanAnnotation]) -> dict[tuple[str, int], int]:
        labels: dict[tuple[str, int], int] = {}
        for a in annotations:
            for char in range(a.start, a.end):
                labels[(a.note_id, char)] = a.concept_id
        return labels

    gold_cells, pred_cells = cells(gold), cells(pred)
    concepts = {a.concept_id for a in gold} | {a.concept_id for a in pred}
    ious = []
    for concept in concepts:
        g = {cell for cell, label in gold_cells.items() if label == concept}
        p = {cell for cell, label in pred_cells.items() if label == concept}
        ious.append(len(g & p) / len(g | p) if g | p else 0.0)
    return sum(ious) / len(ious)


spans = st.builds(
    lambda note, start, length, concept: span(note, start, start + length, concept),
    st.sampled_from(["n1", "n2", "n3"]),
    st.integers(0, 40),
    st.integers(1, 12),
    st.integers(1, 5),
)


@settings(max_examples=150)
@given(gold=st.lists(spans, max_size=12), pred=st.lists(spans, max_size=12))
def test_macro_iou_matches_a_set_based_restatement(gold: list[SpanAnnotation], pred: list[SpanAnnotation]) -> None:
    if not gold and not pred:
        return
    assert macro_char_iou(gold, pred) == pytest.approx(_set_based_macro_iou(gold, pred))


def test_score_files_reports_the_json_keys(tmp_path: Path) -> None:
    pred = tmp_path / "pred.csv"
    pred.write_text("note_id,start,end,concept_id\nA,5,15,1\nA,20,30,3\nB,0,4,1\n")
    gold = tmp_path / "gold.csv"
    gold.write_text("note_id,start,end,concept_id\nA,0,10,1\nA,20,30,2\nB,0,4,1\n")

    result = json.loads(json.dumps(score_files(gold, pred, replicates=100)))

    assert result["macro_char_iou"] == pytest.approx(3 / 19)
    assert result["support_weighted_char_iou"] == pytest.approx(6 / 19)
    assert {
        "macro_char_iou_ci95",
        "support_weighted_char_iou_ci95",
        "per_concept",
        "bootstrap",
    } <= result.keys()
    assert [row["concept_id"] for row in result["per_concept"]] == [1, 2, 3]


def test_gold_scored_against_itself_is_perfect() -> None:
    result = score_files(SAMPLE / "train_annotations.csv", SAMPLE / "train_annotations.csv", replicates=50)

    assert result["macro_char_iou"] == result["support_weighted_char_iou"] == 1.0
    assert result["macro_char_iou_ci95"] == [1.0, 1.0]
    assert result["bootstrap"]["notes"] == 9


def test_predictions_without_gold_give_no_interval_and_no_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "All-NaN slice" RuntimeWarning reached the user
        scored = score([], [span("n1", 0, 4, CT_HEAD)], replicates=20)
    assert scored["macro_char_iou_ci95"] == [0.0, 0.0]  # the predicted concept has no gold: IoU 0
    assert all(math.isnan(bound) for bound in scored["support_weighted_char_iou_ci95"])  # no gold span to weigh
