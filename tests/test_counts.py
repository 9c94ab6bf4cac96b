"""Precision, recall and F1 counts (core.counts): the definition every scorer shares."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clinical_corpora.core.counts import NO_COUNTS, PRFCounts, f_measure, ratio


def test_precision_recall_f1_of_the_seed_worked_example() -> None:
    """Savova et al. 2011: TP 2, FP 3, FN 1 give P 0.4, R 0.667, F 0.5 (rounded)."""
    counts = PRFCounts(tp=2, predicted=5, gold=3)
    assert counts.precision == 0.4
    assert counts.recall == 2 / 3
    assert counts.f1 == pytest.approx(0.5)
    assert round(counts.f1, 1) == 0.5


def test_zero_denominators_score_zero() -> None:
    assert (NO_COUNTS.precision, NO_COUNTS.recall, NO_COUNTS.f1, NO_COUNTS.dice) == (0.0, 0.0, 0.0, 0.0)
    nothing_found = PRFCounts(0, 4, 3)
    assert (nothing_found.precision, nothing_found.recall, nothing_found.f1) == (0.0, 0.0, 0.0)
    no_gold = PRFCounts(0, 2, 0)
    assert (no_gold.recall, no_gold.f1) == (0.0, 0.0)
    assert ratio(3, 0) == 0.0
    assert f_measure(0.0, 0.0) == 0.0


def test_counts_add_field_wise_so_sums_are_micro_averages() -> None:
    first, second = PRFCounts(1, 1, 4), PRFCounts(3, 9, 4)
    total = first + second
    assert total == PRFCounts(4, 10, 8)
    assert sum([first, second], NO_COUNTS) == total
    assert total.precision == 0.4  # micro: 4 / 10, not the mean of 1.0 and 0.333
    assert total.recall == 0.5


def test_counts_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        PRFCounts(1, 2, 3).tp = 2  # type: ignore[misc]


def test_dice_is_one_division() -> None:
    counts = PRFCounts(3, 4, 5)
    assert counts.dice == 6 / 9
    assert counts.f1 == pytest.approx(counts.dice)


@given(st.integers(0, 500), st.integers(0, 500), st.integers(0, 500))
def test_f1_is_the_harmonic_mean_and_symmetric(tp: int, extra_predicted: int, extra_gold: int) -> None:
    counts = PRFCounts(tp, tp + extra_predicted, tp + extra_gold)
    swapped = PRFCounts(tp, tp + extra_gold, tp + extra_predicted)
    assert counts.f1 == swapped.f1  # bit for bit: the order of precision and recall does not matter
    assert counts.f1 == f_measure(counts.recall, counts.precision)
    assert min(counts.precision, counts.recall) - 1e-12 <= counts.f1 <= max(counts.precision, counts.recall) + 1e-12
    assert counts.f1 == pytest.approx(counts.dice)
