"""Re-anchoring one text-free row: its recipes moved into the user's copies of the documents that differ.

A row's licensed strings are classed one by one:

- **exact**: the string's recipe names no document that differs; it is restored as recorded;
- **relocated**: every slice of it lies where :class:`DocumentMap` confirms every character in the user's
  copy, consecutively, so the copy's slice is exactly the maintainer's text;
- **replaced**: the whole text of a document that differs (a note, a report): it becomes the user's copy,
  the text every relocated span now points into;
- **lost**: anything else. A lost string is written as null, and so are the offsets paired with it, so it
  is never presented as text the maintainer released; each is named (record, field, locator and offsets).

Offsets paired with a string move with it: ``start``/``end`` beside ``text`` (every :class:`Span`),
``<name>_start`` beside ``<name>``, and BigBio's ``offsets`` beside its list of ``text``. They count from
the start of the document the string is cut from (what a record text that is a whole document gives), or
from the start of a passage cut from it (:class:`Frames`), or in a BigBio row's passages joined
(``reanchor_passages.py``); a span beside a sentence with its own ``<name>_start`` is re-cut from the
sentence's document (every record model keeps that convention: ``<name>_start`` is where ``<name>`` starts
in the text its sibling ``start``/``end`` count in, and the model checks it). They move where the map puts
those characters, or by as much as the string's slice moved when the map does not confirm them. The caller
checks each row against its record model, so a row where they count from elsewhere is left out rather than
written wrong.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from clinical_corpora.builders.rehydrate.reanchor.maps import DocumentMap
from clinical_corpora.builders.rehydrate.reanchor.passages import Passages, joined_passages, recut_fragments
from clinical_corpora.schemas.licensed import LEAF, LITERAL, SOURCE_DOCUMENTS, LicensedTree

CLASSES: tuple[Literal["exact", "relocated", "replaced", "lost"], ...] = ("exact", "relocated", "replaced", "lost")
NOT_CONFIRMED = "not every character is confirmed, consecutively, in your copy"

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
        """(the row's position of a ``<name>_start`` paired with the string, where the probe puts the string)."""
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

    def row(self, row: dict[str, Any], tree: LicensedTree, where: str) -> RowOutcome:
        locators = [document["locator"] for document in row[SOURCE_DOCUMENTS]]
        passages = joined_passages(row, locators, self.maps, self.originals)
        if passages is not None:
            recut_fragments(row, passages)
        outcome = RowOutcome(row, _copy(row))
        _Walk(self, locators, outcome, where, passages).struct(row, outcome.probe, tree)
        return outcome


def _frames(row: dict[str, Any], locators: list[str]) -> dict[str, Frames]:
    """Per document of the row, its :class:`Frames`: where its one-slice strings start, and the origin its
    spans' offsets count from most often (a slice start that far before their own slices)."""
    starts: dict[str, set[int]] = {}
    origins: dict[str, Counter[int]] = {}
    stack: list[Any] = [value for key, value in row.items() if key != SOURCE_DOCUMENTS]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack += value.values()
            text, start = value.get("text"), value.get("start")
            if isinstance(start, int) and isinstance(text, list) and len(text) == 1 and isinstance(text[0], dict):
                if text[0].get("document", LITERAL) != LITERAL and text[0]["start"] > start:
                    origins.setdefault(locators[text[0]["document"]], Counter())[text[0]["start"] - start] += 1
        elif isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict) and "literal" in value[0]:
            if value[0]["document"] != LITERAL:
                starts.setdefault(locators[value[0]["document"]], set()).add(value[0]["start"])
        elif isinstance(value, list):
            stack += value
    frames = {}
    for locator, found in starts.items():
        counted = [(count, origin) for origin, count in origins.get(locator, Counter()).items() if origin in found]
        frames[locator] = Frames(frozenset(found), max(counted)[1] if counted else None)
    return frames


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value


