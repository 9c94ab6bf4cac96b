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

The integer fields that are offsets of a licensed string are marked too, beside it in the same struct
(``Annotated[int, OffsetOf("text", "start")]``): :func:`offset_fields` derives from the marks which fields
pair with which string, so writing recipes and re-anchoring follow the schema, whatever the fields are named.
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from datasets import Features, List, Value
from pydantic import BaseModel


@dataclass(frozen=True)
class Licensed:
    """Marker in ``Annotated[str, Licensed()]``: the field holds text of a licensed source document."""


LicensedText = Annotated[str, Licensed()]
"""A string field whose value is licensed text: removed from a text-free release, restored by rehydration."""

OffsetRole = Literal["start", "end", "pairs"]


@dataclass(frozen=True)
class OffsetOf:
    """Marker in ``Annotated[int, OffsetOf("text", "start")]``: the field is an offset of the licensed string
    field ``licensed`` of the same struct: where it starts, where it ends (exclusive), or, for a list of
    licensed strings, ``pairs``: a list of ``[start, end]``, one per string (BigBio's ``offsets``). A string
    with a start and no end runs its own length from it."""

    licensed: str
    role: OffsetRole


@dataclass(frozen=True)
class OffsetFields:
    """The fields of a struct holding the offsets of its licensed string field ``licensed`` (None: no field has
    that role)."""

    licensed: str
    start: str | None = None
    end: str | None = None
    pairs: str | None = None

    @property
    def span(self) -> tuple[str, str] | None:
        """The (start, end) fields, when the string has both."""
        return None if self.start is None or self.end is None else (self.start, self.end)

    @property
    def start_only(self) -> str | None:
        """The start field of a string that has no end field (it runs its own length from there)."""
        return self.start if self.end is None else None


StructOffsets = Mapping[str, OffsetFields]
"""A struct's licensed string fields that have offsets → their :class:`OffsetFields`."""


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
    tree = {}
    for name, field in model.model_fields.items():
        node = _node(field.annotation, field.metadata)
        if node is not None:
            tree[name] = node
    return tree


def _node(annotation: Any, metadata: list[Any]) -> Any:
    annotation, metadata = unwrapped(annotation, metadata)
    if get_origin(annotation) in (Union, types.UnionType):
        return None
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        inner = _node(item, [])
        return None if inner is None else [inner]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return licensed_tree(annotation) or None
    if any(isinstance(found, Licensed) for found in metadata):
        if annotation is not str:
            raise TypeError(f"only str fields can be marked Licensed, not {annotation!r}")
        return LEAF
    return None


def licensed_paths(model: type[BaseModel]) -> list[str]:
    """The licensed fields of ``model`` as paths (``reports[].text``), in declaration order."""
    return _paths(licensed_tree(model), "")


def field_path(parent: str, name: str) -> str:
    """The path of field ``name`` of the struct at path ``parent`` (``""``: the record)."""
    return f"{parent}.{name}" if parent else name


def item_path(parent: str) -> str:
    """The path of the items of the list at path ``parent``."""
    return f"{parent}[]"


def _paths(node: Any, prefix: str) -> list[str]:
    if node == LEAF:
        return [prefix]
    if isinstance(node, list):
        return _paths(node[0], item_path(prefix))
    return [path for name, child in node.items() for path in _paths(child, field_path(prefix, name))]


@cache
def offset_fields(model: type[BaseModel]) -> Mapping[str, StructOffsets]:
    """Where the offsets of ``model``'s licensed strings are, from their :class:`OffsetOf` marks: per struct
    path (``""`` the record, ``first``, ``events[].trigger``, as :func:`licensed_paths` writes them; lists and
    Optionals are transparent), each licensed field with offsets → its :class:`OffsetFields`. A mark naming no
    licensed string of its own struct (for ``pairs``: no list of them), two fields of one role or an end without
    a start is a TypeError naming the model and field. Computed once per model."""
    found: dict[str, StructOffsets] = {}
    _collect_offsets(model, "", found)
    return types.MappingProxyType(found)


