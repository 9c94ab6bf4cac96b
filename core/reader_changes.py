"""What a reader changed while reading raw input: a line read otherwise than written (a quoted text not matching
its position, chain lines joined, chains derived from pairs...). Each change has a kind, a place (file and line)
and what was done; a release lists every one and counts them by kind (``core/release_manifest.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

FIRST_EXAMPLES = 3
"""Changes of one kind a manifest and a card show, before the count of the others."""


@dataclass(frozen=True)
class ReaderChange:
    """One line read otherwise than written: ``kind`` (lower-case words joined by ``_``), the file and line,
    and what the reader did."""

    kind: str
    path: str
    message: str
    line: int | None = None

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


def changes_by_kind(changes: Iterable[ReaderChange]) -> dict[str, list[ReaderChange]]:
    """The changes grouped by kind, kinds in name order, each kind's changes in the order they were made."""
    grouped: dict[str, list[ReaderChange]] = {}
    for change in changes:
        grouped.setdefault(change.kind, []).append(change)
    return dict(sorted(grouped.items()))
