"""A passage cut into what a page draws: plain text, marked segments (one bar per mark covering them, each mark
in its own lane so overlapping spans stay readable, as displaCy draws span groups), a tag where each mark starts
(its label, drawn above the text in the mark's lane, as brat draws them) and section starts. Fragments of one
discontinuous mark share its lane and its tag."""

from __future__ import annotations

from dataclasses import dataclass, field

from clinical_corpora.builders.contract.display import Mark

MAX_LANES = 8
"""Marks overlapping more deeply share the last lane."""


@dataclass
class Bar:
    mark: int
    """The mark's number on the page."""
    lane: int


@dataclass
class Piece:
    """One thing drawn in order: ``text`` (plain or under bars), a ``tag`` where a mark starts, a ``caret``
    where a discontinuous mark has an empty fragment, or a ``section`` start."""

    kind: str
    text: str = ""
    bars: list[Bar] = field(default_factory=list)
    mark: int = -1
    lane: int = 0
    """Of a tag: the lane its label sits in, above the text (0 nearest it)."""
    zero: bool = False
    tags: list[Piece] = field(default_factory=list)
    """Of marked text: the tags and carets just before it."""


@dataclass
class Laid:
    pieces: list[Piece]
    """In reading order; the tags of marked text are inside its piece."""
    lanes: int
    unplaced: list[int]
    """Numbers of the marks whose fragments fall outside the text (shown apart, with a warning)."""


def placeable(mark: Mark, length: int) -> bool:
    fragments = mark.fragments
    ordered = all(left[1] <= right[0] for left, right in zip(fragments, fragments[1:], strict=False))
    return bool(fragments) and ordered and all(0 <= start <= end <= length for start, end in fragments)


def lay_out(text: str, marks: list[tuple[int, Mark]], sections: list[tuple[int, str]]) -> Laid:
    """``marks`` are (page number, mark); returns the pieces of ``text`` in reading order."""
    placed = [(number, mark) for number, mark in marks if placeable(mark, len(text))]
    unplaced = [number for number, mark in marks if not placeable(mark, len(text))]
    lanes = _lanes(placed)
    starts: dict[int, list[tuple[int, int, bool]]] = {}  # offset → (lane, mark, zero-length) tags
    opening: dict[int, list[Bar]] = {}
    closing: dict[int, list[int]] = {}
    carets: dict[int, list[int]] = {}  # offset → marks with an empty fragment there (besides an empty mark)
    for number, mark in placed:
        first = mark.fragments[0]
        starts.setdefault(first[0], []).append(
            (lanes[number], number, first[0] == first[1] and len(mark.fragments) == 1)
        )
        for start, end in mark.fragments:
            if start < end:
                opening.setdefault(start, []).append(Bar(number, lanes[number]))
                closing.setdefault(end, []).append(number)
            elif len(mark.fragments) > 1:
                carets.setdefault(start, []).append(number)
    section_at: dict[int, list[tuple[int, str]]] = {}
    for number, (offset, heading) in enumerate(sections):
        if 0 <= offset <= len(text):
            section_at.setdefault(offset, []).append((number, heading))
    cuts = sorted({0, len(text), *starts, *opening, *closing, *section_at, *carets})
    pieces: list[Piece] = []
    active: dict[int, Bar] = {}
    for here, after in zip(cuts, [*cuts[1:], len(text)], strict=True):
        for number in closing.get(here, []):
            active.pop(number, None)
        for bar in opening.get(here, []):
            active[bar.mark] = bar
        for number, heading in section_at.get(here, []):
            pieces.append(Piece("section", text=heading, mark=number))
        tags = [Piece("tag", mark=number, lane=lane, zero=zero) for lane, number, zero in sorted(starts.get(here, []))]
        tags += [Piece("caret", mark=number) for number in carets.get(here, [])]
        bars = sorted(active.values(), key=lambda bar: bar.lane)
        if after > here and bars:  # the tags go with the text they label, never on a line of their own
            pieces.append(Piece("text", text=text[here:after], bars=bars, tags=tags))
        else:
            pieces += tags
            if after > here:
                pieces.append(Piece("text", text=text[here:after]))
    return Laid(pieces, max(lanes.values(), default=-1) + 1, unplaced)


def _lanes(placed: list[tuple[int, Mark]]) -> dict[int, int]:
    """The lowest free lane of each mark, marks taken by start (longer first): a lane holds marks whose covering
    extents do not overlap."""
    ends: list[int] = []  # per lane, where its last mark ends
    lanes = {}
    for number, mark in sorted(placed, key=lambda item: (item[1].fragments[0][0], -item[1].fragments[-1][1])):
        start, end = mark.fragments[0][0], mark.fragments[-1][1]
        lane = next((i for i, last in enumerate(ends) if last <= start), len(ends))
        lane = min(lane, MAX_LANES - 1)
        if lane == len(ends):
            ends.append(end)
        else:
            ends[lane] = max(ends[lane], end) if lane == MAX_LANES - 1 else end
        lanes[number] = lane
    return lanes
