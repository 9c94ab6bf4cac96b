"""Confirming a block that one edit keeps from matching: the user's copy has one or two characters inserted
in it, one deleted, or one replaced (a typo fixed, a character re-encoded into another), or a run of any
length inserted at one place (a sentence added between two of the block's characters).

The copy's piece where the block must be (between its confirmed neighbours) is edited back, every way one
such edit can be undone (an inserted run: left out at each of the block's positions), and each candidate
hashed; a candidate with the block's hash confirms every character the piece and the block share, at its
place in the copy. Leaving a run out puts back nothing the copy does not hold. A deleted or replaced character is put
back from the copy's own alphabet, so a confirmed repair tells the holder of the copy at most that one
character, beside the block's other characters which the copy holds in place: nothing a guesser holding the
copy could not confirm with the same hash (see ``anchors.py``).

A character is confirmed only when every matching candidate puts it at the same place (inserting an ``s``
into ``ss`` matches twice: the characters of the run are left unconfirmed, their text being known but not
which of the copy's characters they are).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator, Sequence

import numpy as np

MAX_ALPHABET = 256
"""The most frequent characters of the copy tried for a deleted or replaced one (a larger alphabet, as in a
text of many scripts, only makes a repair likelier to fail, never wrong)."""

Candidate = tuple[str, Sequence[int], int | None]
"""A candidate block, the positions of the piece it leaves out and where in it a character was put back."""


def alphabet(text: str) -> str:
    """The characters tried for a deleted or replaced one: the copy's own, most frequent first."""
    return "".join(character for character, _ in Counter(text).most_common(MAX_ALPHABET))


def repair(piece: str, length: int, wanted: bytes, key: bytes, characters: str) -> np.ndarray | None:
    """For a block of ``length`` characters hashed ``wanted`` with ``key``, the position in ``piece`` of
    each of its characters (-1: not confirmed) when one edit of ``piece`` gives the block; None otherwise."""
    hasher = hashlib.blake2b(digest_size=len(wanted), key=key)
    places: np.ndarray | None = None
    for candidate, left_out, put_back in _candidates(piece, length, characters):
        trial = hasher.copy()
        trial.update(candidate.encode("utf-8", "surrogatepass"))
        if trial.digest() != wanted:
            continue
        positions = [at for at in range(len(piece)) if at not in left_out]
        if put_back is not None:
            positions.insert(put_back, -1)
        found = np.array(positions, dtype=np.int64)
        places = found if places is None else np.where(places == found, places, -1)
    return places


def _candidates(piece: str, length: int, characters: str) -> Iterator[Candidate]:
    """``piece`` itself when it is as long as the block, and every block of ``length`` characters one edit of
    ``piece`` gives (two insertions count as one; a longer piece: one run left out)."""
    extra = len(piece) - length
    if extra > 2:
        for at in range(length + 1):
            yield piece[:at] + piece[at + extra :], range(at, at + extra), None
    elif extra == 1:
        for at in range(len(piece)):
            yield piece[:at] + piece[at + 1 :], (at,), None
    elif extra == 2:
        for first in range(len(piece)):
            for second in range(first + 1, len(piece)):
                yield piece[:first] + piece[first + 1 : second] + piece[second + 1 :], (first, second), None
    elif extra == -1:
        for at in range(len(piece) + 1):
            for character in characters:
                yield piece[:at] + character + piece[at:], (), at
    elif extra == 0:
        yield piece, (), None
        for at in range(len(piece)):
            for character in characters:
                if character != piece[at]:
                    yield piece[:at] + character + piece[at + 1 :], (at,), at
