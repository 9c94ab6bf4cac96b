"""Restore the licensed text of a text-free record batch column by column (Arrow in, Arrow out).

A row-by-row restore spends its time turning nested Arrow structs into Python dicts and back (50 s for
rad_coref's 272k mention pairs); here the recipes' flat segment columns stay in Arrow and numpy: each
distinct slice of a document is cut once in Python, the pieces are joined by ``binary_join``, and the nested
lists and structs around them are rebuilt from their offsets.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.schemas.licensed import LEAF, LITERAL, MAX_LITERAL, SOURCE_DOCUMENTS, LicensedTree


class RecipeError(ClincorpError):
    """A recipe names a document its row does not list, or offsets outside that document's text."""

    def __init__(self, row: int, field: str, problem: str) -> None:
        super().__init__(f"field {field}: {problem}")
        self.row, self.field, self.problem = row, field, problem


class BatchDocuments:
    """The documents of one batch: each row's ``source_documents`` as indices into ``texts``."""

    def __init__(self, batch: pa.RecordBatch, texts: list[str], index: dict[str, int]) -> None:
        column = batch.column(SOURCE_DOCUMENTS)
        offsets = column.offsets.to_numpy()
        locators = column.flatten().flatten()[0].to_pylist()
        self.texts = texts
        self.ids = np.array([index[locator] for locator in locators], dtype=np.int64)
        self.first = offsets[:-1] - offsets[0]
        self.listed = np.diff(offsets)  # each row's number of documents

    def check(self, field: str, owners: np.ndarray, local: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
        """Raise a RecipeError for the first slice whose document index or offsets are out of range."""
        outside = (local < 0) | (local >= self.listed[owners])
        if outside.any():
            at = int(np.argmax(outside))
            raise RecipeError(
                int(owners[at]), field, f"document {int(local[at])} of a row listing {int(self.listed[owners[at]])}"
            )
        lengths = np.fromiter((len(self.texts[i]) for i in self.ids[self.first[owners] + local]), np.int64, len(local))
        wrong = (starts < 0) | (ends < starts) | (ends > lengths)
        if wrong.any():
            at = int(np.argmax(wrong))
            raise RecipeError(
                int(owners[at]),
                field,
                f"offsets [{int(starts[at])}, {int(ends[at])}) outside its document of {int(lengths[at])} characters",
            )


def restore_batch(
    batch: pa.RecordBatch, tree: LicensedTree, schema: pa.Schema, texts: list[str], index: dict[str, int]
) -> pa.RecordBatch:
    """``batch`` (text-free) with every recipe replaced by its text, under the full release's ``schema``."""
    documents = BatchDocuments(batch, texts, index)
    rows = np.arange(batch.num_rows)
    columns = [
        _restore(batch.column(field.name), tree[field.name], rows, field.type, documents, field.name)
        if field.name in tree
        else batch.column(field.name)
        for field in schema
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _restore(
    array: Any, node: Any, rows: np.ndarray, target: pa.DataType, documents: BatchDocuments, field: str
) -> pa.Array:
    mask = array.is_null() if array.null_count else None
    if node == LEAF:
        return _strings(array, rows, documents, field)
    offsets = array.offsets.to_numpy() if isinstance(node, list) else None
    if offsets is not None:
        values = array.values.slice(offsets[0], offsets[-1] - offsets[0])
        inner = _restore(values, node[0], np.repeat(rows, np.diff(offsets)), target.value_type, documents, field)
        return pa.ListArray.from_arrays(pa.array(offsets - offsets[0], pa.int32()), inner, type=target, mask=mask)
    children = dict(zip((child.name for child in array.type), array.flatten(), strict=True))
    restored = [
        _restore(children[child.name], node[child.name], rows, child.type, documents, f"{field}.{child.name}")
        if child.name in node
        else children[child.name]
        for child in target
    ]
    return pa.StructArray.from_arrays(restored, fields=list(target), mask=mask)


def _strings(recipes: Any, rows: np.ndarray, documents: BatchDocuments, field: str) -> pa.Array:
    """Each recipe of a list<segment> array joined into its string (null stays null); each distinct slice
    of a document is cut once (a mention's text repeats in every pair it is part of)."""
    offsets = recipes.offsets.to_numpy()
    segments = recipes.values.slice(offsets[0], offsets[-1] - offsets[0])
    document, start, end, literal = segments.flatten()
    local = document.to_numpy(zero_copy_only=False)
    owners = np.repeat(rows, np.diff(offsets))
    sliced = local != LITERAL
    starts = start.to_numpy(zero_copy_only=False).astype(np.int64)
    ends = end.to_numpy(zero_copy_only=False).astype(np.int64)
    documents.check(field, owners[sliced], local[sliced], starts[sliced], ends[sliced])
    unwritten = ~sliced & literal.is_null().to_numpy(zero_copy_only=False)
    if unwritten.any():
        raise RecipeError(int(owners[np.argmax(unwritten)]), field, "a literal segment without its text")
    _check_literals(literal, offsets - offsets[0], rows, field)
    ids = np.zeros(len(local), dtype=np.int64)
    ids[sliced] = documents.ids[documents.first[owners[sliced]] + local[sliced]]
    slices, inverse = _distinct_slices(ids[sliced], starts[sliced], ends[sliced])
    texts = documents.texts
    cut = pa.array([texts[text][begin:finish] for text, begin, finish in slices], pa.string())
    positions = np.zeros(len(local), dtype=np.int64)
    positions[sliced] = inverse
    pieces = pc.if_else(pa.array(sliced), cut.take(pa.array(positions)) if len(cut) else literal, literal)
    mask = recipes.is_null() if recipes.null_count else None
    joined = pa.ListArray.from_arrays(pa.array(offsets - offsets[0], pa.int32()), pieces, mask=mask)
    return pc.binary_join(joined, "")


def _check_literals(literal: pa.Array, offsets: np.ndarray, rows: np.ndarray, field: str) -> None:
    """A RecipeError for the first recipe holding more than :data:`MAX_LITERAL` characters of literal text."""
    lengths = pc.fill_null(pc.utf8_length(literal), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    totals = np.diff(np.concatenate([[0], np.cumsum(lengths)])[offsets]) if len(offsets) > 1 else np.zeros(0)
    if (totals > MAX_LITERAL).any():
        at = int(np.argmax(totals > MAX_LITERAL))
        raise RecipeError(
            int(rows[at]),
            field,
            f"{int(totals[at])} characters of literal text (at most {MAX_LITERAL}): text no source document holds",
        )


def _distinct_slices(ids: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[list[Any], np.ndarray]:
    """The distinct (text, start, end) triples, and the number of each slice's triple among them."""
    if not len(ids):
        return [], np.zeros(0, dtype=np.int64)
    width = int(max(starts.max(), ends.max())) + 1
    if (int(ids.max()) + 1) * width * width < 2**62:
        unique, inverse = np.unique((ids * width + starts) * width + ends, return_inverse=True)
        triples = np.stack([unique // (width * width), unique // width % width, unique % width], axis=1)
    else:
        triples, inverse = np.unique(np.stack([ids, starts, ends], axis=1), axis=0, return_inverse=True)
    return triples.tolist(), inverse.reshape(-1)
