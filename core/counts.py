"""Precision, recall and F1 from counts: the one definition every scorer and agreement measure uses.

Conventions, those of the reference scorers reimplemented here (n2c2 2022 SDOH, CoNLL-2012, SQuAD
v1.1, Savova et al. 2011): a ratio with a zero denominator is 0.0, and F1 is the harmonic mean of
precision and recall, 0.0 when both are 0.
"""

from __future__ import annotations

from dataclasses import dataclass


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, or 0.0 when the denominator is 0."""
    return numerator / denominator if denominator else 0.0


def f_measure(precision: float, recall: float) -> float:
    """Harmonic mean of precision and recall; 0.0 when both are 0."""
    total = precision + recall
    return 2 * precision * recall / total if total else 0.0


@dataclass(frozen=True, slots=True)
class PRFCounts:
    """True positives among ``predicted`` items, against ``gold`` items; counts add field-wise.

    ``f1`` goes through precision and recall, as the reference scorers do; ``dice`` is the same
    quantity in one division, ``2·tp / (predicted + gold)``, for measures defined that way (the two
    may differ in the last bit of a float).
    """

    tp: int
    predicted: int
    gold: int

    def __add__(self, other: PRFCounts) -> PRFCounts:
        return PRFCounts(self.tp + other.tp, self.predicted + other.predicted, self.gold + other.gold)

    @property
    def precision(self) -> float:
        return ratio(self.tp, self.predicted)

    @property
    def recall(self) -> float:
        return ratio(self.tp, self.gold)

    @property
    def f1(self) -> float:
        return f_measure(self.precision, self.recall)

    @property
    def dice(self) -> float:
        return ratio(2 * self.tp, self.predicted + self.gold)


class Scored:
    """Precision, recall and F1 of a class's :class:`PRFCounts` (its ``counts`` property)."""

    __slots__ = ()

    @property
    def counts(self) -> PRFCounts:
        raise NotImplementedError

    @property
    def precision(self) -> float:
        return self.counts.precision

    @property
    def recall(self) -> float:
        return self.counts.recall

    @property
    def f1(self) -> float:
        return self.counts.f1


NO_COUNTS = PRFCounts(0, 0, 0)
"""The sum of no counts."""
