"""Seeded splits: the same ids and seed always give the same split of every id."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import TypeVar

SplitName = TypeVar("SplitName", bound=str)


def seeded_split(
    ids: Iterable[str], seed: int, held_out: Sequence[tuple[SplitName, float]], rest: SplitName, *, at_least: int = 0
) -> dict[str, SplitName]:
    """Id → split: the sorted ids shuffled by ``random.Random(seed)``, then cut in order.

    Each ``(split, share)`` of ``held_out`` in turn takes the next ``round(share × n)`` ids (at least
    ``at_least`` once there are more ids than held-out splits); the ids left over go to ``rest``.
    The result lists the ids in shuffled order.
    """
    shuffled = sorted(ids)
    random.Random(seed).shuffle(shuffled)
    smallest = at_least if len(shuffled) > len(held_out) else 0
    splits = dict.fromkeys(shuffled, rest)
    start = 0
    for split, share in held_out:
        size = max(smallest, round(share * len(shuffled)))
        splits.update(dict.fromkeys(shuffled[start : start + size], split))
        start += size
    return splits


FOLD_SEED = 0
"""The random-number seed of the shuffle that deals documents into cross-validation folds."""


def cross_validation_folds(ids: Iterable[str], folds: int) -> list[list[str]]:
    """The ids dealt into ``folds`` folds: sorted, shuffled by ``random.Random(FOLD_SEED)``, the i-th going to fold
    ``i % folds``; each fold's ids sorted. The same ids always give the same folds, whatever order they come in."""
    shuffled = sorted(set(ids))
    if folds < 2 or folds > len(shuffled):
        raise ValueError(f"cannot deal {len(shuffled)} documents into {folds} folds (2 to {len(shuffled)})")
    random.Random(FOLD_SEED).shuffle(shuffled)
    return [sorted(shuffled[fold::folds]) for fold in range(folds)]
