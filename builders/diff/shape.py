"""What two releases' records have in common to compare: the shape both configs' Features share.

A field is compared when both releases hold it with the same type. Labels are compared by name (the ``f_name``
field beside each ClassLabel ``f``), so a label set that grew between versions does not renumber every record.
A licensed string on one side and its recipe on the other (a full and a text-free release) is text that cannot
be compared without the licensed sources: it is left out and named. Spans, chains and keyed items are
recognised by their structure (see :class:`Node`), so no corpus declares anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from datasets import ClassLabel, Features, List, Value

from clinical_corpora.schemas.features import LABEL_NAME_SUFFIX
from clinical_corpora.schemas.licensed import SEGMENT, SOURCE_DOCUMENTS

SPAN_EXTENT = ("start", "end", "offsets", "text", "fragments")
"""The fields of a span that say where it lies (its text follows from them): a change of any is a move."""
ITEM_ID = "id"
CHAIN_MEMBERS_SUFFIX = "ids"
CHAIN_MEMBERS = "members"


@dataclass(frozen=True)
class Node:
    """One compared value: a struct of named fields, a list of items, or a leaf (``label``: a label name).

    A struct is a *span* when it has ``start`` and ``end`` (or BigBio's ``offsets``); a list of structs is
    *keyed* when its items have a string ``id``, a list of *chains* when its items have a list of member ids
    (a field named ``…ids`` or ``members``)."""

    kind: Literal["struct", "list", "leaf"]
    fields: dict[str, Node] = field(default_factory=dict)
    item: Node | None = None
    label: bool = False

    @property
    def is_span(self) -> bool:
        return self.kind == "struct" and ({"start", "end"} <= set(self.fields) or "offsets" in self.fields)

    @property
    def members(self) -> str | None:
        """The field holding a chain's member ids, when this struct is a chain."""
        for name, child in self.fields.items():
            is_id_list = child.kind == "list" and child.item is not None and child.item.kind == "leaf"
            if is_id_list and (name.endswith(CHAIN_MEMBERS_SUFFIX) or name == CHAIN_MEMBERS):
                return name
        return None

    @property
    def keyed(self) -> bool:
        child = self.fields.get(ITEM_ID)
        return child is not None and child.kind == "leaf"


@dataclass
class Shape:
    """The compared fields of one config (top-level name → node), and what was left out, with why."""

    fields: dict[str, Node]
    uncompared: dict[str, str] = field(default_factory=dict)
    """path → why: ``text`` (licensed text on one side, its recipe on the other), ``added``, ``removed`` or
    ``retyped`` (the field's type changed between the releases)."""


RECIPE = List(SEGMENT)


def common_shape(old: Features, new: Features) -> Shape:
    """The shape of the fields both Features hold alike, in ``new``'s order."""
    shape = Shape({})
    for name in old:
        if name not in new and name != SOURCE_DOCUMENTS:
            shape.uncompared[name] = "removed"
    for name, feature in new.items():
        if name == SOURCE_DOCUMENTS and name not in old:
            continue  # a text-free release's list of documents, against a full release
        if name not in old:
            shape.uncompared[name] = "added"
            continue
        node = _common(old[name], feature, name, dict(new), shape.uncompared)
        if node is not None and not _is_label_id(name, dict(new)):
            shape.fields[name] = node
    return shape


def _common(old: Any, new: Any, path: str, siblings: dict[str, Any], uncompared: dict[str, str]) -> Node | None:
    """The node both features share at ``path`` (None when they differ, noted in ``uncompared``)."""
    if isinstance(old, dict) and isinstance(new, dict):
        fields = {}
        for name in old:
            if name not in new:
                uncompared[f"{path}.{name}"] = "removed"
        for name, child in new.items():
            if name not in old:
                uncompared[f"{path}.{name}"] = "added"
            elif not _is_label_id(name, new):
                node = _common(old[name], child, f"{path}.{name}", new, uncompared)
                if node is not None:
                    fields[name] = node
        return Node("struct", fields)
    if isinstance(old, List) and isinstance(new, List) and old != RECIPE and new != RECIPE:
        is_names = _is_label_name(path.rsplit(".", 1)[-1], siblings)
        item = _common(old.feature, new.feature, f"{path}[]", {}, uncompared)
        if item is not None and is_names:
            item = Node("leaf", label=True)
        return None if item is None else Node("list", item=item)
    if _leaf_type(old) is not None and _leaf_type(old) == _leaf_type(new):
        return Node("leaf", label=isinstance(new, ClassLabel) or _is_label_name(path.rsplit(".", 1)[-1], siblings))
    texts = {_leaf_type(old), _leaf_type(new)}
    uncompared[path] = "text" if texts == {"string", "recipe"} else "retyped"
    return None


def _leaf_type(feature: Any) -> str | None:
    if feature == RECIPE:
        return "recipe"
    if isinstance(feature, Value):
        return str(feature.dtype)
    if isinstance(feature, ClassLabel):
        return "label"
    return None


def _is_label_id(name: str, siblings: dict[str, Any]) -> bool:
    """A ClassLabel (or list of them) whose names stand beside it: compared by those names instead."""
    feature = siblings.get(name)
    is_label = isinstance(feature, ClassLabel) or (
        isinstance(feature, List) and isinstance(feature.feature, ClassLabel)
    )
    return is_label and name + LABEL_NAME_SUFFIX in siblings


def _is_label_name(name: str, siblings: dict[str, Any]) -> bool:
    """The field holding the names of a ClassLabel (or list of them) beside it."""
    return name.endswith(LABEL_NAME_SUFFIX) and _is_label_id(name.removesuffix(LABEL_NAME_SUFFIX), siblings)
