"""Text-free record batches made column by column, checked against the row-by-row recipes they replace; the
column-wise restore inverts them; lazy row views read as the stored rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from benchmarks.row_recipes import row_recipes
from clinical_corpora.builders.rehydrate.restore import restore_batch
from clinical_corpora.builders.text_free.lazy_rows import lazy_rows
from clinical_corpora.builders.text_free.recipes import DocumentGroups, Recipes
from clinical_corpora.core.locators import text_sha256
from clinical_corpora.schemas.features import features_for
from clinical_corpora.schemas.licensed import (
    SOURCE_DOCUMENTS,
    LicensedText,
    licensed_tree,
    offset_fields,
    text_free_features,
)
from clinical_corpora.schemas.spans import Span


class Inner(BaseModel):
    id: str
    spans: list[Span]


class Row(BaseModel):
    id: str
    title: LicensedText | None
    names: list[LicensedText]
    inner: Inner
    extra: Inner | None
    count: int


DOCUMENTS = {
    "notes:1": "Chest film: small left pleural effusion. No pneumothorax.",
    "notes:2": "CT head: no acute haemorrhage; small left pleural effusion again.",
    "notes:2/CHARTTIME": "2150-01-01 12:00:00",
}
LOCATORS = list(DOCUMENTS)
# pieces of the documents, and strings no document holds (literals, joins of slices)
words = st.sampled_from(["small left", "pleural effusion", "no acute", "2150-01-01", "@placeholder", "", "xy", "."])
strings = st.lists(words, max_size=3).map(" ".join)
PLACES = sorted(
    {text.find(word, 1) for text in DOCUMENTS.values() for word in ("small left", "pleural effusion")} - {-1}
)
"""Where a word occurs again after its first occurrence: a span there is cut from its own place."""
spans = st.builds(
    lambda value, start: {"start": start, "end": start + len(value), "text": value},
    strings,
    st.integers(0, 9) | st.sampled_from(PLACES),
)
inners = st.builds(lambda i, s: {"id": f"in{i}", "spans": s}, st.integers(0, 99), st.lists(spans, max_size=3))
rows = st.builds(
    lambda i, title, names, inner, extra, count: {
        "id": f"r{i}",
        "title": title,
        "names": names,
        "inner": inner,
        "extra": extra,
        "count": count,
    },
    st.integers(0, 999),
    st.none() | strings,
    st.lists(strings, max_size=3),
    inners,
    st.none() | inners,
    st.integers(0, 5),
)
row_documents = st.lists(st.sampled_from(LOCATORS), min_size=1, max_size=3, unique=True)


def row_by_row(batch: pa.RecordBatch, documents: list[list[str]], schema: pa.Schema) -> pa.RecordBatch:
    """The text-free rows the way they were first written: nested dicts, one recipe per string."""
    tree = licensed_tree(Row)
    stored = batch.to_pylist()
    for row, locators in zip(stored, documents, strict=True):
        texts = [DOCUMENTS[locator] for locator in locators]
        row_recipes(row, tree, texts, offset_fields(Row))
        row[SOURCE_DOCUMENTS] = [{"locator": loc, "sha256": text_sha256(DOCUMENTS[loc])} for loc in locators]
    return pa.RecordBatch.from_pylist(stored, schema=schema)


@settings(max_examples=150)
@given(data=st.lists(st.tuples(rows, row_documents), max_size=12))
def test_a_batch_gets_the_row_by_row_recipes_and_restores_to_itself(
    data: list[tuple[dict[str, Any], list[str]]],
) -> None:
    full = features_for(Row)
    tree = licensed_tree(Row)
    text_free = text_free_features(full, tree).arrow_schema
    batch = pa.RecordBatch.from_pylist([row for row, _ in data], schema=full.arrow_schema)
    groups = DocumentGroups()
    numbers = np.array([groups.number(locators) for _, locators in data], dtype=np.int64)
    written = Recipes(DOCUMENTS, groups).batch(batch, tree, offset_fields(Row), text_free, numbers)
    assert written.equals(row_by_row(batch, [locators for _, locators in data], text_free))
    texts = list(DOCUMENTS.values())
    restored = restore_batch(written, tree, full.arrow_schema, texts, {loc: n for n, loc in enumerate(DOCUMENTS)})
    assert restored.to_pylist() == batch.to_pylist()


def as_python(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: as_python(value[key]) for key in value}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [as_python(item) for item in value]
    return value


@settings(max_examples=100)
@given(data=st.lists(rows, max_size=12), offset=st.integers(0, 3))
def test_lazy_rows_read_as_the_stored_rows_sliced_batches_too(data: list[dict[str, Any]], offset: int) -> None:
    batch = pa.RecordBatch.from_pylist(data, schema=features_for(Row).arrow_schema).slice(offset)
    views = list(lazy_rows(batch))
    assert [as_python(view) for view in views] == batch.to_pylist()
    for view, row in zip(views, batch.to_pylist(), strict=True):  # read field by field, as hooks do
        assert as_python(view["inner"]["spans"][-1:]) == row["inner"]["spans"][-1:]
        assert (view["extra"] is None) == (row["extra"] is None) and view["names"] == row["names"]
        assert view["count"] == row["count"] and len(view) == len(row)
