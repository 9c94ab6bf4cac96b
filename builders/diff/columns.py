"""Which rows of two aligned Arrow arrays differ, column-wise (no Python object per value).

Nested lists and structs are compared level by level: a list differs where the lengths differ, else where any
of its items differs (items of the rows with equal lengths are compared flat, then counted back to their rows);
a struct where any compared field differs. Null equals null, NaN equals NaN.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from clinical_corpora.builders.diff.shape import Node


def rows_differ(old: pa.Array, new: pa.Array, node: Node | None) -> np.ndarray:
    """One bool per row: whether ``old[i]`` and ``new[i]`` differ in what ``node`` compares (everything, when
    None)."""
    if len(old) == 0:
        return np.zeros(0, dtype=bool)
    nulls = _nulls(old) != _nulls(new)
    if pa.types.is_struct(new.type):
        return nulls | _structs_differ(old, new, node)
    if pa.types.is_list(new.type) or pa.types.is_large_list(new.type):
        return nulls | _lists_differ(old, new, None if node is None else node.item)
    return nulls | _values_differ(old, new)


def _nulls(array: pa.Array) -> np.ndarray:
    if array.null_count == 0:
        return np.zeros(len(array), dtype=bool)
    return np.asarray(array.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def _structs_differ(old: pa.Array, new: pa.Array, node: Node | None) -> np.ndarray:
    differ = np.zeros(len(new), dtype=bool)
    old_children = dict(zip((f.name for f in old.type), old.flatten(), strict=True))
    new_children = dict(zip((f.name for f in new.type), new.flatten(), strict=True))
    names = list(node.fields) if node is not None and node.kind == "struct" else list(new_children)
    for name in names:
        child = node.fields[name] if node is not None and node.kind == "struct" else None
        differ |= rows_differ(old_children[name], new_children[name], child)
    return differ


def _lists_differ(old: pa.Array, new: pa.Array, item: Node | None) -> np.ndarray:
    old_lengths, new_lengths = _lengths(old), _lengths(new)
    differ = old_lengths != new_lengths
    if not differ.any():  # items line up already: no copy
        candidates, old_part, new_part = np.arange(len(new)), old, new
    else:
        candidates = np.flatnonzero(~differ)
        chosen = pa.array(candidates)
        old_part, new_part = old.take(chosen), new.take(chosen)
    items_differ = rows_differ(pc.list_flatten(old_part), pc.list_flatten(new_part), item)
    parents = pc.list_parent_indices(new_part).to_numpy()
    bad = np.bincount(parents[items_differ], minlength=len(candidates)) > 0
    differ[candidates[bad]] = True
    return differ


def _lengths(lists: pa.Array) -> np.ndarray:
    """Each list's length, 0 for a null list."""
    lengths = pc.list_value_length(lists)
    return (pc.fill_null(lengths, 0) if lengths.null_count else lengths).to_numpy()


def _values_differ(old: pa.Array, new: pa.Array) -> np.ndarray:
    equal = pc.equal(old, new)
    if pa.types.is_floating(new.type):
        equal = pc.or_(equal, pc.and_(pc.fill_null(pc.is_nan(old), False), pc.fill_null(pc.is_nan(new), False)))
    if old.null_count or new.null_count:  # else no value is null, nor is any comparison
        equal = pc.or_(pc.fill_null(equal, False), pc.and_(old.is_null(), new.is_null()))
    return ~np.asarray(equal.to_numpy(zero_copy_only=False), dtype=bool)
