"""Derive ``datasets.Features`` from pydantic record models, and convert rows to and from them.

One source of truth: a Literal or Enum field becomes a ClassLabel with the same names, a nested model a
struct, ``list[Model]`` a List of structs, ``Annotated[int, Int32]`` an int32. Nobody writes a Features
dict by hand.

Beside every ClassLabel field ``f`` (or list of them) stands a string field ``f_name`` holding the label
name, so readers without ``datasets`` (pandas, polars, duckdb) can filter by name. The encoder writes it
from the same value as the id; the decoder checks that the two agree and drops it, so record models never
see it.
"""

from __future__ import annotations

import enum
import hashlib
import json
import types
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from datasets import ClassLabel, Features, List, Value
from pydantic import BaseModel

from clinical_corpora.schemas.spans import Int32

_SCALARS: dict[type, str] = {str: "string", int: "int64", float: "float64", bool: "bool"}


def features_for(model: type[BaseModel]) -> Features:
    """The Features of a record model (its fields, in declaration order)."""
    return Features(_struct(model))


LABEL_NAME_SUFFIX = "_name"
"""``f`` + this suffix: the string field standing beside ClassLabel field ``f`` with its label name."""


def _struct(model: type[BaseModel]) -> dict[str, Any]:
    struct: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        where = f"{model.__name__}.{name}"
        feature = _feature(field.annotation, field.metadata, where)
        struct[name] = feature
        names_field = label_names_field(feature)
        if names_field is not None:
            sibling = name + LABEL_NAME_SUFFIX
            if sibling in model.model_fields:
                raise TypeError(f"{where}: field {sibling} is taken by the label names of this ClassLabel field")
            struct[sibling] = names_field
    return struct


def label_names_field(feature: Any) -> Value | List | None:
    """The string feature holding the label names of a ClassLabel (or list of them) field; None for others."""
    if isinstance(feature, ClassLabel):
        return Value("string")
    if isinstance(feature, List) and isinstance(feature.feature, ClassLabel):
        return List(Value("string"))
    return None


def _feature(annotation: Any, metadata: list[Any], where: str) -> Any:
    origin = get_origin(annotation)
    if origin is Annotated:
        inner, *extra = get_args(annotation)
        return _feature(inner, [*metadata, *extra], where)
    if origin in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(members) != 1:
            raise TypeError(f"{where}: only Optional[X] unions can be released, not {annotation}")
        return _feature(members[0], metadata, where)
    if origin is Literal:
        return ClassLabel(names=[str(value) for value in get_args(annotation)])
    if origin is list:
        (item,) = get_args(annotation)
        return List(_feature(item, [], where))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return ClassLabel(names=[str(member.value) for member in annotation])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _struct(annotation)
    if annotation is int and any(marker is Int32 or marker == Int32 for marker in metadata):
        return Value("int32")
    if annotation in _SCALARS:
        return Value(_SCALARS[annotation])
    raise TypeError(f"{where}: no release type for {annotation!r}")


def schema_fingerprint(features_by_config: dict[str, Features]) -> str:
    """sha256 of the configs' features, stable across runs."""
    payload = {name: features.to_dict() for name, features in sorted(features_by_config.items())}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


Converter = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


def _encoder(feature: Any) -> Converter | None:
    """A function mapping ClassLabel names to ids inside ``feature`` and writing each ``_name`` field beside
    its ids, updating dicts in place; None when there is nothing to map. Unlike the decoder it tracks no
    field path: the names come from validated records, so an unknown one is a bug (a KeyError), not a
    stored value to report."""
    if isinstance(feature, ClassLabel):
        ids = _label_ids(feature)

        def to_id(value: Any) -> Any:
            if value is None:
                return None
            return ids[value.value if isinstance(value, enum.Enum) else value]

        return to_id
    if isinstance(feature, List):
        inner = _encoder(feature.feature)
        if inner is None:
            return None
        return lambda values: None if values is None else [inner(value) for value in values]
    if isinstance(feature, dict):
        names_fields = {name: name + LABEL_NAME_SUFFIX if _has_label_names(feature, name) else None for name in feature}
        labels = [
            (name, _label_ids(child), names_fields[name])
            for name, child in feature.items()
            if isinstance(child, ClassLabel)
        ]
        steps = [
            (name, convert, names_fields[name])
            for name, child in feature.items()
            if not isinstance(child, ClassLabel) and (convert := _encoder(child)) is not None
        ]
        if not labels and not steps:
            return None

        def encode_struct(value: Any) -> Any:
            if value is not None:
                for name, ids, names_field in labels:  # to_id and _plain_names inline: ~20 labels a SDOH note
                    label = value[name]
                    if isinstance(label, enum.Enum):
                        label = label.value
                    if names_field is not None:
                        value[names_field] = label
                    value[name] = None if label is None else ids[label]
                for name, convert, names_field in steps:
                    item = value[name]
                    if names_field is not None:
                        value[names_field] = _plain_names(item)
                    value[name] = convert(item)
            return value

        return encode_struct
    return None


