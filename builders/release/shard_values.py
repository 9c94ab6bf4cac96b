"""What the door checks of a data shard's values before a command reads its rows: every ClassLabel id in its
label set and no null in a field its record model requires (read column by column, vectorised). A shard whose
schema is its record model's can still hold values no record of it has; a command would otherwise meet them
deep in its own code. ``clincorp validate`` checks every record in full (its records gate)."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

import pyarrow as pa
import pyarrow.compute as pc
from datasets import ClassLabel, Features, LargeList, List
from pydantic import BaseModel

from clinical_corpora.builders.contract.release_view import read_table
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.schemas.licensed import unwrapped


def shard_value_problems(shard: Path, name: str, model: type[BaseModel] | None, features: Features) -> list[str]:
    """Each field of the shard ``name`` holding a label id outside its set, or a null its ``model`` forbids
    (None: nulls are not checked)."""
    try:
        table = read_table(shard)
    except ClincorpError as error:
        return [str(error)]
    problems = []
    if model is not None:
        rows = table.to_struct_array().combine_chunks()
        problems += [f"{name}: field {where}" for where in _null_problems(rows, model, "")]
    for field, feature in features.items():
        if field in table.column_names:
            problems += [f"{name}: field {where}" for where in _label_problems(table.column(field), feature, field)]
    return problems


def _null_problems(rows: pa.StructArray, model: type[BaseModel], where: str) -> list[str]:
    """Each field of ``model``, at any depth, null in a row (or item) of ``rows`` that is not itself null where
    the model requires a value (text-free shards keep the full model's fields)."""
    problems = []
    for name, declared in model.model_fields.items():
        if rows.type.get_field_index(name) < 0:
            continue
        values = pc.struct_field(rows, name)  # null where the row is null, too
        if _required(declared.annotation) and values.null_count > rows.null_count:
            found = values.null_count - rows.null_count
            problems.append(f"{where}{name}: {found} null value(s) where a value is required")
        problems += _inner_null_problems(values, declared.annotation, f"{where}{name}")
    return problems


def _inner_null_problems(values: pa.Array, annotation: Any, where: str) -> list[str]:
    """The null problems inside a nested model's struct, or inside the items of a list of them."""
    annotation, _ = unwrapped(annotation, [])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and pa.types.is_struct(values.type):
        return _null_problems(values, annotation, f"{where}.")
    if get_origin(annotation) is list and pa.types.is_list(values.type):
        item = get_args(annotation)[0]
        items = pc.list_flatten(values)
        problems = (
            [f"{where}[]: {items.null_count} null item(s) where one is required"]
            if (items.null_count and _required(item))
            else []
        )
        return problems + _inner_null_problems(items, item, f"{where}[]")
    return []


def _required(annotation: Any) -> bool:
    """Whether a field of this annotation takes no None."""
    if get_origin(annotation) is Annotated:
        return _required(get_args(annotation)[0])
    optional = get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(annotation)
    return not optional and annotation is not type(None) and annotation is not Any


def _label_problems(values: pa.ChunkedArray | pa.Array, feature: Any, where: str) -> list[str]:
    """Each ClassLabel under ``feature`` whose stored ids leave its label set."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(feature, ClassLabel):
        low, high = pc.min_max(values).values()
        if low.is_valid and (low.as_py() < 0 or high.as_py() >= feature.num_classes):
            wrong = low.as_py() if low.as_py() < 0 else high.as_py()
            return [f"{where}: label id {wrong} is not one of 0..{feature.num_classes - 1}"]
        return []
    if isinstance(feature, List | LargeList) and pa.types.is_list(values.type) | pa.types.is_large_list(values.type):
        return _label_problems(pc.list_flatten(values), feature.feature, f"{where}[]")
    if isinstance(feature, list) and feature and pa.types.is_list(values.type):
        return _label_problems(pc.list_flatten(values), feature[0], f"{where}[]")
    if isinstance(feature, dict) and pa.types.is_struct(values.type):
        return [
            problem
            for child, child_feature in feature.items()
            if values.type.get_field_index(child) >= 0
            for problem in _label_problems(pc.struct_field(values, child), child_feature, f"{where}.{child}")
        ]
    return []
