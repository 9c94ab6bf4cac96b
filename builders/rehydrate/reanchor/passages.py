"""Offsets that count in several documents joined: BigBio's knowledge-base rows.

A BigBio row lists its ``passages``, each a whole document with the ``[start, end]`` it takes in the documents
joined (one separator between them), and every entity, event trigger and relation fragment counts its offset
pairs in that joined text. Which field of a struct holds the pairs of which list of licensed strings is what
the record model marks (``OffsetOf(..., "pairs")``, :func:`offset_fields`). When one document of the row differs
in the user's copy, the passages after it move by as much as it grew, and a fragment inside it moves where the
document's map puts it.

Here a row's passages are read once; each fragment's text is re-cut from its own place in the passage its
offsets fall in (the record model says the joined text holds it there; its recipe may cut it from an earlier
occurrence elsewhere), so that it follows the passage's document; after the walk each offset pair is moved
into the joined user copies.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from clinical_corpora.builders.rehydrate.reanchor.maps import DocumentMap
from clinical_corpora.schemas.licensed import (
    LEAF,
    LITERAL,
    LicensedTree,
    StructOffsets,
    item_path,
    licensed_structs,
)

Pair = tuple[int, int]
Fragments = tuple[str, str]
"""A struct's list of licensed strings and the field of their offset pairs."""

PASSAGES = "passages"
"""BigBio's column of a row's passages: their texts joined are the text the row's offset pairs count in."""


@dataclass(frozen=True)
class Passage:
    """One passage: where it was in the joined text, where it is now, and its document (row index)."""

    start: int
    end: int
    new_start: int
    new_end: int
    document: int
    map: DocumentMap | None
    """The document's map into the user's copy (None: the document did not differ)."""


@dataclass(frozen=True)
class Passages:
    """A row's passages in the joined text, in order."""

    passages: list[Passage]

    def holding(self, start: int, end: int) -> Passage | None:
        """The passage ``[start, end]`` of the joined text lies in."""
        return next((p for p in self.passages if p.start <= start <= end <= p.end), None)

    def moved(self, start: int, end: int) -> Pair | None:
        """Where ``[start, end]`` of the joined text is in the user's joined copies (None: a character of it
        is not confirmed there, or it lies in no passage)."""
        passage = self.holding(start, end)
        if passage is None:
            return None
        if (start, end) == (passage.start, passage.end):
            return passage.new_start, passage.new_end
        local = (start - passage.start, end - passage.start)
        if passage.map is not None:
            found = passage.map.segment(*local) if local[0] < local[1] else _point(passage.map, local[0])
            if found is None:
                return None
            local = found
        return passage.new_start + local[0], passage.new_start + local[1]

    def placed(self, start: int, end: int) -> tuple[Pair, dict[str, Any]]:
        """Where the probe puts a lost ``[start, end]`` of the joined text (:meth:`DocumentMap.placed` in its
        passage) and the slice its text is cut from there."""
        passage = self.holding(start, end)
        assert passage is not None, "only fragments inside a passage are moved"
        local = (start - passage.start, end - passage.start)
        if passage.map is not None:
            local = passage.map.placed(*local)
        segment = {"document": passage.document, "start": local[0], "end": local[1], "literal": None}
        return (passage.new_start + local[0], passage.new_start + local[1]), segment


def _point(document: DocumentMap, position: int) -> Pair | None:
    """Where an empty span at ``position`` is: before the character at it, when that is confirmed."""
    if position == len(document.to_user):
        return document.user_characters, document.user_characters
    found = document.segment(position, position + 1)
    return None if found is None else (found[0], found[0])


def joined_passages(
    row: dict[str, Any],
    locators: list[str],
    maps: dict[str, DocumentMap],
    originals: dict[str, int],
    paired: Mapping[str, StructOffsets],
) -> Passages | None:
    """The row's passages when it has some (structs of one whole-document text and one offset pair, in
    order, not overlapping) and one of their documents differs; None otherwise. ``paired`` is
    :func:`offset_fields` of the record model."""
    offsets = paired.get(item_path(PASSAGES), {}).values()
    fragments = [(fields.licensed, pairs) for fields in offsets if (pairs := fields.pairs) is not None]
    if len(fragments) != 1:
        return None
    found = []
    for item in row.get(PASSAGES) or []:
        passage = _passage(item, fragments[0], locators, originals)
        if passage is None:
            return None
        found.append(passage)
    found.sort()
    if not found or not any(locators[document] in maps for _, _, document in found):
        return None
    passages, shift, previous_end = [], 0, None
    for start, end, document in found:
        if previous_end is not None and start < previous_end:
            return None
        document_map = maps.get(locators[document])
        length = end - start if document_map is None else document_map.user_characters
        passages.append(Passage(start, end, start + shift, start + shift + length, document, document_map))
        shift += length - (end - start)
        previous_end = end
    return Passages(passages)


def _passage(
    item: Any, fragments: Fragments, locators: list[str], originals: dict[str, int]
) -> tuple[int, int, int] | None:
    """(start, end, document) of a passage whose one text is one whole document, else None."""
    texts, pairs = fragments
    if not isinstance(item, dict) or not isinstance(item.get(texts), list) or not isinstance(item.get(pairs), list):
        return None
    if len(item[texts]) != 1 or len(item[pairs]) != 1 or not item[texts][0] or len(item[texts][0]) != 1:
        return None
    segment, pair = item[texts][0][0], item[pairs][0]
    if segment["document"] == LITERAL or segment["start"] != 0 or pair is None or pair[1] - pair[0] != segment["end"]:
        return None
    whole = originals.get(locators[segment["document"]], segment["end"])
    return (pair[0], pair[1], segment["document"]) if segment["end"] == whole else None


def recut_fragments(
    row: dict[str, Any], passages: Passages, tree: LicensedTree, paired: Mapping[str, StructOffsets]
) -> None:
    """Every fragment's text (a recipe beside its offset pair) cut from its own place in its passage."""
    for struct, (texts, pairs) in _fragment_structs(row, tree, paired):
        for index, pair in enumerate(struct[pairs]):
            recipe = struct[texts][index] if index < len(struct[texts]) else None
            if pair is None or recipe is None:
                continue
            passage = passages.holding(pair[0], pair[1])
            if passage is None or (pair[0], pair[1]) == (passage.start, passage.end) or pair[0] >= pair[1]:
                continue
            start = pair[0] - passage.start
            struct[texts][index] = [
                {"document": passage.document, "start": start, "end": start + pair[1] - pair[0], "literal": None}
            ]


def _fragment_structs(
    row: dict[str, Any], tree: LicensedTree, paired: Mapping[str, StructOffsets]
) -> Iterator[tuple[dict[str, Any], Fragments]]:
    """Every struct of a stored row holding a list of licensed strings beside the list of their offset pairs
    (passages, entities, triggers), with the two fields."""
    for struct, node, path in licensed_structs(row, tree):
        for fields in paired.get(path, {}).values():
            texts, pairs = fields.licensed, fields.pairs
            if pairs is not None and node.get(texts) == [LEAF]:
                if isinstance(struct.get(texts), list) and isinstance(struct.get(pairs), list):
                    yield struct, (texts, pairs)
