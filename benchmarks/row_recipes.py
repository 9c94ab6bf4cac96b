"""The text-free rows the way they were first written, one row and one string at a time: the reference the
column-wise writer (``builders/text_free/recipes.py``) is checked against, and the naive baseline of
``text_free_write.py``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clinical_corpora.builders.text_free.recipes import recipe
from clinical_corpora.schemas.licensed import LEAF, OffsetFields, StructOffsets, field_path, item_path


def row_recipes(
    value: Any, node: Any, documents: Sequence[str], paired: Mapping[str, StructOffsets], path: str = ""
) -> Any:
    """``value`` (a stored row or part of one, at ``path`` of the record) with each licensed string ``node``
    names replaced by its :func:`recipe` from ``documents``, in place; a string with offsets in its struct
    (``paired``, :func:`offset_fields` of the record model) at its own place."""
    if value is None:
        return None
    if node == LEAF:
        return recipe(value, documents)
    if isinstance(node, list):
        return [row_recipes(item, node[0], documents, paired, item_path(path)) for item in value]
    offsets = paired.get(path, {})
    for name, child in node.items():
        if child == LEAF and value[name] is not None:
            value[name] = recipe(value[name], documents, _place(value, offsets.get(name)))
        else:
            value[name] = row_recipes(value[name], child, documents, paired, field_path(path, name))
    return value


def _place(struct: dict[str, Any], offsets: OffsetFields | None) -> tuple[int, int] | None:
    if offsets is None or offsets.start is None or struct[offsets.start] is None:
        return None
    start = struct[offsets.start]
    if offsets.end is None:
        return start, start + len(struct[offsets.licensed])
    end = struct[offsets.end]
    return (start, end) if end is not None else None
