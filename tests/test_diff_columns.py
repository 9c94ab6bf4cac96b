"""The column-wise comparison of aligned rows (``builders/diff/columns.py``) agrees with comparing the same rows
as Python values, on random nested lists and structs with nulls, NaN and empty lists."""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from clinical_corpora.builders.diff.columns import rows_differ

ITEM = pa.struct(
    [("start", pa.int32()), ("label", pa.string()), ("score", pa.float64()), ("ids", pa.list_(pa.string()))]
)
ROW = pa.struct([("name", pa.string()), ("items", pa.list_(ITEM))])

labels = st.one_of(st.none(), st.sampled_from(["a", "b", "é"]))
scores = st.one_of(st.none(), st.sampled_from([0.5, 1.0, math.nan]))
items = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "start": st.one_of(st.none(), st.integers(0, 3)),
            "label": labels,
            "score": scores,
            "ids": st.one_of(st.none(), st.lists(st.sampled_from(["x", "y"]), max_size=2)),
        }
    ),
)
rows = st.one_of(
    st.none(), st.fixed_dictionaries({"name": labels, "items": st.one_of(st.none(), st.lists(items, max_size=3))})
)


def same(a: Any, b: Any) -> bool:
    """Python equality with NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@given(st.lists(st.tuples(rows, rows), max_size=12), st.integers(0, 3))
def test_rows_differ_as_python_values_do(pairs: list[tuple[Any, Any]], offset: int) -> None:
    padding = [None] * offset  # sliced arrays: offsets into their buffers are honoured
    old = pa.array(padding + [a for a, _ in pairs], ROW).slice(offset)
    new = pa.array(padding + [b for _, b in pairs], ROW).slice(offset)
    found = rows_differ(old, new, None).tolist()
    assert found == [not same(a, b) for a, b in pairs]
