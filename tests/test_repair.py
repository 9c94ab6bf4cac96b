"""Repairing a block one small edit keeps from matching (``builders/text_free/repair.py``): every character
the copy still holds maps to its place in the copy, the edited one maps nowhere, and two edits in one block
are not guessed at."""

from __future__ import annotations

import numpy as np
import pytest

from clinical_corpora.builders.rehydrate.reanchor.relocate import document_map
from clinical_corpora.builders.text_free.anchors import BLOCK, make_anchor
from clinical_corpora.core.locators import text_sha256

TEXT = (
    "SOCIAL HISTORY: Lives with his wife in a second floor apartment. Former smoker, quit in 2010 after "
    "thirty pack years. Drinks two beers per week on weekends. No illicit drug use. Works as a carpenter."
)
EDITED = 2 * BLOCK + 10
"""A character of the third block, well inside it."""


def mapped(copy: str) -> tuple[np.ndarray, int, int]:
    """(the map of TEXT into ``copy``, blocks confirmed whole, blocks repaired)."""
    sha256 = text_sha256(TEXT)
    result = document_map(make_anchor("x", TEXT, sha256), sha256, copy)
    return result.to_user, result.confirmed_blocks, result.repaired_blocks


def expected(copy_positions: list[int | None]) -> np.ndarray:
    return np.array([-1 if at is None else at for at in copy_positions], dtype=np.int64)


@pytest.mark.parametrize(
    ("name", "copy", "positions"),
    [
        (
            "one character inserted",
            TEXT[:EDITED] + "x" + TEXT[EDITED:],
            [*range(EDITED), *range(EDITED + 1, len(TEXT) + 1)],
        ),
        (
            "two characters inserted apart",
            TEXT[:EDITED] + "q" + TEXT[EDITED : EDITED + 5] + "z" + TEXT[EDITED + 5 :],
            [*range(EDITED), *range(EDITED + 1, EDITED + 6), *range(EDITED + 7, len(TEXT) + 2)],
        ),
        (
            "one character deleted",
            TEXT[:EDITED] + TEXT[EDITED + 1 :],
            [*range(EDITED), None, *range(EDITED, len(TEXT) - 1)],
        ),
        (
            "one character replaced",
            TEXT[:EDITED] + "#" + TEXT[EDITED + 1 :],
            [*range(EDITED), None, *range(EDITED + 1, len(TEXT))],
        ),
    ],
)
def test_a_block_with_one_edit_maps_every_character_the_copy_holds(
    name: str, copy: str, positions: list[int | None]
) -> None:
    to_user, confirmed, repaired = mapped(copy)
    assert repaired == 1, name
    assert np.array_equal(to_user, expected(positions)), name
    held = to_user >= 0
    assert [copy[at] for at in to_user[held]] == [character for character, kept in zip(TEXT, held, strict=True) if kept]


def test_a_character_inserted_into_a_run_leaves_the_run_unconfirmed() -> None:
    """``ss`` into ``sss``: the text is known, not which two of the copy's three are the maintainer's."""
    text_with_run = TEXT[: 2 * BLOCK + 5] + "sss" + TEXT[2 * BLOCK + 5 :]
    sha256 = text_sha256(text_with_run)
    copy = text_with_run[: 2 * BLOCK + 5] + "s" + text_with_run[2 * BLOCK + 5 :]
    to_user = document_map(make_anchor("x", text_with_run, sha256), sha256, copy).to_user
    start = 2 * BLOCK + 5
    assert (to_user[start : start + 3] == -1).all()
    assert np.array_equal(to_user[:start], np.arange(start))
    assert np.array_equal(to_user[start + 3 :], np.arange(start + 4, len(copy)))


def test_two_edits_in_one_block_are_not_guessed_at() -> None:
    copy = TEXT[:EDITED] + "#" + TEXT[EDITED + 1 : EDITED + 8] + TEXT[EDITED + 9 :]  # replaced, then deleted
    to_user, confirmed, repaired = mapped(copy)
    start, end = 2 * BLOCK, 3 * BLOCK
    assert repaired == 0 and confirmed == len(TEXT) // BLOCK - 1
    assert (to_user[start:end] == -1).all()
    assert (to_user[:start] == np.arange(start)).all() and (to_user[end:] >= 0).all()


def test_an_edit_in_the_first_or_last_block_is_repaired_against_the_ends_of_the_copy() -> None:
    last = len(TEXT) - 3
    for copy, edited in ((TEXT[:3] + "x" + TEXT[3:], 3), (TEXT[:last] + TEXT[last + 1 :], last)):
        to_user, _, repaired = mapped(copy)
        assert repaired == 1
        assert all(copy[at] == TEXT[index] for index, at in enumerate(to_user) if at >= 0)
        assert (to_user >= 0).sum() >= len(TEXT) - 1, edited
