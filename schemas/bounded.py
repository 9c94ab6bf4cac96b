"""What a string field a text-free release keeps may hold: a pattern and a length, declared in the record model.

A text-free release replaces every :data:`LicensedText` by a recipe; every other string it keeps (a record's id,
a BRAT type, a concept id, a BMJ series) is declared here, in the record model that holds it, with the pattern
and the length its values follow: :data:`Identifier` (an id or label with no whitespace), :data:`Code` of a
fixed form (a UMLS CUI), or a source's :data:`SourceVocabulary` (a short name of one line). pydantic enforces
the bound on every record a build writes and ``clincorp validate`` checks every row of a full release; a
text-free release is checked column by column against the same bounds (:func:`bounded_tree`), so a note's
text cannot ride in an id. A string field that is neither licensed nor bounded (:func:`unbounded_strings`) is
refused when a text-free release is written.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, StringConstraints

from clinical_corpora.schemas.licensed import Licensed, unwrapped


@dataclass(frozen=True)
class Bound:
    """Marker in ``Annotated[str, ..., Bound(...)]``: the field's values match ``pattern`` (whole value) and hold
    at most ``max_length`` characters; ``what`` names them in errors."""

    pattern: str
    max_length: int
    what: str


def bounded(pattern: str, max_length: int, what: str) -> Any:
    """A string type bounded by ``pattern`` and ``max_length``, enforced by pydantic and read by
    :func:`bounded_tree` (one declaration for both)."""
    return Annotated[
        str,
        StringConstraints(pattern=f"^(?:{pattern})$", max_length=max_length),
        Bound(pattern, max_length, what),
    ]


Identifier = bounded(r"\S+", 128, "an id or name of up to 128 characters without whitespace")
"""A record's, mention's or annotation's id, a BRAT type or role, a database name: no whitespace."""

Label = bounded(r"[^\x00-\x1f\x7f]+", 64, "a type, role or database name: one line of up to 64 characters")
"""A BRAT or BigBio type, an argument's role, a database's name: a short name, spaces allowed."""

Cui = bounded(r"C\d{7}", 8, "a UMLS CUI (C and seven digits)")

SourceVocabulary = bounded(
    r"[^\x00-\x1f\x7f]+", 100, "a name of a source's own vocabulary: one line of up to 100 characters"
)
"""A name of a source's open vocabulary (a BMJ series, a UMLS semantic type), not licensed text."""

BoundTree = dict[str, Any]
"""Field name → a :class:`Bound`, a one-item list (a list of that node) or a nested tree."""


def bounded_tree(model: type[BaseModel]) -> BoundTree:
    """Where ``model`` holds bounded strings, with their bounds, as a tree of its field names."""
    tree = {}
    for name, field in model.model_fields.items():
        node = _node(field.annotation, list(field.metadata))
        if node is not None:
            tree[name] = node
    return tree


def _node(annotation: Any, metadata: list[Any]) -> Any:
    annotation, metadata = unwrapped(annotation, metadata)
    if get_origin(annotation) is list:
        inner = _node(get_args(annotation)[0], [])
        return None if inner is None else [inner]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return bounded_tree(annotation) or None
    return next((found for found in metadata if isinstance(found, Bound)), None)


def unbounded_strings(model: type[BaseModel]) -> list[str]:
    """The string fields of ``model`` (at any depth: ``events[].id``) that are neither licensed text nor bounded,
    and the fields of a type a release cannot hold as a column of its own: what a text-free release would keep
    unchecked. Closed label sets (Literal, Enum), numbers and booleans are bounded by their type."""
    return [problem for name, field in model.model_fields.items() for problem in _unbounded(field, name)]


def _unbounded(field: Any, path: str) -> list[str]:
    return _unbounded_type(field.annotation, list(field.metadata), path)


def _unbounded_type(annotation: Any, metadata: list[Any], path: str) -> list[str]:
    annotation, metadata = unwrapped(annotation, metadata)
    origin = get_origin(annotation)
    if origin is list:
        return _unbounded_type(get_args(annotation)[0], [], f"{path}[]")
    if origin is Literal or annotation in (int, float, bool):
        return []
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        fields = annotation.model_fields.items()
        return [problem for name, field in fields for problem in _unbounded(field, f"{path}.{name}")]
    if annotation is str:
        marked = any(isinstance(found, Bound | Licensed) for found in metadata)
        return [] if marked else [f"{path}: a string with no bound"]
    return [f"{path}: a field of type {annotation!r}"]
