"""Recipes in place of the licensed text of a full record batch, column by column (Arrow in, Arrow out); the
inverse of ``restore_arrow``.

Row by row, writing rad_coref's 272k mention pairs text-free took 30 s: each row became nested Python dicts
and back, and each of its six licensed strings was searched for in the row's documents. Here each licensed
string column is taken out of its lists and structs with the row each value belongs to; a recipe is made once
per distinct (documents of the row, string) in the batch, since a mention's text and sentence repeat in every
pair it is part of, and where a string lies whole in a document its position is looked up once per
(document, string). The recipes' ``list<segment>`` arrays are put back under the original offsets and
validity, so the rows are those :func:`recipe` gives string by string. A string whose struct holds its offsets
(the record model marks them, :func:`offset_fields`) is cut at its own place when a document holds it there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from clinical_corpora.core.errors import ClincorpError, excerpt
from clinical_corpora.core.locators import text_sha256
from clinical_corpora.schemas.licensed import (
    LEAF,
    LITERAL,
    MAX_LITERAL,
    SOURCE_DOCUMENTS,
    LicensedTree,
    OffsetFields,
    StructOffsets,
    field_path,
    item_path,
)

MIN_SLICE = 4
"""Shorter matches are stored as literals: a slice costs three integers, and a few letters are no text."""
FOUND_LIMIT = 200_000
"""Positions of (document, string) kept at most (about 30 MB); the table is emptied when full."""

Segment = dict[str, Any]
Piece = tuple[int, int, int, str | None]
"""A segment as (document, start, end, literal)."""


def recipe(value: str, documents: Sequence[str], place: tuple[int, int] | None = None) -> list[Segment]:
    """Segments restoring ``value`` from ``documents``: one slice when a document holds it whole (at
    ``place``, the span's own offsets, in the first document holding it there, if one does), else the
    longest slices left to right with literals between them."""
    if place is not None:
        held = holding_at(value, documents, *place)
        if held is not None:
            return [_slice(held, *place)]
    for index, text in enumerate(documents):
        at = text.find(value)
        if at >= 0 and value:
            return [_slice(index, at, at + len(value))]
    segments: list[Segment] = []
    literal: list[str] = []
    position = 0
    while position < len(value):
        index, at, length = _longest_prefix(value, position, documents)
        if length < MIN_SLICE:
            literal.append(value[position])
            position += 1
            continue
        if literal:
            segments.append(_literal("".join(literal)))
            literal = []
        segments.append(_slice(index, at, at + length))
        position += length
    if literal:
        segments.append(_literal("".join(literal)))
    written = sum(len(segment["literal"]) for segment in segments if segment["document"] == LITERAL)
    if written > MAX_LITERAL:
        raise ClincorpError(
            f"a licensed string of {len(value)} characters ({excerpt(value)}) has {written} characters no source "
            f"document of its row holds (a text-free release keeps at most {MAX_LITERAL}): is it licensed text "
            "of these documents?"
        )
    return segments


def holding_at(value: str, documents: Iterable[str], start: int, end: int) -> int | None:
    """The first of ``documents`` holding ``value`` at ``[start, end)`` (a span's own place), if any."""
    if not value or not 0 <= start < end:
        return None
    return next((index for index, text in enumerate(documents) if text[start:end] == value), None)


def _longest_prefix(value: str, position: int, documents: Sequence[str]) -> tuple[int, int, int]:
    """(document, offset, length) of the longest prefix of ``value[position:]`` a document holds."""
    best = (LITERAL, 0, 0)
    if len(value) - position < MIN_SLICE:
        return best
    for index, text in enumerate(documents):
        if value[position : position + MIN_SLICE] not in text:
            continue
        low, high = MIN_SLICE, len(value) - position
        while low < high:
            middle = (low + high + 1) // 2
            if value[position : position + middle] in text:
                low = middle
            else:
                high = middle - 1
        if low > best[2]:
            best = (index, text.find(value[position : position + low]), low)
    return best


def _slice(document: int, start: int, end: int) -> Segment:
    return {"document": document, "start": start, "end": end, "literal": None}


def _literal(text: str) -> Segment:
    return {"document": LITERAL, "start": 0, "end": 0, "literal": text}


def restore(segments: Sequence[Segment], documents: Sequence[str]) -> str:
    """The string a recipe stands for."""
    return "".join(
        segment["literal"]
        if segment["document"] == LITERAL
        else documents[segment["document"]][segment["start"] : segment["end"]]
        for segment in segments
    )


class DocumentGroups:
    """The distinct lists of source documents rows name, each numbered once (rows hold the number)."""

    def __init__(self) -> None:
        self.groups: list[tuple[str, ...]] = []
        self._numbers: dict[tuple[str, ...], int] = {}

    def number(self, locators: Sequence[str]) -> int:
        key = tuple(locators)
        number = self._numbers.get(key)
        if number is None:
            number = self._numbers[key] = len(self.groups)
            self.groups.append(key)
        return number

    def locators(self) -> set[str]:
        return {locator for group in self.groups for locator in group}


class Recipes:
    """Writes text-free record batches: recipes from ``documents`` (locator → text) for rows whose documents
    are numbered in ``groups``."""

    def __init__(self, documents: dict[str, str], groups: DocumentGroups) -> None:
        self.documents = documents
        self.groups = groups.groups
        self.hashes = {locator: text_sha256(text) for locator, text in documents.items()}
        self._found: dict[tuple[str, str], int] = {}

    def batch(
        self,
        batch: pa.RecordBatch,
        tree: LicensedTree,
        paired: Mapping[str, StructOffsets],
        schema: pa.Schema,
        groups: np.ndarray,
    ) -> pa.RecordBatch:
        """``batch`` (full) under the text-free ``schema``; ``groups`` numbers each row's documents; ``paired``
        says which fields are offsets of which licensed string (:func:`offset_fields` of the record model)."""
        fields = [field for field in schema if field.name != SOURCE_DOCUMENTS]
        children = {name: batch.column(name) for name in batch.schema.names}
        encoded = self._fields(children, tree, groups, fields, paired, "")
        columns = dict(zip((field.name for field in fields), encoded, strict=True))
        return pa.RecordBatch.from_arrays(
            [
                self._source_documents(groups, field.type) if field.name == SOURCE_DOCUMENTS else columns[field.name]
                for field in schema
            ],
            schema=schema,
        )

    def _source_documents(self, groups: np.ndarray, target: pa.DataType) -> pa.Array:
        distinct, inverse = np.unique(groups, return_inverse=True)
        offsets, locators = [0], []
        for number in distinct.tolist():
            locators.extend(self.groups[number])
            offsets.append(len(locators))
        documents = pa.StructArray.from_arrays(
            [pa.array(locators, pa.string()), pa.array([self.hashes[locator] for locator in locators], pa.string())],
            fields=list(target.value_type),
        )
        listed = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), documents, type=target)
        return listed.take(pa.array(inverse.reshape(-1)))

    def _encode(
        self,
        array: Any,
        node: Any,
        owners: np.ndarray,
        target: pa.DataType,
        paired: Mapping[str, StructOffsets],
        path: str,
    ) -> pa.Array:
        """``array`` (at path ``path`` of the record) with recipes in place of the licensed strings ``node`` names;
        ``owners`` numbers the documents of each value's row."""
        if node == LEAF:
            return self._recipes(array, owners, target)
        mask = array.is_null() if array.null_count else None
        if isinstance(node, list):
            offsets = array.offsets.to_numpy()
            values = array.values.slice(offsets[0], offsets[-1] - offsets[0])
            owned = np.repeat(owners, np.diff(offsets))
            inner = self._encode(values, node[0], owned, target.value_type, paired, item_path(path))
            return pa.ListArray.from_arrays(pa.array(offsets - offsets[0], pa.int32()), inner, type=target, mask=mask)
        children = dict(zip((field.name for field in array.type), array.flatten(), strict=True))
        encoded = self._fields(children, node, owners, list(target), paired, path)
        return pa.StructArray.from_arrays(encoded, fields=list(target), mask=mask)

    def _fields(
        self,
        children: dict[str, Any],
        node: LicensedTree,
        owners: np.ndarray,
        fields: list[pa.Field],
        paired: Mapping[str, StructOffsets],
        path: str,
    ) -> list[pa.Array]:
        """The ``children`` of the struct at ``path`` under its text-free ``fields``; a licensed string with offsets
        in the struct (``paired`` at ``path``) is cut at its own place when a document holds it there."""
        offsets = paired.get(path, {})
        return [
            self._recipes(children[field.name], owners, field.type, _places(children, offsets.get(field.name)))
            if node.get(field.name) == LEAF
            else self._encode(
                children[field.name], node[field.name], owners, field.type, paired, field_path(path, field.name)
            )
            if field.name in node
            else children[field.name]
            for field in fields
        ]

    def _recipes(self, strings: Any, owners: np.ndarray, target: pa.DataType, places: Any = None) -> pa.Array:
        """One recipe per string (null stays null), made once per distinct (documents, string, place):
        ``places`` are the (start, end) of each string's span (-1 when it has none), where a document of its
        row holding it there is cut first, so the recipe follows that document when it changes."""
        encoded = pc.dictionary_encode(strings)
        distinct = encoded.dictionary.to_pylist()
        width = len(distinct) + 1
        keys = owners.astype(np.int64) * width + (pc.fill_null(encoded.indices, -1).to_numpy() + 1)
        rows = keys[:, None] if places is None else np.column_stack([keys, *places])
        unique, inverse = np.unique(rows, axis=0, return_inverse=True)
        offsets, documents, starts, ends, literals, nulls = [0], [], [], [], [], []
        for key, *place in unique.tolist():
            group, value = divmod(key, width)
            nulls.append(value == 0)
            pieces = self._pieces(group, distinct[value - 1], *place) if value else ()
            for document, start, end, literal in pieces:
                documents.append(document)
                starts.append(start)
                ends.append(end)
                literals.append(literal)
            offsets.append(len(documents))
        kinds = [pa.int32(), pa.int32(), pa.int32(), pa.string()]
        segments = pa.StructArray.from_arrays(
            [pa.array(values, kind) for values, kind in zip((documents, starts, ends, literals), kinds, strict=True)],
            fields=list(target.value_type),
        )
        recipes = pa.ListArray.from_arrays(
            pa.array(offsets, pa.int32()), segments, type=target, mask=pa.array(nulls) if any(nulls) else None
        )
        return recipes.take(pa.array(inverse.reshape(-1)))

    def _pieces(self, group: int, value: str, start: int = -1, end: int = -1) -> list[Piece]:
        """:func:`recipe` of ``value`` from the group's documents, a whole-string position looked up once;
        at ``[start, end)`` of the first document holding it there, when one does."""
        if not value:
            return []
        locators = self.groups[group]
        held = holding_at(value, (self.documents[locator] for locator in locators), start, end)
        if held is not None:
            return [(held, start, end, None)]
        for index, locator in enumerate(locators):
            key = (locator, value)
            at = self._found.get(key)
            if at is None:
                if len(self._found) >= FOUND_LIMIT:
                    self._found.clear()
                at = self._found[key] = self.documents[locator].find(value)
            if at >= 0:
                return [(index, at, at + len(value), None)]
        texts = [self.documents[locator] for locator in locators]
        return [(s["document"], s["start"], s["end"], s["literal"]) for s in recipe(value, texts)]


def _places(children: dict[str, Any], offsets: OffsetFields | None) -> tuple[np.ndarray, np.ndarray] | None:
    """Where each string of a struct's licensed field is (-1 where unknown), from its offset fields: between its
    start and end, or its own length from its start when it has no end; None when it has no start."""
    if offsets is None or offsets.start is None:
        return None
    starts = pc.fill_null(children[offsets.start], -1).to_numpy().astype(np.int64)
    if offsets.end is None:
        lengths = pc.fill_null(pc.utf8_length(children[offsets.licensed]), 0).to_numpy().astype(np.int64)
        return starts, np.where(starts >= 0, starts + lengths, -1)
    return starts, pc.fill_null(children[offsets.end], -1).to_numpy().astype(np.int64)
