"""The Croissant (MLCommons, 1.1) description of a config's ``datasets.Features``: one field per column.

Every field is one its reference reader (mlcroissant 1.1) reads into the values ``datasets.load_dataset``
loads. A column of values or of lists of values is a field with ``isArray`` (and ``arrayShape``, one ``-1``
per level of list); a ClassLabel an integer field whose description names its labels. A struct, or a list
of structs, is a field with one level of ``subField`` s: one per value reached through its structs, named
by its dotted path (``trigger.start``) and read with that one ``jsonPath``, since mlcroissant fills one
level of sub-fields. A list of structs inside those (``entities.normalized``) or a list of lists of structs
is a shape its reader cannot follow (it applies a ``jsonPath`` to each item of one list only): it is not
declared as a field but named, with its shape, in the description of the field or record set holding it.
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

UNREADABLE = (
    "mlcroissant 1.1 cannot read a list of records inside a list; datasets.load_dataset loads it, "
    "with the shape given here"
)
"""Why a nested list of structs is named in a description instead of declared as a field."""


class CroissantColumns(NamedTuple):
    """A config's fields, and the columns (with their shapes) no field can describe."""

    fields: list[dict[str, Any]]
    undeclared: list[str]


def croissant_fields(features: Features, record_set: str, file_set: str) -> CroissantColumns:
    """The fields of the record set ``record_set`` reading ``features`` from the parquet FileSet ``file_set``."""
    fields: list[dict[str, Any]] = []
    undeclared: list[str] = []
    for name, feature in features.items():
        depth, inner = _unwrap(feature)
        if isinstance(inner, dict) and depth > 1:
            undeclared.append(f"{name} ({shape_of(feature)})")
            continue
        field: dict[str, Any] = {"@type": "cr:Field", "@id": f"{record_set}/{name}", "name": name}
        source = {"fileSet": {"@id": file_set}, "extract": {"column": name}}
        if isinstance(inner, dict):
            field.update(_record(field["@id"], name, inner, source))
        else:
            field.update(_value(field["@id"], inner))
            field["source"] = source
        fields.append(field | _array(depth))
    return CroissantColumns(fields, undeclared)


def shape_of(feature: Any) -> str:
    """A feature's shape in a few words: ``list of {start: int32, text: string}``."""
    if isinstance(feature, List):
        return f"list of {shape_of(feature.feature)}"
    if isinstance(feature, dict):
        return "{" + ", ".join(f"{key}: {shape_of(inner)}" for key, inner in feature.items()) + "}"
    if isinstance(feature, ClassLabel):
        return "ClassLabel id"
    return str(feature.dtype)


def _record(field_id: str, column: str, struct: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    """A struct's (or each list item's) values as one level of sub-fields; its nested lists of structs named."""
    sub_fields: list[dict[str, Any]] = []
    undeclared: list[str] = []
    for path, feature in _paths(struct, []):
        depth, inner = _unwrap(feature)
        dotted = ".".join(path)
        if isinstance(inner, dict):
            undeclared.append(f"{column}.{dotted} ({shape_of(feature)})")
            continue
        sub = {"@type": "cr:Field", "@id": f"{field_id}/{'/'.join(path)}", "name": dotted, **_value(dotted, inner)}
        sub["source"] = {**source, "transform": [{"jsonPath": dotted}]}
        sub_fields.append(sub | _array(depth))
    described: dict[str, Any] = {"subField": sub_fields}
    if undeclared:
        described["description"] = f"Not declared as sub-fields ({UNREADABLE}): {'; '.join(undeclared)}."
    return described


def _paths(struct: dict[str, Any], prefix: list[str]) -> list[tuple[list[str], Any]]:
    """Each value of a struct reached through its structs (never through a list), with its key path."""
    found: list[tuple[list[str], Any]] = []
    for key, feature in struct.items():
        if isinstance(feature, dict):
            found.extend(_paths(feature, [*prefix, key]))
        else:
            found.append(([*prefix, key], feature))
    return found


def _unwrap(feature: Any) -> tuple[int, Any]:
    """How many lists wrap a feature, and what they hold."""
    depth = 0
    while isinstance(feature, List):
        feature, depth = feature.feature, depth + 1
    return depth, feature


def _value(field_id: str, feature: Any) -> dict[str, Any]:
    if isinstance(feature, ClassLabel):
        labels = ", ".join(f"{number} {label}" for number, label in enumerate(feature.names))
        return {"description": f"ClassLabel id: {labels}", "dataType": "sc:Integer"}
    if isinstance(feature, Value) and feature.dtype in DATA_TYPES:
        return {"dataType": DATA_TYPES[feature.dtype]}
    raise TypeError(f"{field_id}: no Croissant data type for the feature {feature!r}")


def _array(depth: int) -> dict[str, Any]:
    return {"isArray": True, "arrayShape": ",".join(["-1"] * depth)} if depth else {}
