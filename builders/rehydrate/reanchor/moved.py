"""What became of one string re-anchoring moved (:class:`Moved`, :class:`Several`), and where the offsets paired
with it go (``rows.py`` walks the row): into the user's copy where the document's map puts their characters,
counting from the document's start or from a frame's (:class:`Frames`: a passage cut from the document that
the row's spans count from).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from clinical_corpora.builders.rehydrate.reanchor.maps import DocumentMap
from clinical_corpora.schemas.licensed import LEAF, LITERAL, LicensedTree, OffsetFields, StructOffsets, licensed_structs

Pair = tuple[int, int]


@dataclass(frozen=True)
class Frames:
    """Per document, where the row's strings cut from it in one slice start (offsets may count from one of
    them), and the one most of its spans count from (its passage), if any."""

    starts: frozenset[int] = frozenset()
    usual: int | None = None


@dataclass(frozen=True)
class Moved:
    """A string cut in one slice (``segment``) from a differing document: the slice before and after (None:
    lost), and whether it is the whole document."""

    document: DocumentMap
    locator: str
    segment: dict[str, Any]
    new: Pair | None
    whole: bool = False
    frames: Frames = Frames()

    @property
    def old(self) -> Pair:
        return self.segment["start"], self.segment["end"]

    def pair(self, start: int, end: int) -> tuple[Pair | None, Pair, Pair]:
        """(the row's offsets of a span ``[start, end)`` paired with the string, the probe's, the slice of the
        user's copy the probe's text is cut from). The offsets count from the document's start, or from a
        frame's (:attr:`frames`) when the string's slice starts that far after them, or when it is cut from
        elsewhere (an earlier occurrence) in a row whose spans count from one: they go where the map
        puts their characters, else move as far as the string's slice (a lost one: as far as the confirmed
        character nearest it)."""
        origin = self.old[0] - start
        if not self.whole and origin > 0 and origin in self.frames.starts:
            return self._framed(start, end, origin)
        if not self.whole and self.frames.usual is not None and (start, end) != self.old:
            return self._framed(start, end, self.frames.usual)
        own = None if self.whole or start >= end else self.document.segment(start, end)
        if self.new is None or (own is None and not self.whole and (start, end) != self.old):
            placed = own or self.placed(start, end)
            return None, placed, placed
        moved = own or (start + self.new[0] - self.old[0], end + self.new[1] - self.old[1])
        return moved, moved, moved

    def _framed(self, start: int, end: int, origin: int) -> tuple[Pair | None, Pair, Pair]:
        """:meth:`pair` for offsets counting from ``origin`` of the maintainer's document (a passage's start),
        which must map into the user's copy for them to count from its place there."""
        own = self.document.segment(origin + start, origin + end)
        new_origin = int(self.document.to_user[origin])
        if self.new is None or own is None or new_origin < 0:
            placed = self.placed(origin + start, origin + end)
            probe_origin = self.placed(origin, origin)[0]
            return None, (placed[0] - probe_origin, placed[1] - probe_origin), placed
        moved = (own[0] - new_origin, own[1] - new_origin)
        return moved, moved, own

    def offset(self, start: int) -> tuple[int | None, Pair]:
        """(the row's position of a start alone paired with the string, where the probe puts the string)."""
        to_user = self.document.to_user
        own = int(to_user[start]) if not self.whole and 0 <= start < len(to_user) and to_user[start] >= 0 else None
        if self.new is None or (own is None and not self.whole and start != self.old[0]):
            return None, self.placed(start, start + self.old[1] - self.old[0])
        return (own if own is not None else start + self.new[0] - self.old[0]), (0, 0)

    def placed(self, start: int, end: int) -> Pair:
        """Where the probe puts ``[start, end)`` (:meth:`DocumentMap.placed`)."""
        return self.document.placed(start, end)

    def probe_text(self, start: int, end: int) -> list[dict[str, Any]]:
        """The probe's recipe of a lost string whose offsets the probe puts at ``[start, end)``: the user's
        text there."""
        return [{**self.segment, "start": start, "end": end}]


@dataclass(frozen=True)
class Several:
    """A string cut in several slices with one from a differing document: offsets cannot follow it."""

    lost: bool


Change = Moved | Several | None
"""What became of one string (None: nothing, it names no differing document)."""


def row_frames(
    row: dict[str, Any], tree: LicensedTree, paired: Mapping[str, StructOffsets], locators: list[str]
) -> dict[str, Frames]:
    """Per document of a stored row (``tree`` and ``paired``: where its record model holds licensed strings and
    their offsets), its :class:`Frames`: where its one-slice strings start, and the origin its spans' offsets
    count from most often (a slice start that far before their own slices)."""
    starts: dict[str, set[int]] = {}
    origins: dict[str, Counter[int]] = {}
    for struct, node, path in licensed_structs(row, tree):
        for name, child in node.items():
            for recipe in _recipes(struct.get(name), child):
                if len(recipe) == 1 and recipe[0]["document"] != LITERAL:
                    starts.setdefault(locators[recipe[0]["document"]], set()).add(recipe[0]["start"])
        for fields in paired.get(path, {}).values():
            origin = _span_origin(struct, fields)
            if origin is not None:
                origins.setdefault(locators[origin[0]], Counter())[origin[1]] += 1
    frames = {}
    for locator, found in starts.items():
        counted = [(count, origin) for origin, count in origins.get(locator, Counter()).items() if origin in found]
        frames[locator] = Frames(frozenset(found), max(counted)[1] if counted else None)
    return frames


def _recipes(value: Any, node: Any) -> Iterator[list[dict[str, Any]]]:
    """The recipes of a licensed string field (or list of them), not those of structs inside it."""
    if value is None or isinstance(node, dict):
        return
    if node == LEAF:
        yield value
        return
    for item in value:
        yield from _recipes(item, node[0])


def _span_origin(struct: dict[str, Any], fields: OffsetFields) -> tuple[int, int] | None:
    """(document, how far into it the span's offsets count from) of a span whose string is cut in one slice that
    starts after the span's start offset; None for any other string."""
    if fields.span is None:
        return None
    recipe, start = struct.get(fields.licensed), struct.get(fields.span[0])
    if not isinstance(start, int) or not isinstance(recipe, list) or len(recipe) != 1:
        return None
    document, at = recipe[0]["document"], recipe[0]["start"]
    return (document, at - start) if document != LITERAL and at > start else None
