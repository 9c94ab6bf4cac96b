"""Which fields of a record hold licensed text, and the Features of a release without it.

One source of truth: a record model marks each string field copied from a licensed source (note text, span
text, sentences, queries, titles, terminology strings) as :data:`LicensedText`. The text-free variant of a
release keeps every other field as it is and stores, in place of each licensed string, a *recipe*: a list of
segments, each a slice ``document[start:end]`` of one of the row's source documents (``source_documents``:
locator and sha256 of each) or a short literal the documents do not hold (``@placeholder``, a separator).
Its Features are derived here from the full ones, so nobody declares them twice.

Recipes rather than bare offsets: a licensed string need not be one slice of one document (a CliCR query is
a learning point with its answer replaced by ``@placeholder``; a passage joins paragraphs), and a recipe
restores any string exactly, while a span's text still comes out as the one slice its offsets name.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from datasets import Features, List, Value
from pydantic import BaseModel


@dataclass(frozen=True)
class Licensed:
    """Marker in ``Annotated[str, Licensed()]``: the field holds text of a licensed source document."""


LicensedText = Annotated[str, Licensed()]
"""A string field whose value is licensed text: removed from a text-free release, restored by rehydration."""


LEAF: Literal["licensed"] = "licensed"
"""A licensed string in a :func:`licensed_tree`."""

LicensedTree = dict[str, Any]
"""Field name → ``LEAF``, a one-item list (a list of that node) or a nested tree; only fields reaching
licensed text appear."""

SOURCE_DOCUMENTS = "source_documents"
"""The column a text-free row adds: its documents (``locator``, ``sha256``), which segments index."""

LITERAL = -1
"""The ``document`` of a literal segment."""

MAX_LITERAL = 200
"""The most characters of literal segments one recipe holds: text no source document holds (a placeholder, an
annotator's note), which a text-free release must keep short (``clincorp validate`` checks every recipe)."""

SEGMENT = {"document": Value("int32"), "start": Value("int32"), "end": Value("int32"), "literal": Value("string")}
"""One piece of a recipe: ``source_documents[document].text[start:end]``, or ``literal`` when document is -1."""

DOCUMENT = {"locator": Value("string"), "sha256": Value("string")}


def licensed_tree(model: type[BaseModel]) -> LicensedTree:
    """Where ``model`` holds licensed text, as a tree of its field names (empty when nowhere)."""
    return marked_tree(model, Licensed)


def marked_tree(model: type[BaseModel], marker: type) -> LicensedTree:
    """Where ``model`` holds string fields marked with ``marker``, as a tree of its field names."""
    tree = {}
    for name, field in model.model_fields.items():
        node = _node(field.annotation, field.metadata, marker)
        if node is not None:
            tree[name] = node
    return tree


def _node(annotation: Any, metadata: list[Any], marker: type) -> Any:
    origin = get_origin(annotation)
    if origin is Annotated:
        inner, *extra = get_args(annotation)
        return _node(inner, [*metadata, *extra], marker)
    if origin in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        return _node(members[0], metadata, marker) if len(members) == 1 else None
    if origin is list:
        (item,) = get_args(annotation)
        inner = _node(item, [], marker)
        return None if inner is None else [inner]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return marked_tree(annotation, marker) or None
    if any(isinstance(found, marker) for found in metadata):
        if annotation is not str:
            raise TypeError(f"only str fields can be marked {marker.__name__}, not {annotation!r}")
        return LEAF
    return None


def licensed_paths(model: type[BaseModel]) -> list[str]:
    """The licensed fields of ``model`` as paths (``reports[].text``), in declaration order."""
    return _paths(licensed_tree(model), "")


def _paths(node: Any, prefix: str) -> list[str]:
    if node == LEAF:
        return [prefix]
    if isinstance(node, list):
        return _paths(node[0], f"{prefix}[]")
    return [path for name, child in node.items() for path in _paths(child, f"{prefix}.{name}" if prefix else name)]


def text_free_features(features: Features, tree: LicensedTree) -> Features:
    """``features`` with every licensed string replaced by a recipe, plus the ``source_documents`` column."""
    if SOURCE_DOCUMENTS in features:
        raise TypeError(f"a record field is named {SOURCE_DOCUMENTS!r}, the column a text-free release adds")
    derived = _replace(dict(features), tree)
    derived[SOURCE_DOCUMENTS] = List(DOCUMENT)
    return Features(derived)


def _replace(feature: Any, node: Any) -> Any:
    if node == LEAF:
        if feature != Value("string"):
            raise TypeError(f"a licensed field is stored as {feature}, not a string")
        return List(SEGMENT)
    if isinstance(node, list):
        return List(_replace(feature.feature, node[0]))
    return {name: _replace(child, node[name]) if name in node else child for name, child in feature.items()}


def map_licensed(value: Any, node: Any, change: Any) -> Any:
    """``value`` (a stored row or part of one) with ``change`` applied to every licensed string ``node``
    names, in place; None stays None."""
    if value is None:
        return None
    if node == LEAF:
        return change(value)
    if isinstance(node, list):
        return [map_licensed(item, node[0], change) for item in value]
    for name, child in node.items():
        value[name] = map_licensed(value[name], child, change)
    return value


def holds_lost(value: Any, node: Any) -> bool:
    """Whether a stored row (or part of one) holds a licensed string that is null: a string re-anchoring lost."""
    if node == LEAF:
        return value is None
    if isinstance(node, list):
        return any(holds_lost(item, node[0]) for item in value or [])
    return value is not None and any(holds_lost(value.get(name), child) for name, child in node.items())
