"""The text-free rows the way they were first written, one row and one string at a time: the reference the
column-wise writer (``builders/text_free/recipes.py``) is checked against, and the naive baseline of
``text_free_write.py``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clinical_corpora.builders.text_free.recipes import recipe
from clinical_corpora.schemas.licensed import LEAF


def row_recipes(value: Any, node: Any, documents: Sequence[str]) -> Any:
    """``value`` (a stored row or part of one) with each licensed string ``node`` names replaced by its
    :func:`recipe` from ``documents``, in place; a span's text (beside integer ``start`` and ``end``, or from
    its integer ``<name>_start``) at its own place."""
    if value is None:
        return None
    if node == LEAF:
        return recipe(value, documents)
    if isinstance(node, list):
        return [row_recipes(item, node[0], documents) for item in value]
    for name, child in node.items():
        if child == LEAF and value[name] is not None:
            value[name] = recipe(value[name], documents, _place(value, name))
        else:
            value[name] = row_recipes(value[name], child, documents)
    return value


def _place(struct: dict[str, Any], name: str) -> tuple[int, int] | None:
    start = struct.get("start" if name == "text" else f"{name}_start")
    if not isinstance(start, int):
        return None
    if name != "text":
        return start, start + len(struct[name])
    end = struct.get("end")
    return (start, end) if isinstance(end, int) else None