class _Walk:
    def __init__(
        self, anchoring: RowAnchoring, locators: list[str], outcome: RowOutcome, where: str, passages: Passages | None
    ) -> None:
        self.anchoring, self.locators, self.outcome, self.where = anchoring, locators, outcome, where
        self.passages = passages
        self.frames = _frames(outcome.row, locators)

    def value(self, parent: Any, probe: Any, key: Any, node: Any, path: str) -> Any:
        """Move the recipes under ``parent[key]`` (and ``probe[key]``): the Change of a string, a list of
        those for a list of strings, None otherwise."""
        item = parent[key]
        if item is None:
            return None
        if node == LEAF:
            return self.string(parent, probe, key, path)
        if isinstance(node, list):
            return [self.value(item, probe[key], index, node[0], f"{path}[{index}]") for index in range(len(item))]
        self.struct(item, probe[key], node, path)
        return None

    def struct(self, struct: dict[str, Any], probe: dict[str, Any], node: LicensedTree, path: str = "") -> None:
        """Walk a struct's licensed fields, then move the offsets paired with them."""
        self._cut_from_frame(struct, probe, node)
        changes = {
            name: self.value(struct, probe, name, child, f"{path}.{name}" if path else name)
            for name, child in node.items()
        }
        sibling = next(
            (c for n, c in changes.items() if isinstance(c, Moved) and not c.whole and f"{n}_start" in struct), None
        )
        for name, change in changes.items():
            where = f"{path}.{name}" if path else name
            if name == "text" and change is None and sibling is not None and "start" in struct and "end" in struct:
                self._move_span_by(struct, probe, sibling, where)
            if name == "text" and isinstance(change, list) and isinstance(struct.get("offsets"), list):
                for index, item in enumerate(change):
                    self._move_fragment(struct, probe, index, item, f"{where}[{index}]")
            elif name == "text" and "start" in struct and "end" in struct and change is not None:
                self._move_span(struct, probe, change, where)
            if f"{name}_start" in struct and change is not None:
                self._move_start(struct, probe, f"{name}_start", change, where)

    def _cut_from_frame(self, struct: dict[str, Any], probe: dict[str, Any], node: LicensedTree) -> None:
        """A span beside a string with its own ``<name>_start`` (its sentence, in its report), inside it: the
        record model says the span's text is that document's at the span's offsets, so it is cut from there
        (its recipe may cut it from an earlier occurrence elsewhere), and follows that document's map."""
        start, end, recipe = struct.get("start"), struct.get("end"), struct.get("text")
        if node.get("text") != LEAF or not isinstance(start, int) or not isinstance(end, int) or not recipe:
            return
        for name in node:
            frame, frame_start = struct.get(name), struct.get(f"{name}_start")
            if node[name] != LEAF or not isinstance(frame, list) or len(frame) != 1 or frame_start is None:
                continue
            segment = frame[0]
            involved = [s["document"] for s in (*recipe, segment) if s["document"] != LITERAL]
            if segment["document"] == LITERAL or not any(self.locators[d] in self.anchoring.maps for d in involved):
                continue
            if segment["start"] == frame_start <= start <= end <= segment["end"]:
                struct["text"] = [{**segment, "start": start, "end": end}]
                probe["text"] = _copy(struct["text"])
                return

    def _move_span(self, struct: dict[str, Any], probe: dict[str, Any], change: Change, path: str) -> None:
        if struct["start"] is None or struct["end"] is None:
            return
        if isinstance(change, Several):
            self._lose_after_all(struct, "text", change, path)
            struct["start"] = struct["end"] = None
            return
        assert change is not None
        row, placed, cut = change.pair(struct["start"], struct["end"])
        if row is None:
            self._lose_found(struct, "text", change, (struct["start"], struct["end"]), path)
            probe["start"], probe["end"] = placed
            probe["text"] = change.probe_text(*cut)
        else:
            probe["start"], probe["end"] = row
        struct["start"], struct["end"] = row if row is not None else (None, None)

    def _move_span_by(self, struct: dict[str, Any], probe: dict[str, Any], sibling: Moved, path: str) -> None:
        """A span whose text is cut from a document that did not change (an earlier occurrence elsewhere) beside
        a string with its own ``<name>_start`` cut from one that did (its sentence and where the sentence
        starts): its offsets count in that document, where the map must confirm its characters, or it is
        lost."""
        if struct["start"] is None or struct["end"] is None or struct["start"] >= struct["end"]:
            return
        own = sibling.document.segment(struct["start"], struct["end"])
        if own is not None:
            struct["start"], struct["end"] = probe["start"], probe["end"] = own
            return
        self._lose(path, NOT_CONFIRMED, [(sibling.locator, struct["start"], struct["end"])], was="exact")
        placed = sibling.placed(struct["start"], struct["end"])
        probe["start"], probe["end"] = placed
        probe["text"] = sibling.probe_text(*placed)
        struct["text"] = struct["start"] = struct["end"] = None

    def _move_start(self, struct: dict[str, Any], probe: dict[str, Any], name: str, change: Change, path: str) -> None:
        if struct[name] is None:
            return
        if isinstance(change, Several):
            self._lose_after_all(struct, name.removesuffix("_start"), change, path)
            struct[name] = None
            return
        assert change is not None
        row, placed = change.offset(struct[name])
        if row is None:
            self._lose_found(struct, name.removesuffix("_start"), change, (struct[name], struct[name]), path)
        struct[name] = probe[name] = row
        if row is None:
            probe[name] = placed[0]
            probe[name.removesuffix("_start")] = change.probe_text(*placed)

    def _move_fragment(
        self, struct: dict[str, Any], probe: dict[str, Any], index: int, change: Change, path: str
    ) -> None:
        """BigBio's ``offsets[index]`` beside ``text[index]``: in the joined passages when the row has them
        (``reanchor_passages.py``), else in the document its text is cut from."""
        pairs = struct["offsets"]
        passages = self.passages
        if passages is None or index >= len(pairs) or pairs[index] is None or isinstance(change, Several):
            self._move_pair(struct, probe, index, change, path)
            return
        start, end = pairs[index]
        if passages.holding(start, end) is None:
            self._move_pair(struct, probe, index, change, path)
            return
        moved = passages.moved(start, end)
        if moved is not None and (not isinstance(change, Moved) or change.new is not None):
            pairs[index] = probe["offsets"][index] = list(moved)
            return
        if isinstance(change, Moved):
            self._lose_found(struct["text"], index, change, (start, end), path)
        placed, segment = passages.placed(start, end)
        probe["offsets"][index], probe["text"][index] = list(placed), [segment]
        pairs[index] = None

    def _move_pair(self, struct: dict[str, Any], probe: dict[str, Any], index: int, change: Change, path: str) -> None:
        """BigBio's ``offsets[index]`` beside ``text[index]``."""
        pairs = struct["offsets"]
        if change is None or index >= len(pairs) or pairs[index] is None:
            return
        if isinstance(change, Several):
            self._lose_after_all(struct["text"], index, change, path)
            pairs[index] = None
            return
        row, placed, cut = change.pair(pairs[index][0], pairs[index][1])
        if row is None:
            self._lose_found(struct["text"], index, change, tuple(pairs[index]), path)
            probe["offsets"][index] = list(placed)
            probe["text"][index] = change.probe_text(*cut)
        else:
            probe["offsets"][index] = list(row)
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