def _label_ids(feature: ClassLabel) -> dict[str, int]:
    """Each label name's id."""
    return {name: index for index, name in enumerate(feature.names)}


def _decoder(feature: Any) -> Converter | None:
    """A function mapping ClassLabel ids to names inside ``feature``, checking and dropping each ``_name``
    field, updating dicts in place; None when there is nothing to map."""
    if isinstance(feature, ClassLabel):
        names = feature.names

        def to_name(value: Any) -> Any:
            if value is None:
                return None
            if not isinstance(value, int) or not 0 <= value < len(names):
                raise LabelIdError("", f"label id {value!r} is not one of 0..{len(names) - 1} ({', '.join(names)})")
            return names[value]

        return to_name
    if isinstance(feature, List):
        inner = _decoder(feature.feature)
        if inner is None:
            return None
        return lambda values: None if values is None else [_at(f"[{i}]", inner, v) for i, v in enumerate(values)]
    if isinstance(feature, dict):
        fields = {name: _decoder(child) for name, child in feature.items()}
        active = {name: convert for name, convert in fields.items() if convert is not None}
        if not active:
            return None
        named = {name for name in active if _has_label_names(feature, name)}

        def decode_struct(value: Any) -> Any:
            if value is not None:
                for name, convert in active.items():
                    value[name] = _at(f".{name}", convert, value[name])
                    if name in named and name + LABEL_NAME_SUFFIX in value:
                        _check_names(name, value[name], value.pop(name + LABEL_NAME_SUFFIX))
            return value

        return decode_struct
    return None


def _has_label_names(struct: dict[str, Any], name: str) -> bool:
    names_field = label_names_field(struct[name])
    return names_field is not None and struct.get(name + LABEL_NAME_SUFFIX) == names_field


def _plain_names(value: Any) -> Any:
    """Label names as stored in the ``_name`` field (an Enum member as its value)."""
    if isinstance(value, list):
        return [_plain_names(item) for item in value]
    return value.value if isinstance(value, enum.Enum) else value


def _check_names(name: str, decoded: Any, stored: Any) -> None:
    """A LabelIdError when the stored label names are not those of the decoded ids (the columns drifted)."""
    if decoded != stored:
        raise LabelIdError(
            name + LABEL_NAME_SUFFIX, f"label name {stored!r} is not the name of the stored label id ({decoded!r})"
        )


class LabelIdError(ValueError):
    """A stored ClassLabel id outside its label set; ``field`` is where in the row (``spans[3].label``)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field.lstrip('.')}: {problem}")
        self.field = field.lstrip(".")
        self.problem = problem


def _at(step: str, convert: Converter, value: Any) -> Any:
    """``convert(value)``, a LabelIdError saying which field (``step``) it came from."""
    try:
        return convert(value)
    except LabelIdError as error:
        raise LabelIdError(
            step + ("" if error.field.startswith("[") or not error.field else ".") + error.field, error.problem
        ) from None


def row_encoder(features: Features) -> Converter:
    """Map a ``model_dump()`` row to what the release stores (ClassLabel names → ids), in place."""
    return _encoder(dict(features)) or _identity


def row_decoder(features: Features) -> Converter:
    """Map a stored row back to model input (ClassLabel ids → names), in place; a stored id outside its
    label set (-1, or past the last name) raises LabelIdError naming the field, never wraps around."""
    return _decoder(dict(features)) or _identity
