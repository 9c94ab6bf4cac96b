"""Restore the licensed text of a text-free record batch column by column (Arrow in, Arrow out).

A row-by-row restore spends its time turning nested Arrow structs into Python dicts and back (50 s for
rad_coref's 272k mention pairs); here only the recipes' flat segment columns reach Python, each string is
joined from its slices, and the nested lists and structs around it are rebuilt from their offsets.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from clinical_corpora.schemas.licensed import LEAF, LITERAL, SOURCE_DOCUMENTS, LicensedTree


class BatchDocuments:
    """The documents of one batch: each row's ``source_documents`` as indices into ``texts``."""

    def __init__(self, batch: pa.RecordBatch, texts: list[str], index: dict[str, int]) -> None:
        column = batch.column(SOURCE_DOCUMENTS)
        offsets = column.offsets.to_numpy()
        locators = column.flatten().flatten()[0].to_pylist()
        self.texts = texts
        self.ids = np.array([index[locator] for locator in locators], dtype=np.int64)
        self.first = offsets[:-1] - offsets[0]


def restore_batch(
    batch: pa.RecordBatch, tree: LicensedTree, schema: pa.Schema, texts: list[str], index: dict[str, int]
) -> pa.RecordBatch:
    """``batch`` (text-free) with every recipe replaced by its text, under the full release's ``schema``."""
    documents = BatchDocuments(batch, texts, index)
    rows = np.arange(batch.num_rows)
    columns = [
        _restore(batch.column(field.name), tree[field.name], rows, field.type, documents)
        if field.name in tree
        else batch.column(field.name)
        for field in schema
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _restore(array: Any, node: Any, rows: np.ndarray, target: pa.DataType, documents: BatchDocuments) -> pa.Array:
    mask = array.is_null() if array.null_count else None
    if node == LEAF:
        return _strings(array, rows, documents)
    offsets = array.offsets.to_numpy() if isinstance(node, list) else None
    if offsets is not None:
        values = array.values.slice(offsets[0], offsets[-1] - offsets[0])
        inner = _restore(values, node[0], np.repeat(rows, np.diff(offsets)), target.value_type, documents)
        return pa.ListArray.from_arrays(pa.array(offsets - offsets[0], pa.int32()), inner, type=target, mask=mask)
    children = dict(zip((field.name for field in array.type), array.flatten(), strict=True))
    restored = [
        _restore(children[field.name], node[field.name], rows, field.type, documents)
        if field.name in node
        else children[field.name]
        for field in target
    ]
    return pa.StructArray.from_arrays(restored, fields=list(target), mask=mask)


def _strings(recipes: Any, rows: np.ndarray, documents: BatchDocuments) -> pa.Array:
    """Each recipe of a list<segment> array joined into its string (null stays null)."""
    offsets = recipes.offsets.to_numpy()
    segments = recipes.values.slice(offsets[0], offsets[-1] - offsets[0])
    document, start, end, literal = segments.flatten()
    local = document.to_numpy(zero_copy_only=False)
    owners = np.repeat(rows, np.diff(offsets))
    sliced = local != LITERAL
    ids = np.zeros(len(local), dtype=np.int64)
    ids[sliced] = documents.ids[documents.first[owners[sliced]] + local[sliced]]
    texts = documents.texts
    pieces = [
        texts[text_id][begin:finish] if position != LITERAL else value
        for text_id, position, begin, finish, value in zip(
            ids.tolist(), local.tolist(), start.to_pylist(), end.to_pylist(), literal.to_pylist(), strict=True
        )
    ]
    bounds = (offsets - offsets[0]).tolist()
    nulls = recipes.is_null().to_pylist() if recipes.null_count else [False] * len(recipes)
    return pa.array(
        [None if null else "".join(pieces[a:b]) for a, b, null in zip(bounds[:-1], bounds[1:], nulls, strict=True)],
        pa.string(),
    )
