"""Re-anchoring one text-free row: its recipes moved into the user's copies of the documents that differ.

A row's licensed strings are classed one by one:

- **exact**: the string's recipe names no document that differs; it is restored as recorded;
- **relocated**: every slice of it lies where :class:`DocumentMap` confirms every character in the user's
  copy, consecutively, so the copy's slice is exactly the maintainer's text;
- **replaced**: the whole text of a document that differs (a note, a report): it becomes the user's copy,
  the text every relocated span now points into;
- **lost**: anything else. A lost string is written as null, and so are the offsets paired with it, so it
  is never presented as text the maintainer released; each is named (record, field, locator and offsets).

Offsets paired with a string move with it. Which fields they are is what the record model marks beside the
string (``OffsetOf``, read through :func:`offset_fields`), whatever they are named: a start and an end (a
span: every :class:`Span`'s ``start``/``end`` of its ``text``), a start alone (a string that runs its own
length from it: a mention pair's ``sentence_start``), or a list of ``[start, end]`` pairs beside a list of
strings (BigBio's ``offsets``). They count from the start of the document the string is cut from (what a
record text that is a whole document gives), or from the start of a passage cut from it (:class:`Frames`),
or in a BigBio row's passages joined (``passages.py``); a span beside a string with a start alone (its
sentence) is re-cut from that string's document (a start alone is where the string starts in the text the
spans beside it count in, and the record model checks it). They move where the map puts those characters,
or by as much as the string's slice moved when the map does not confirm them. The caller checks each row
against its record model, so a row where they count from elsewhere is left out rather than written wrong.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from clinical_corpora.builders.rehydrate.reanchor.maps import DocumentMap
from clinical_corpora.builders.rehydrate.reanchor.moved import Change, Frames, Moved, Pair, Several, row_frames
from clinical_corpora.builders.rehydrate.reanchor.passages import (
    Fragments,
    Passages,
    joined_passages,
    recut_fragments,
)
from clinical_corpora.schemas.licensed import (
    LEAF,
    LITERAL,
    SOURCE_DOCUMENTS,
    LicensedTree,
    OffsetFields,
    StructOffsets,
    field_path,
    item_path,
)

CLASSES: tuple[Literal["exact", "relocated", "replaced", "lost"], ...] = ("exact", "relocated", "replaced", "lost")
NOT_CONFIRMED = "not every character is confirmed, consecutively, in your copy"


@dataclass(frozen=True)
class Layout:
    """Where a record model holds licensed strings (:func:`licensed_tree`) and which fields are their offsets
    (:func:`offset_fields`)."""

    tree: LicensedTree
    paired: Mapping[str, StructOffsets]


@dataclass
class RowOutcome:
    """The row as stored in the text-free release with recipes moved (lost ones null), the probe the caller
    validates (lost strings placed where their neighbours moved), the counts and the lost strings named."""

    row: dict[str, Any]
    probe: dict[str, Any]
    counts: Counter[str] = field(default_factory=Counter)
    lost: list[dict[str, Any]] = field(default_factory=list)


class RowAnchoring:
    """Moves the recipes of rows naming documents in ``maps`` (locator → map into the user's copy)."""

    def __init__(self, maps: dict[str, DocumentMap], originals: dict[str, int]) -> None:
        self.maps = maps
        self.originals = originals
        """Locator → length of the maintainer's text."""

    def touches(self, row_documents: list[dict[str, Any]]) -> bool:
        return any(document["locator"] in self.maps for document in row_documents)

    def row(self, row: dict[str, Any], layout: Layout, where: str) -> RowOutcome:
        locators = [document["locator"] for document in row[SOURCE_DOCUMENTS]]
        passages = joined_passages(row, locators, self.maps, self.originals, layout.paired)
        if passages is not None:
            recut_fragments(row, passages, layout.tree, layout.paired)
        outcome = RowOutcome(row, _copy(row))
        _Walk(self, locators, outcome, where, passages, layout).struct(row, outcome.probe, layout.tree)
        return outcome


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value


class _Walk:
    def __init__(
        self,
        anchoring: RowAnchoring,
        locators: list[str],
        outcome: RowOutcome,
        where: str,
        passages: Passages | None,
        layout: Layout,
    ) -> None:
        self.anchoring, self.locators, self.outcome, self.where = anchoring, locators, outcome, where
        self.passages, self.paired = passages, layout.paired
        self.frames = row_frames(outcome.row, layout.tree, layout.paired, locators)

    def value(self, parent: Any, probe: Any, key: Any, node: Any, path: str, shape: str) -> Any:
        """Move the recipes under ``parent[key]`` (and ``probe[key]``; ``path`` names it in the row, ``shape`` in
        the record model): the Change of a string, a list of those for a list of strings, None otherwise."""
        item = parent[key]
        if item is None:
            return None
        if node == LEAF:
            return self.string(parent, probe, key, path)
        if isinstance(node, list):
            shape = item_path(shape)
            return [self.value(item, probe[key], i, node[0], f"{path}[{i}]", shape) for i in range(len(item))]
        self.struct(item, probe[key], node, path, shape)
        return None

    def struct(
        self, struct: dict[str, Any], probe: dict[str, Any], node: LicensedTree, path: str = "", shape: str = ""
    ) -> None:
        """Walk a struct's licensed fields, then move the offsets paired with them (``shape``: the struct's path
        in the record model, where :func:`offset_fields` says which they are)."""
        offsets = self.paired.get(shape, {})
        self._cut_from_frame(struct, probe, node, offsets)
        changes = {
            name: self.value(struct, probe, name, child, field_path(path, name), field_path(shape, name))
            for name, child in node.items()
        }
        sibling = next(
            (
                change
                for name, change in changes.items()
                if isinstance(change, Moved)
                and not change.whole
                and name in offsets
                and offsets[name].start_only is not None
            ),
            None,
        )
        for name, change in changes.items():
            if name in offsets:
                self._move_offsets(struct, probe, offsets[name], change, sibling, field_path(path, name))

    def _move_offsets(
        self,
        struct: dict[str, Any],
        probe: dict[str, Any],
        fields: OffsetFields,
        change: Change | list[Change],
        sibling: Moved | None,
        path: str,
    ) -> None:
        """Move the offsets of one string (``fields``) as it changed; a span whose string did not change moves
        with a sibling string with a start alone that did (:meth:`_move_span_by`)."""
        text, span, start, pairs = fields.licensed, fields.span, fields.start_only, fields.pairs
        if pairs is not None and isinstance(change, list) and isinstance(struct.get(pairs), list):
            for index, item in enumerate(change):
                self._move_fragment(struct, probe, (text, pairs), index, item, f"{path}[{index}]")
        elif span is not None and change is None and sibling is not None:
            self._move_span_by(struct, probe, text, span, sibling, path)
        elif span is not None and isinstance(change, Moved | Several):
            self._move_span(struct, probe, text, span, change, path)
        elif start is not None and isinstance(change, Moved | Several):
            self._move_start(struct, probe, text, start, change, path)

    def _cut_from_frame(
        self, struct: dict[str, Any], probe: dict[str, Any], node: LicensedTree, offsets: StructOffsets
    ) -> None:
        """A span beside a string with a start alone (its sentence, in its report), inside it: the record model
        says the span's text is that document's at the span's offsets, so it is cut from there (its recipe may
        cut it from an earlier occurrence elsewhere), and follows that document's map."""
        frames = [
            (fields.licensed, start)
            for fields in offsets.values()
            if (start := fields.start_only) is not None and node.get(fields.licensed) == LEAF
        ]
        for fields in offsets.values():
            if fields.span is not None and node.get(fields.licensed) == LEAF:
                self._cut_span(struct, probe, fields.licensed, fields.span, frames)

    def _cut_span(
        self,
        struct: dict[str, Any],
        probe: dict[str, Any],
        text: str,
        span: tuple[str, str],
        frames: list[tuple[str, str]],
    ) -> None:
        """:meth:`_cut_from_frame` of the span ``text`` between fields ``span``, in the first of ``frames`` (each a
        string and its start field) holding it."""
        start, end, recipe = struct.get(span[0]), struct.get(span[1]), struct.get(text)
        if not isinstance(start, int) or not isinstance(end, int) or not recipe:
            return
        for name, name_start in frames:
            frame, frame_start = struct.get(name), struct.get(name_start)
            if not isinstance(frame, list) or len(frame) != 1 or frame_start is None:
                continue
            segment = frame[0]
            involved = [s["document"] for s in (*recipe, segment) if s["document"] != LITERAL]
            if segment["document"] == LITERAL or not any(self.locators[d] in self.anchoring.maps for d in involved):
                continue
            if segment["start"] == frame_start <= start <= end <= segment["end"]:
                struct[text] = [{**segment, "start": start, "end": end}]
                probe[text] = _copy(struct[text])
                return

    def _move_span(
        self,
        struct: dict[str, Any],
        probe: dict[str, Any],
        text: str,
        span: tuple[str, str],
        change: Moved | Several,
        path: str,
    ) -> None:
        """The ``span`` (start and end fields) of string ``text``, which changed."""
        start, end = span
        if struct[start] is None or struct[end] is None:
            return
        if isinstance(change, Several):
            self._lose_after_all(struct, text, change, path)
            struct[start] = struct[end] = None
            return
        row, placed, cut = change.pair(struct[start], struct[end])
        if row is None:
            self._lose_found(struct, text, change, (struct[start], struct[end]), path)
            probe[start], probe[end] = placed
            probe[text] = change.probe_text(*cut)
        else:
            probe[start], probe[end] = row
        struct[start], struct[end] = row if row is not None else (None, None)

    def _move_span_by(
        self, struct: dict[str, Any], probe: dict[str, Any], text: str, span: tuple[str, str], sibling: Moved, path: str
    ) -> None:
        """A span whose text is cut from a document that did not change (an earlier occurrence elsewhere) beside
        a string with a start alone cut from one that did (its sentence and where the sentence starts): its
        offsets count in that document, where the map must confirm its characters, or it is lost."""
        start, end = span
        if struct[start] is None or struct[end] is None or struct[start] >= struct[end]:
            return
        own = sibling.document.segment(struct[start], struct[end])
        if own is not None:
            struct[start], struct[end] = probe[start], probe[end] = own
            return
        self._lose(path, NOT_CONFIRMED, [(sibling.locator, struct[start], struct[end])], was="exact")
        placed = sibling.placed(struct[start], struct[end])
        probe[start], probe[end] = placed
        probe[text] = sibling.probe_text(*placed)
        struct[text] = struct[start] = struct[end] = None

    def _move_start(
        self, struct: dict[str, Any], probe: dict[str, Any], text: str, start: str, change: Moved | Several, path: str
    ) -> None:
        """The ``start`` field of string ``text`` (which has no end field), which changed."""
        if struct[start] is None:
            return
        if isinstance(change, Several):
            self._lose_after_all(struct, text, change, path)
            struct[start] = None
            return
        row, placed = change.offset(struct[start])
        if row is None:
            self._lose_found(struct, text, change, (struct[start], struct[start]), path)
        struct[start] = probe[start] = row
        if row is None:
            probe[start] = placed[0]
            probe[text] = change.probe_text(*placed)

    def _move_fragment(
        self, struct: dict[str, Any], probe: dict[str, Any], fragments: Fragments, index: int, change: Change, path: str
    ) -> None:
        """The offset pair ``index`` of the list of strings ``fragments`` names (strings and pairs field), beside
        its string: in the joined passages when the row has them (``passages.py``), else in the document its
        string is cut from."""
        texts, pairs_field = fragments
        pairs = struct[pairs_field]
        passages = self.passages
        if passages is None or index >= len(pairs) or pairs[index] is None or isinstance(change, Several):
            self._move_pair(struct, probe, fragments, index, change, path)
            return
        start, end = pairs[index]
        if passages.holding(start, end) is None:
            self._move_pair(struct, probe, fragments, index, change, path)
            return
        moved = passages.moved(start, end)
        if moved is not None and (not isinstance(change, Moved) or change.new is not None):
            pairs[index] = probe[pairs_field][index] = list(moved)
            return
        if isinstance(change, Moved):
            self._lose_found(struct[texts], index, change, (start, end), path)
        placed, segment = passages.placed(start, end)
        probe[pairs_field][index], probe[texts][index] = list(placed), [segment]
        pairs[index] = None

    def _move_pair(
        self, struct: dict[str, Any], probe: dict[str, Any], fragments: Fragments, index: int, change: Change, path: str
    ) -> None:
        """The offset pair ``index`` of the list of strings ``fragments`` names, in the document its string is
        cut from."""
        texts, pairs_field = fragments
        pairs = struct[pairs_field]
        if change is None or index >= len(pairs) or pairs[index] is None:
            return
        if isinstance(change, Several):
            self._lose_after_all(struct[texts], index, change, path)
            pairs[index] = None
            return
        row, placed, cut = change.pair(pairs[index][0], pairs[index][1])
        if row is None:
            self._lose_found(struct[texts], index, change, tuple(pairs[index]), path)
            probe[pairs_field][index] = list(placed)
            probe[texts][index] = change.probe_text(*cut)
        else:
            probe[pairs_field][index] = list(row)
        pairs[index] = None if row is None else list(row)

    def _lose_found(self, parent: Any, key: Any, change: Moved, place: tuple[int, ...], path: str) -> None:
        """A string found in the user's copy whose own place there is not confirmed (its recipe cuts it from
        another occurrence): lost after all."""
        if change.new is None or parent[key] is None:
            return
        reason = "the text is in your copy, but not every character of its place is confirmed there"
        self._lose(path, reason, [(change.locator, place[0], place[-1])], was="relocated")
        parent[key] = None

    def _lose_after_all(self, parent: Any, key: Any, change: Several, path: str) -> None:
        """A string whose slices were found but whose offsets cannot follow it: lost after all."""
        if change.lost:
            return
        self._lose(path, "cut from several slices: its offsets cannot follow", [], was="relocated")
        parent[key] = None

    def string(self, parent: Any, probe: Any, key: Any, path: str) -> Change:
        """Move one recipe and count its class."""
        segments = parent[key]
        maps = self.anchoring.maps
        touched = [s for s in segments if s["document"] != LITERAL and self.locators[s["document"]] in maps]
        if not touched:
            self.outcome.counts["exact"] += 1
            return None
        whole = self._whole(segments)
        if whole is not None:
            self.outcome.counts["replaced"] += 1
            parent[key], probe[key] = [whole[1]], [dict(whole[1])]
            return whole[0]
        moved, problems = [], []
        for segment in segments:
            found = self._found(segment)
            if found is None:
                locator = self.locators[segment["document"]]
                problems.append((locator, segment["start"], segment["end"]))
                found = self._placed(segment)
            moved.append(found)
        slices = [(old, new) for old, new in zip(segments, moved, strict=True) if old["document"] != LITERAL]
        one = len(slices) == 1
        if problems:
            self._lose(path, NOT_CONFIRMED, problems)
            parent[key], probe[key] = None, moved
            if not one:
                return Several(lost=True)
            return self._moved(slices[0][0], None)
        self.outcome.counts["relocated"] += 1
        parent[key], probe[key] = moved, _copy(moved)
        if not one:
            return Several(lost=False)
        old, new = slices[0]
        return self._moved(old, (new["start"], new["end"]))

    def _moved(self, old: dict[str, Any], new: Pair | None) -> Moved | None:
        locator = self.locators[old["document"]]
        if locator not in self.anchoring.maps:
            return None
        return Moved(self.anchoring.maps[locator], locator, old, new, frames=self.frames.get(locator, Frames()))

    def _whole(self, segments: list[dict[str, Any]]) -> tuple[Moved, dict[str, Any]] | None:
        """A string that is a whole differing document: it becomes the user's copy."""
        if len(segments) != 1 or segments[0]["document"] == LITERAL or segments[0]["start"] != 0:
            return None
        locator = self.locators[segments[0]["document"]]
        if locator not in self.anchoring.maps or segments[0]["end"] != self.anchoring.originals.get(locator):
            return None
        document = self.anchoring.maps[locator]
        moved = {**segments[0], "end": document.user_characters}
        return Moved(document, locator, segments[0], (0, document.user_characters), whole=True), moved

    def _found(self, segment: dict[str, Any]) -> dict[str, Any] | None:
        """The segment where the user's copy has it (a literal or a matching document's slice as it is)."""
        if segment["document"] == LITERAL or self.locators[segment["document"]] not in self.anchoring.maps:
            return segment
        found = self.anchoring.maps[self.locators[segment["document"]]].segment(segment["start"], segment["end"])
        return None if found is None else {**segment, "start": found[0], "end": found[1]}

    def _lose(self, path: str, reason: str, places: list[tuple[str, int, int]], was: str | None = None) -> None:
        """Count one string lost (taken from class ``was`` when it was counted already) and name it, once per
        (locator, start, end) of it that is not confirmed, or once without a place when none is given."""
        if was is not None:
            self.outcome.counts[was] -= 1
        self.outcome.counts["lost"] += 1
        named = [dict(zip(("locator", "start", "end"), place, strict=True)) for place in places] or [{}]
        for where in named:
            self.outcome.lost.append({"record": self.where, "field": path, **where, "reason": reason})

    def _placed(self, segment: dict[str, Any]) -> dict[str, Any]:
        """Where the probe puts a lost slice (:meth:`DocumentMap.placed`)."""
        start, end = self.anchoring.maps[self.locators[segment["document"]]].placed(segment["start"], segment["end"])
        return {**segment, "start": start, "end": end}
