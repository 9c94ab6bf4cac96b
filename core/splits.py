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
