"""Where each of the maintainer's characters is in the user's copy: the map re-anchoring builds for one document
(``relocate.py``) and reads to move spans (``rows.py``, ``moved.py``, ``passages.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np

How = Literal["normalised", "blocks"]


@dataclass(frozen=True)
class DocumentMap:
    """The user's position of each of the maintainer's characters (-1: not confirmed)."""

    to_user: np.ndarray
    user_characters: int
    how: How
    confirmed_blocks: int
    """Blocks found whole in the user's copy."""
    repaired_blocks: int
    """Blocks found with one small edit (``repair.py``)."""
    blocks: int
    dropped: np.ndarray
    """Whether each of the maintainer's characters is one its normalisation drops (the ``\\r`` of a CRLF,
    trailing spaces, a BOM) or rewrites (a non-NFC run)."""
    kept_before: np.ndarray
    """For each position of the user's copy (and its end), how many characters before it the user's
    normalisation keeps as they are."""

    def segment(self, start: int, end: int) -> tuple[int, int] | None:
        """Where ``[start, end)`` of the maintainer's text is in the user's copy, cut from the copy as it is,
        or None. Every character of it is confirmed there in order, but for those the maintainer's
        normalisation drops, and the copy holds nothing between them but characters its own normalisation
        drops: a span crossing a line end comes back from a CRLF copy with the copy's ``\\r\\n``."""
        if not 0 <= start < end <= len(self.to_user):
            return None
        mapped = self.to_user[start:end]
        first, last = int(mapped[0]), int(mapped[-1])
        if first < 0 or last < first:
            return None
        confirmed = mapped >= 0
        if not (confirmed | self.dropped[start:end]).all():
            return None
        placed = mapped[confirmed]
        if len(placed) > 1 and not (np.diff(placed) > 0).all():
            return None
        if int(self.kept_before[last + 1] - self.kept_before[first]) != len(placed):
            return None
        return first, last + 1

    @cached_property
    def _confirmed(self) -> np.ndarray:
        return np.flatnonzero(self.to_user >= 0)

    def _nearest_shift(self, position: int) -> int:
        """How far the confirmed character nearest ``position`` moved (0 when none is)."""
        confirmed = self._confirmed
        if not len(confirmed):
            return 0
        nearest = int(confirmed[np.argmin(np.abs(confirmed - position))])
        return int(self.to_user[nearest]) - nearest

    def placed(self, start: int, end: int) -> tuple[int, int]:
        """Where a lost ``[start, end)`` is placed in the probe the caller validates, never in the release:
        each end moved as far as the confirmed character nearest it, so a span confirmed inside it stays
        inside, at its place."""
        last = self.user_characters
        first = min(max(start + self._nearest_shift(start), 0), last)
        return first, min(max(end + self._nearest_shift(max(end - 1, start)), first), last)
