"""The column-wise comparison of aligned rows (``builders/diff/columns.py``) agrees with comparing the same rows
as Python values, on random nested lists and structs with nulls, NaN and empty lists; the shape two releases
share (``builders/diff/shape.py``) names what it leaves out."""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
from datasets import ClassLabel, Features, List, Value
from hypothesis import given
from hypothesis import strategies as st

from clinical_corpora.builders.diff.columns import rows_differ
from clinical_corpora.builders.diff.shape import common_shape

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


def test_fields_one_release_lacks_or_retyped_are_named_not_compared() -> None:
    span = {"start": Value("int32"), "end": Value("int32"), "type": ClassLabel(names=["a", "b"])}
    old = Features({"id": Value("string"), "n": Value("int64"), "spans": List({**span, "type_name": Value("string")})})
    new = Features(
        {
            "id": Value("string"),
            "n": Value("string"),
            "spans": List({**span, "type_name": Value("string"), "score": Value("float64")}),
            "note": Value("string"),
        }
    )
    shape = common_shape(old, new)
    assert shape.uncompared == {"n": "retyped", "spans[].score": "added", "note": "added"}
    spans = shape.fields["spans"]
    assert spans.item is not None and spans.item.is_span
    assert set(spans.item.fields) == {"start", "end", "type_name"}  # the label by its name, not its id
    assert spans.item.fields["type_name"].label
