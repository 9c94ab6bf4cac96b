"""Where each character of the maintainer's document is in the user's copy, from the anchors alone.

Both texts are normalised (``normalise.py``). When the normalised copy has the recorded normalised sha256,
every normalised character is where it was; otherwise each recorded block is looked for in the normalised
copy: first where the previous block's displacement puts it, then (once per document) among the hashes of
every window of the copy, where only one window has its hash (a block of a line repeated many times is
not placed at a repetition chosen by distance: that put it at the wrong one). The blocks found in the
maintainer's order confirm their characters where they were found. A block between two of them that one
edit (a character or two inserted, one deleted or replaced, or a run of any length inserted) keeps from
matching is repaired (``repair.py``): its piece of the copy, between its neighbours, edited back until the
block's hash matches, confirms every character it shares with the block. A maintainer's character then maps to the
user's character that the normalisation of both sides and a confirmed block say is the same character; any
other maps nowhere.

A segment ``[start, end)`` is relocated only when its characters map to consecutive characters of the copy,
so the copy's slice is exactly the maintainer's text: nothing is guessed, a character no block confirms is
lost with every segment covering it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from clinical_corpora.builders.rehydrate.reanchor.maps import DocumentMap, How
from clinical_corpora.builders.rehydrate.reanchor.repair import alphabet, repair
from clinical_corpora.builders.text_free.anchors import Anchor, block_hash, block_ranges, hash_key
from clinical_corpora.builders.text_free.normalise import normalise, original_to_normalised
from clinical_corpora.core.locators import text_sha256


def document_map(anchor: Anchor, sha256: str, text: str) -> DocumentMap:
    """The map of the maintainer's document (its ``anchor`` and recorded ``sha256``) into the user's ``text``."""
    user = normalise(text)
    original = original_to_normalised(anchor.characters, anchor.edits)
    blocks = block_ranges(anchor.normalised_characters, anchor.block)
    digest = bytes.fromhex(text_sha256(user.text))
    if digest == (anchor.normalised_sha256 or bytes.fromhex(sha256)):
        placing = _Placing(np.arange(anchor.normalised_characters, dtype=np.int64), len(blocks), 0)
        how: How = "normalised"
    else:
        placing = _place_blocks(anchor, blocks, user.text, hash_key(sha256))
        how = "blocks"
    to_user = np.full(anchor.characters, -1, dtype=np.int64)
    known = original >= 0
    known[known] = placing.placed[original[known]] >= 0
    to_user[known] = user.copied_from[placing.placed[original[known]]]
    kept = np.zeros(len(text) + 1, dtype=np.int64)
    kept[user.copied_from[user.copied_from >= 0] + 1] = 1
    return DocumentMap(
        to_user, len(text), how, placing.confirmed, placing.repaired, len(blocks), original < 0, np.cumsum(kept)
    )


def blocks_found(anchor: Anchor, sha256: str, normalised: str) -> tuple[int, int]:
    """How many of the maintainer's blocks the user's text (``normalised`` already) holds whole and in order,
    of how many: the evidence re-keying weighs (no repair: a block an edit keeps from matching is not counted)."""
    blocks = block_ranges(anchor.normalised_characters, anchor.block)
    found = _found_blocks(anchor, blocks, normalised, hash_key(sha256))
    return len(_in_order(found, blocks)), len(blocks)


@dataclass(frozen=True)
class _Placing:
    placed: np.ndarray
    """The position in the user's normalised text of each of the maintainer's normalised characters (-1:
    not confirmed)."""
    confirmed: int
    repaired: int


Found = tuple[int, int]
"""A block's index and its position in the user's normalised text."""

ONE_SIDED_EDITS = (0, 1, -1, 2)
"""What a block with only its left (or right) neighbour placed may have gained: the characters its piece
has beyond the block's, cheapest to try first."""


