"""How CliCR's cases are split: a seeded shuffle of the case ids cut 87/6/7 (Šuster & Daelemans 2018)."""

from __future__ import annotations

from collections.abc import Sequence

from clinical_corpora.core.splits import seeded_split

SPLIT_PROPORTIONS = (("train", 0.87), ("dev", 0.06), ("test", 0.07))
SPLIT_SEED = 2018


def assign_splits(case_ids: Sequence[str], seed: int = SPLIT_SEED) -> dict[str, str]:
    """Case id → split: a seeded shuffle of the sorted ids, cut at :data:`SPLIT_PROPORTIONS`.

    dev and test get at least one case each once there are three cases.
    """
    (train, _), *held_out = SPLIT_PROPORTIONS
    return seeded_split(case_ids, seed, held_out, train, at_least=1)
