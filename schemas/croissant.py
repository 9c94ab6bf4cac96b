"""The Croissant (MLCommons, 1.1) description of a config's ``datasets.Features``: one field per column.

A struct becomes a field with ``subField`` s, a ``List`` a field with ``isArray`` (and ``arrayShape``, one
``-1`` per level of list), a ClassLabel an integer field whose description names its labels. Every field
reads its column of the config's parquet files; a nested field reaches its value with one ``jsonPath`` step
per struct level, as the Hugging Face Hub's own Croissant does.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from datasets import ClassLabel, Features, List, Value

DATA_TYPES: dict[str, str] = {
    "string": "sc:Text",
    "large_string": "sc:Text",
    "bool": "sc:Boolean",
    "int8": "cr:Int8",
    "int16": "cr:Int16",
    "int32": "cr:Int32",
    "int64": "cr:Int64",
    "uint8": "cr:UInt8",
    "uint16": "cr:UInt16",
    "uint32": "cr:UInt32",
    "uint64": "cr:UInt64",
    "float32": "cr:Float32",
    "float64": "cr:Float64",
}
"""Arrow value types as Croissant data types (the Hub's mapping)."""


def croissant_fields(features: Features, record_set: str, file_set: str) -> list[dict[str, Any]]:
    """The fields of the record set ``record_set`` reading ``features`` from the parquet FileSet ``file_set``."""
    return [
        _field(f"{record_set}/{name}", name, feature, _Read(file_set, name, [])) for name, feature in features.items()
    ]


class _Read(NamedTuple):
    """Where a field is read: the FileSet, its top-level column and the keys into that column's structs."""

    file_set: str
    column: str
    path: list[str]


def _field(field_id: str, name: str, feature: Any, read: _Read, shape: int = 0) -> dict[str, Any]:
    if isinstance(feature, List):
        return _field(field_id, name, feature.feature, read, shape + 1)
    field: dict[str, Any] = {"@type": "cr:Field", "@id": field_id, "name": name}
    if isinstance(feature, dict):
        field["subField"] = [
            _field(f"{field_id}/{key}", key, inner, read._replace(path=[*read.path, key]))
            for key, inner in feature.items()
        ]
    elif isinstance(feature, ClassLabel):
        labels = ", ".join(f"{number} {label}" for number, label in enumerate(feature.names))
        field["description"] = f"ClassLabel id: {labels}"
        field["dataType"] = "sc:Integer"
    elif isinstance(feature, Value) and feature.dtype in DATA_TYPES:
        field["dataType"] = DATA_TYPES[feature.dtype]
    else:
        raise TypeError(f"{field_id}: no Croissant data type for the feature {feature!r}")
    if not isinstance(feature, dict):
        source: dict[str, Any] = {"fileSet": {"@id": read.file_set}, "extract": {"column": read.column}}
        if read.path:
            source["transform"] = [{"jsonPath": step} for step in read.path]
        field["source"] = source
    if shape:
        field["isArray"] = True
        field["arrayShape"] = ",".join(["-1"] * shape)
    return field