def _collect_offsets(model: type[BaseModel], path: str, found: dict[str, StructOffsets]) -> None:
    roles: dict[str, dict[str, str]] = {}
    tree = licensed_tree(model)
    for name, field in model.model_fields.items():
        annotation, metadata = unwrapped(field.annotation, field.metadata)
        for mark in (found_mark for found_mark in metadata if isinstance(found_mark, OffsetOf)):
            _check_offset(model, name, annotation, mark, tree.get(mark.licensed))
            held = roles.setdefault(mark.licensed, {})
            if mark.role in held:
                raise TypeError(
                    f"{model.__name__}.{name} and {model.__name__}.{held[mark.role]} are both the {mark.role} "
                    f"of {mark.licensed!r}"
                )
            held[mark.role] = name
        nested, suffix = _nested_model(annotation)
        if nested is not None:
            _collect_offsets(nested, field_path(path, name) + suffix, found)
    for licensed, held in roles.items():
        if "end" in held and "start" not in held:
            raise TypeError(f"{model.__name__}.{held['end']} is the end of {licensed!r}, which has no start field")
    if roles:
        found[path] = types.MappingProxyType(
            {licensed: OffsetFields(licensed, **held) for licensed, held in roles.items()}
        )


def unwrapped(annotation: Any, metadata: list[Any]) -> tuple[Any, list[Any]]:
    """``annotation`` without its Annotated and Optional layers, and every metadata item of those layers."""
    origin = get_origin(annotation)
    if origin is Annotated:
        inner, *extra = get_args(annotation)
        return unwrapped(inner, [*metadata, *extra])
    if origin in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(members) == 1:
            return unwrapped(members[0], metadata)
    return annotation, metadata


def _nested_model(annotation: Any) -> tuple[type[BaseModel] | None, str]:
    """The model a field holds (through lists, Annotated and Optional) and the ``[]`` of each list around it."""
    annotation, _ = unwrapped(annotation, [])
    if get_origin(annotation) is list:
        nested, suffix = _nested_model(get_args(annotation)[0])
        return nested, item_path(suffix)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, ""
    return None, ""


def _check_offset(model: type[BaseModel], name: str, annotation: Any, mark: OffsetOf, node: Any) -> None:
    """Raise TypeError unless field ``name`` (of type ``annotation``) can be ``mark``: an int beside a licensed
    string, or a list of int pairs beside a list of licensed strings."""
    where = f"{model.__name__}.{name} is marked {mark}"
    pairs = mark.role == "pairs"
    if node != ([LEAF] if pairs else LEAF):
        wanted = "a list of licensed strings" if pairs else "a licensed string"
        raise TypeError(f"{where}, but {model.__name__}.{mark.licensed} is not {wanted} of {model.__name__}")
    if not (_is_int_pairs(annotation) if pairs else annotation is int):
        raise TypeError(f"{where}, but it is {annotation!r}, not {'a list of int pairs' if pairs else 'an int'}")


def _is_int_pairs(annotation: Any) -> bool:
    """Whether ``annotation`` is ``list[list[int]]`` (through Annotated layers)."""
    if get_origin(annotation) is not list:
        return False
    pair, _ = unwrapped(get_args(annotation)[0], [])
    if get_origin(pair) is not list:
        return False
    value, _ = unwrapped(get_args(pair)[0], [])
    return value is int


def licensed_structs(value: Any, node: Any, path: str = "") -> Iterator[tuple[dict[str, Any], LicensedTree, str]]:
    """Every struct of a stored row (or of a value inside it, at struct path ``path``) that holds licensed
    strings, with its tree node and its path as :func:`offset_fields` keys it; None values hold none."""
    if value is None or node == LEAF:
        return
    if isinstance(node, list):
        for item in value:
            yield from licensed_structs(item, node[0], item_path(path))
        return
    yield value, node, path
    for name, child in node.items():
        yield from licensed_structs(value.get(name), child, field_path(path, name))


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