def _place_blocks(anchor: Anchor, blocks: list[tuple[int, int]], user: str, key: bytes) -> _Placing:
    """Every block found whole in the user's copy, in the maintainer's order, then each block between two
    of them repaired (``repair.py``) from both ends of the gap, as far as one edit per block explains it."""
    placed = np.full(anchor.normalised_characters, -1, dtype=np.int64)
    chain = _in_order(_found_blocks(anchor, blocks, user, key), blocks)
    for index, position in chain:
        start, end = blocks[index]
        placed[start:end] = np.arange(position, position + end - start)
    bounds = [(-1, 0), *((index, position) for index, position in chain), (len(blocks), len(user))]
    gap = _Gap(anchor, blocks, user, key, placed)
    for (left, at), (right, position) in zip(bounds, bounds[1:], strict=False):
        if right - left > 1:
            gap.fill(left + 1, right - 1, at + (blocks[left][1] - blocks[left][0] if left >= 0 else 0), position)
    return _Placing(placed, len(chain), gap.repaired)


@dataclass
class _Gap:
    """Repairs the blocks of one gap at a time into ``placed``."""

    anchor: Anchor
    blocks: list[tuple[int, int]]
    user: str
    key: bytes
    placed: np.ndarray
    repaired: int = 0

    @cached_property
    def characters(self) -> str:
        """The copy's alphabet (``repair.alphabet``), counted only once a block needs repair."""
        return alphabet(self.user)

    def fill(self, first: int, last: int, left: int, right: int) -> None:
        """Blocks ``first`` to ``last``, which lie in the user's ``[left, right)``: from the left while one
        edit explains each, then from the right for the rest."""
        while first <= last:
            size = self._size(first)
            edits = (right - left - size,) if first == last else ONE_SIDED_EDITS
            found = self._repair(first, left, edits, right, from_left=True)
            if found is None:
                break
            left, first = found, first + 1
        while last > first:
            edits = ONE_SIDED_EDITS
            found = self._repair(last, right, edits, left, from_left=False)
            if found is None:
                break
            right, last = found, last - 1

    def _size(self, index: int) -> int:
        start, end = self.blocks[index]
        return end - start

    def _repair(self, index: int, at: int, edits: tuple[int, ...], limit: int, from_left: bool) -> int | None:
        """Block ``index`` repaired from its piece starting (or ending) at ``at`` and not crossing ``limit``:
        where its piece ends (or starts), or None."""
        size = self._size(index)
        for extra in edits:  # repair() finds no candidate for any other
            start, end = (at, at + size + extra) if from_left else (at - size - extra, at)
            if start < 0 or end > len(self.user) or (end > limit if from_left else start < limit):
                continue
            places = repair(self.user[start:end], size, self.anchor.hash_of(index), self.key, self.characters)
            if places is not None:
                block_start, block_end = self.blocks[index]
                self.placed[block_start:block_end] = np.where(places >= 0, places + start, -1)
                self.repaired += 1
                return end if from_left else start
        return None


def _found_blocks(anchor: Anchor, blocks: list[tuple[int, int]], user: str, key: bytes) -> list[Found]:
    """Each block found: where the last found block's displacement puts it, else the one window with its
    hash."""
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
            candidates = windows[size].get(wanted, [])
            position = candidates[0] if len(candidates) == 1 else None
        if position is not None:
            found.append((index, position))
            shift = position - start
    return found


def _in_order(found: list[Found], blocks: list[tuple[int, int]]) -> list[Found]:
    """The longest chain of found blocks in the maintainer's order that do not overlap in the user's copy:
    a block found out of order (its text repeated elsewhere) is dropped rather than trusted."""
    if not found:
        return []
    sizes = np.array([blocks[index][1] - blocks[index][0] for index, _ in found], dtype=np.int64)
    positions = np.array([position for _, position in found], dtype=np.int64)
    length = np.ones(len(found), dtype=np.int64)
    previous = np.full(len(found), -1, dtype=np.int64)
    for j in range(1, len(found)):
        fits = positions[:j] + sizes[:j] <= positions[j]
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
