"""Where each character of the maintainer's document is in the user's copy, from the anchors alone.

Both texts are normalised (``normalise.py``). When the normalised copy has the recorded normalised sha256,
every normalised character is where it was; otherwise each recorded block is looked for in the normalised
copy: first where the previous block's displacement puts it, then (once per document) among the hashes of
every window of the copy, the position nearest the expected one. A found block confirms its characters at
its displacement. A maintainer's character then maps to the user's character that the normalisation of both
sides and a confirmed block say is the same character; any other maps nowhere.

A segment ``[start, end)`` is relocated only when its characters map to consecutive characters of the copy,
so the copy's slice is exactly the maintainer's text: nothing is guessed, a character no block confirms is
lost with every segment covering it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np

from clinical_corpora.builders.sources.documents import text_sha256
from clinical_corpora.builders.text_free.anchors import Anchor, block_hash, block_ranges, hash_key
from clinical_corpora.builders.text_free.normalise import normalise, original_to_normalised

How = Literal["normalised", "blocks"]


@dataclass(frozen=True)
class DocumentMap:
    """The user's position of each of the maintainer's characters (-1: not confirmed)."""

    to_user: np.ndarray
    user_characters: int
    how: How
    confirmed_blocks: int
    blocks: int

    def segment(self, start: int, end: int) -> tuple[int, int] | None:
        """Where ``[start, end)`` of the maintainer's text is in the user's copy, or None when some character
        is not confirmed or the characters are not consecutive there."""
        if not 0 <= start < end <= len(self.to_user):
            return None
        mapped = self.to_user[start:end]
        first = int(mapped[0])
        if first < 0 or not np.array_equal(mapped, np.arange(first, first + end - start)):
            return None
        return first, first + end - start

    @cached_property
    def _confirmed(self) -> np.ndarray:
        return np.flatnonzero(self.to_user >= 0)

    def nearest_shift(self, position: int) -> int:
        """How far the confirmed character nearest ``position`` moved (0 when none is): where a lost span
        is placed in the probe the caller validates, never in the release."""
        confirmed = self._confirmed
        if not len(confirmed):
            return 0
        nearest = int(confirmed[np.argmin(np.abs(confirmed - position))])
        return int(self.to_user[nearest]) - nearest


def document_map(anchor: Anchor, sha256: str, text: str) -> DocumentMap:
    """The map of the maintainer's document (its ``anchor`` and recorded ``sha256``) into the user's ``text``."""
    user = normalise(text)
    original = original_to_normalised(anchor.characters, anchor.edits)
    blocks = block_ranges(anchor.normalised_characters, anchor.block)
    digest = bytes.fromhex(text_sha256(user.text))
    if digest == (anchor.normalised_sha256 or bytes.fromhex(sha256)):
        displacement = np.zeros(anchor.normalised_characters, dtype=np.int64)
        how: How = "normalised"
        confirmed = len(blocks)
    else:
        displacement, confirmed = _block_displacements(anchor, blocks, user.text, hash_key(sha256))
        how = "blocks"
    to_user = np.full(anchor.characters, -1, dtype=np.int64)
    known = original >= 0
    known[known] = displacement[original[known]] != _UNKNOWN
    target = original[known] + displacement[original[known]]
    to_user[known] = user.copied_from[target]
    return DocumentMap(to_user, len(text), how, confirmed, len(blocks))


_UNKNOWN = np.iinfo(np.int64).min


def _block_displacements(
    anchor: Anchor, blocks: list[tuple[int, int]], user: str, key: bytes
) -> tuple[np.ndarray, int]:
    """For each normalised character of the maintainer's text, the displacement of the confirmed block
    covering it (``_UNKNOWN`` when none), and how many blocks were confirmed."""
    displacement = np.full(anchor.normalised_characters, _UNKNOWN, dtype=np.int64)
    kept = _in_order(_found_blocks(anchor, blocks, user, key))
    for (start, end), position in kept:
        displacement[start:end] = position - start
    return displacement, len(kept)


Found = tuple[tuple[int, int], int]
"""A block's [start, end) in the maintainer's normalised text and its position in the user's."""


def _found_blocks(anchor: Anchor, blocks: list[tuple[int, int]], user: str, key: bytes) -> list[Found]:
    """Each block found: where the last found block's displacement puts it, else the window with its hash
    nearest to that place."""
    windows: dict[int, dict[bytes, list[int]]] = {}
    shift = 0
    found = []
    for index, (start, end) in enumerate(blocks):
        wanted, expected, size = anchor.hash_of(index), start + shift, end - start
        if 0 <= expected <= len(user) - size and block_hash(user[expected : expected + size], key) == wanted:
            position: int | None = expected
        else:
            if size not in windows:
                windows[size] = _window_hashes(user, size, key)
            candidates = windows[size].get(wanted)
            position = min(candidates, key=lambda at: (abs(at - expected), at)) if candidates else None
        if position is not None:
            found.append(((start, end), position))
            shift = position - start
    return found


def _in_order(found: list[Found]) -> list[Found]:
    """The longest chain of found blocks in the maintainer's order that do not overlap in the user's copy:
    a block found out of order (its text repeated elsewhere) is dropped rather than trusted."""
    if not found:
        return []
    ends = np.array([end for (_, end), _ in found], dtype=np.int64)
    starts = np.array([start for (start, _), _ in found], dtype=np.int64)
    positions = np.array([position for _, position in found], dtype=np.int64)
    length = np.ones(len(found), dtype=np.int64)
    previous = np.full(len(found), -1, dtype=np.int64)
    for j in range(1, len(found)):
        fits = positions[:j] + (ends[:j] - starts[:j]) <= positions[j]
        if fits.any():
            candidates = np.where(fits, length[:j], 0)
            best = int(np.argmax(candidates))
            length[j], previous[j] = candidates[best] + 1, best
    chain, at = [], int(np.argmax(length))
    while at >= 0:
        chain.append(found[at])
        at = int(previous[at])
    return chain[::-1]


def _window_hashes(user: str, block: int, key: bytes) -> dict[bytes, list[int]]:
    """The positions of every window of ``block`` characters of ``user``, by hash."""
    windows: dict[bytes, list[int]] = defaultdict(list)
    for position in range(len(user) - block + 1):
        windows[block_hash(user[position : position + block], key)].append(position)
    return windows
