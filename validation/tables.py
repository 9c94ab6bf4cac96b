"""Flatten a release config into plain tables the expectation suite can check.

A config ``c`` gives table ``c`` (one row per record: scalars, struct fields as ``a.b``, ClassLabels as
names, each list as a length column ``n_<field>``) and, for every list, table ``c.<field>`` (one row per
item; lists inside items give ``c.<field>.<inner>``). Every row carries ``_split`` and ``_row`` (the
record's position in the config) and every item row ``_parent`` (its parent row in the parent table).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc
from datasets import ClassLabel, Features, List

from clinical_corpora.core.manifest import Expectation

Columns = dict[str, pa.Array]


def fields_checked(config: str, expectations: list[Expectation], features: Features) -> list[str]:
    """The top-level fields of ``config`` its expectations reach (flattening only those is enough)."""
    fields: set[str] = set()
    for expectation in expectations:
        path = expectation.table.split(".")
        if path[0] != config:
            continue
        if len(path) > 1:
            fields.add(path[1])
            continue
        fields.update(_field_of(column, features) for column in expectation.columns)
        fields.add(next(iter(features)))
    return [name for name in features if name in fields]


def _field_of(column: str, features: Features) -> str:
    """The top-level field a flattened column comes from (``a.b`` → a, ``n_items`` → items)."""
    if column.startswith("n_") and column[2:].split(".")[0] in features:
        return column[2:].split(".")[0]
    return column.split(".")[0]


def flatten_config(config: str, table: pa.Table, features: Features, splits: pa.Array) -> dict[str, pa.Table]:
    """All tables of one config, as Arrow (nothing is copied into pandas here); ``splits`` names each row's
    split."""
    table = table.combine_chunks()
    keys: Columns = {"_split": splits, "_row": pa.array(range(table.num_rows), pa.int64())}
    out: dict[str, Columns] = {}
    _flatten_rows(
        config,
        {
            name: table.column(name).chunk(0)
            if table.column(name).num_chunks
            else pa.array([], table.column(name).type)
            for name in table.column_names
        },
        dict(features),
        keys,
        out,
    )
    return {name: pa.table(columns) for name, columns in out.items()}


def _flatten_rows(name: str, arrays: Columns, features: dict[str, Any], keys: Columns, out: dict[str, Columns]) -> None:
    table = _FlatTable(name, dict(keys), keys)
    for field, feature in features.items():
        _add_column(table, field, arrays[field], feature, out)
    out[name] = table.columns


class _FlatTable(NamedTuple):
    """A flat table being filled: its name, its columns so far, and the key columns each of its rows carries."""

    name: str
    columns: Columns
    keys: Columns


def _add_column(table: _FlatTable, prefix: str, array: pa.Array, feature: Any, out: dict[str, Columns]) -> None:
    if isinstance(feature, ClassLabel):
        table.columns[prefix] = pa.array(feature.names, pa.string()).take(array)
    elif isinstance(feature, dict):
        for child, child_feature in feature.items():
            _add_column(table, f"{prefix}.{child}", array.field(child), child_feature, out)
    elif isinstance(feature, List):
        table.columns[f"n_{prefix}"] = pc.fill_null(pc.list_value_length(array), 0)
        parents = pc.list_parent_indices(array)
        child_keys = {key: values.take(parents) for key, values in table.keys.items() if key != "_parent"}
        child_keys["_parent"] = parents.cast(pa.int64())
        values = array.flatten()
        inner = feature.feature
        child = f"{table.name}.{prefix}"
        if isinstance(inner, dict):
            _flatten_rows(child, {name: values.field(name) for name in inner}, inner, child_keys, out)
        else:
            _flatten_rows(child, {"value": values}, {"value": inner}, child_keys, out)
    else:
        table.columns[prefix] = array
