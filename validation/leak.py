"""The leak gate's measure: the longest run of characters a source document shares with a release.

Every window of ``SEED`` characters of the release's text (all its strings, from every file) is hashed into
a sorted table; every window of every document is hashed the same way (a polynomial hash computed with
numpy, ``SEED`` vector passes per batch of documents, so a corpus of hundreds of MB is scanned in seconds)
and looked up. Consecutive hits make a candidate run, checked against the release text itself (so a hash
collision never counts) and shrunk to the longest part the release really holds.

Runs of no letter (dates, numbers, punctuation) and runs inside one of the corpus's own label names are
not counted: they are what a text-free release is meant to keep.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

SEED = 12
"""Shortest run measured: shorter shared runs (words, ids) are everywhere and mean nothing."""

_BASE = np.uint64(1_000_003)
_BATCH_CHARACTERS = 4_000_000
_RELEASE_WINDOWS = 1_000_000
"""Release windows hashed at a time: about 40 bytes of temporaries each."""
_RELEASE_SEPARATOR = "\x00"
_DOCUMENT_SEPARATOR = "\x01"


@dataclass(frozen=True)
class SharedRun:
    """The longest run found: its length, the document and offset it starts at (never the text)."""

    length: int
    locator: str
    offset: int


class ReleaseText:
    """All strings of a release, joined, with the hashes of their ``SEED``-character windows."""

    def __init__(self, strings: Iterable[str]) -> None:
        self.text = _RELEASE_SEPARATOR.join(strings)
        self.hashes = _distinct_window_hashes(self.text, _RELEASE_SEPARATOR)

    def holds(self, run: str) -> bool:
        return run in self.text


def longest_shared_run(
    documents: Iterable[tuple[str, str]], release: ReleaseText, ignored: Collection[str] = ()
) -> SharedRun | None:
    """The longest run (``SEED`` characters or more) of a document that the release holds, or None."""
    best: SharedRun | None = None
    for batch in _batches(documents):
        joined = _DOCUMENT_SEPARATOR.join(text for _, text in batch)
        hits = np.flatnonzero(np.isin(_window_hashes(joined, _DOCUMENT_SEPARATOR), release.hashes))
        for start, end in _runs(hits):
            for offset, length in _verified(joined, start, end, release):
                run = joined[offset : offset + length]
                if best is not None and length <= best.length or _ignored(run, ignored):
                    continue
                locator, at = _locate(batch, offset)
                best = SharedRun(length, locator, at)
    return best


def _batches(documents: Iterable[tuple[str, str]]) -> Iterator[list[tuple[str, str]]]:
    batch: list[tuple[str, str]] = []
    size = 0
    for locator, text in documents:
        batch.append((locator, text))
        size += len(text) + 1
        if size >= _BATCH_CHARACTERS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _window_hashes(text: str, separator: str) -> np.ndarray:
    """The hash of every ``SEED``-character window of ``text``; windows across ``separator`` never match
    (their hash is replaced by a value no window of the other side has: its position marker differs)."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
    count = len(codes) - SEED + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint64)
    hashes = np.zeros(count, dtype=np.uint64)
    for shift in range(SEED):
        hashes = hashes * _BASE + codes[shift : shift + count]
    separators = np.concatenate(([0], np.cumsum(codes == ord(separator))))
    crossing = separators[SEED:] - separators[:count] > 0
    hashes[crossing] = np.uint64(ord(separator)) << np.uint64(40)  # one value per side, never in the other
    return hashes


def _distinct_window_hashes(text: str, separator: str) -> np.ndarray:
    """The distinct hashes of every window of ``text``, :data:`_RELEASE_WINDOWS` windows at a time (each
    piece overlaps the next by a window less one character), so the hashing's temporaries stay bounded."""
    pieces = [
        np.unique(_window_hashes(text[start : start + _RELEASE_WINDOWS + SEED - 1], separator))
        for start in range(0, max(len(text) - SEED + 1, 0), _RELEASE_WINDOWS)
    ]
    return np.unique(np.concatenate(pieces)) if pieces else np.empty(0, dtype=np.uint64)


def _runs(hits: np.ndarray) -> Iterator[tuple[int, int]]:
    """Consecutive window positions grouped: (first, last) of each group."""
    if len(hits) == 0:
        return
    breaks = np.flatnonzero(np.diff(hits) != 1)
    starts = np.concatenate(([hits[0]], hits[breaks + 1]))
    ends = np.concatenate((hits[breaks], [hits[-1]]))
    yield from zip(starts.tolist(), ends.tolist(), strict=True)


def _verified(joined: str, first: int, last: int, release: ReleaseText) -> Iterator[tuple[int, int]]:
    """The runs the release really holds within the candidate ``joined[first : last + SEED]``, each the
    longest from its start (binary search on its length)."""
    offset, end = first, last + SEED
    while end - offset >= SEED:
        low, high = 0, end - offset
        while low < high:
            middle = (low + high + 1) // 2
            if release.holds(joined[offset : offset + middle]):
                low = middle
            else:
                high = middle - 1
        if low >= SEED:
            yield offset, low
            offset += max(low - SEED + 1, 1)
        else:
            offset += 1


def _ignored(run: str, ignored: Collection[str]) -> bool:
    return not any(character.isalpha() for character in run) or any(run in name for name in ignored)


def _locate(batch: list[tuple[str, str]], offset: int) -> tuple[str, int]:
    position = 0
    for locator, text in batch:
        if offset < position + len(text) + 1:
            return locator, offset - position
        position += len(text) + 1
    return batch[-1][0], offset - position
