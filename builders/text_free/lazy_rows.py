"""The rows of an Arrow record batch as read-only mappings converted to Python only where they are read.

A corpus's ``source_documents`` hook reads a few ids of each stored row; converting the whole row
(``to_pylist``) would turn every mention text and sentence into Python strings first. Here a row is a view:
a leaf column is converted once per batch when a row first reads it, a struct field by field, a list through
its offsets, so the columns no hook reads are never converted.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa


class _Column:
    """One array of a batch: leaves converted whole on first read, structs and lists lazily."""

    def __init__(self, array: pa.Array) -> None:
        self.array = array
        kind = array.type
        self.is_struct = pa.types.is_struct(kind)
        self.is_list = pa.types.is_list(kind) or pa.types.is_large_list(kind)
        self.is_leaf = not (self.is_struct or self.is_list)
        self._nulls: list[bool] | None = array.is_null().to_pylist() if array.null_count else None
        self._values: list[Any] | None = None
        self._children: dict[str, _Column] = {}
        self._offsets: list[int] | None = None

    def get(self, row: int) -> Any:
        if self.is_leaf:
            if self._values is None:
                self._values = self.array.to_pylist()
            return self._values[row]
        if self._nulls is not None and self._nulls[row]:
            return None
        if self.is_struct:
            return StructView(self, row)
        if self._offsets is None:
            self._offsets = self.array.offsets.to_pylist()
        start, end = self._offsets[row], self._offsets[row + 1]
        values = self.child("")
        if not values.is_leaf:
            return ListView(values, start, end)
        return [values.get(index) for index in range(start, end)]

    def child(self, name: str) -> _Column:
        """A struct's field ``name``, or a list's values (``""``)."""
        column = self._children.get(name)
        if column is None:
            if self.is_struct and self.array.type.get_field_index(name) < 0:
                raise KeyError(name)
            column = _Column(self.array.values if self.is_list else self.array.field(name))
            self._children[name] = column
        return column

    def names(self) -> list[str]:
        return [field.name for field in self.array.type]


class StructView(Mapping[str, Any]):
    """One struct value (a row, or a struct inside it); fields are read on access."""

    def __init__(self, column: _Column, row: int) -> None:
        self._column, self._row = column, row

    def __getitem__(self, name: str) -> Any:
        return self._column.child(name).get(self._row)

    def __iter__(self) -> Iterator[str]:
        return iter(self._column.names())

    def __len__(self) -> int:
        return self._column.array.type.num_fields


class ListView(Sequence[Any]):
    """One list value of structs or lists; items are views."""

    def __init__(self, values: _Column, start: int, end: int) -> None:
        self._values, self._start, self._end = values, start, end

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._values.get(self._start + index)

    def __len__(self) -> int:
        return self._end - self._start


def lazy_rows(batch: pa.RecordBatch) -> Iterator[StructView]:
    """Each row of ``batch`` as a view (a Mapping of its stored values, ClassLabel ids as stored)."""
    table = _Column(pa.StructArray.from_arrays(batch.columns, fields=list(batch.schema)))
    return (StructView(table, row) for row in range(batch.num_rows))
