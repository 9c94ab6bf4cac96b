"""Seeded splits (core.splits): the same ids and seed give the same split, whatever the input order."""

from __future__ import annotations

from collections import Counter

from clinical_corpora.core.splits import seeded_split

IDS = [f"note-{n:03d}" for n in range(200)]


def test_same_ids_and_seed_give_the_same_split_in_any_order() -> None:
    split = seeded_split(IDS, 7, [("dev", 0.1), ("test", 0.2)], "train")
    assert split == seeded_split(reversed(IDS), 7, [("dev", 0.1), ("test", 0.2)], "train")
    assert list(split) == list(seeded_split(set(IDS), 7, [("dev", 0.1), ("test", 0.2)], "train"))
    assert split != seeded_split(IDS, 8, [("dev", 0.1), ("test", 0.2)], "train")


def test_held_out_splits_take_rounded_shares_in_order() -> None:
    split = seeded_split(IDS, 7, [("dev", 0.1), ("test", 0.2)], "train")
    assert Counter(split.values()) == {"train": 140, "dev": 20, "test": 40}
    shuffled = list(split)  # the result lists the ids in shuffled order, cut in order
    assert [split[i] for i in shuffled[:20]] == ["dev"] * 20
    assert [split[i] for i in shuffled[20:60]] == ["test"] * 40
    assert shuffled != sorted(shuffled)


def test_pinned_assignment() -> None:
    """Released splits depend on this: a change here changes every seeded release."""
    split = seeded_split(["a", "b", "c", "d", "e", "f"], 2018, [("dev", 0.2), ("test", 0.3)], "train")
    assert split == {"d": "dev", "c": "test", "f": "test", "a": "train", "b": "train", "e": "train"}
    assert list(split) == ["d", "c", "f", "a", "b", "e"]


def test_at_least_applies_once_every_split_can_have_an_id() -> None:
    held_out = [("dev", 0.06), ("test", 0.07)]
    assert Counter(seeded_split(["x", "y", "z"], 1, held_out, "train", at_least=1).values()) == {
        "train": 1,
        "dev": 1,
        "test": 1,
    }
    assert set(seeded_split(["x", "y"], 1, held_out, "train", at_least=1).values()) == {"train"}
    assert set(seeded_split(["x", "y", "z"], 1, held_out, "train").values()) == {"train"}
    assert seeded_split([], 1, held_out, "train", at_least=1) == {}
