"""What changed inside one record, field by field, from the shape both releases share (``shape.Node``).

A change is (path, kind, item, detail, old, new): ``path`` names the field (``events.arguments``), ``item`` the
thing changed inside the record (``E1/T5``: an event's argument, by id; a span without id by its offsets),
``detail`` says what changed for people and ``old``/``new`` give the values compared, as JSON values. A span's
text is quoted when both releases hold it (full releases); a text-free release's span is named by its offsets.

- a **span** (``start``/``end`` or ``offsets``) is *moved* when where it lies changed (offsets, fragments, its
  text) and *relabelled* when anything else changed (its type, concept, subtype...);
- items of a list are matched by ``id`` when they have one; spans without one by position, then by their
  labels (a span that moved keeps them); other items by value, leftovers in order. Unmatched items are
  *added* or *removed*, matched ones compared in turn (``events.type``: *label changed*);
- **chains** (items holding member ids) are compared as groups of members: *merged* (several old chains in
  one new one), *split* (one old chain over several new ones), *members changed*, added or removed;
- a label or scalar field is *label changed* or *changed*; a list of scalars *changed* (with the values
  added and removed); a list whose items are the same in another order *reordered*.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from clinical_corpora.builders.diff.shape import ITEM_ID, SPAN_EXTENT, Node
from clinical_corpora.core.union_find import UnionFind
from clinical_corpora.schemas.features import LABEL_NAME_SUFFIX

DETAIL_WIDTH = 60


@dataclass(frozen=True, order=True)
class FieldChange:
    path: str
    kind: str
    item: str
    detail: str = ""
    old: Any = field(default=None, compare=False)
    """The value before (None for an item added), as JSON values: a span by where it lies and its text."""
    new: Any = field(default=None, compare=False)


def record_changes(old: dict[str, Any], new: dict[str, Any], fields: dict[str, Node]) -> list[FieldChange]:
    """Every change between two stored rows of one record, in field order."""
    return [
        change
        for name, node in fields.items()
        for change in _changes(shown(name, node), "", old[name], new[name], node)
    ]


def shown(name: str, node: Node) -> str:
    """A field as a change names it: a label by its ClassLabel field (``type``), not the names beside it."""
    return name.removesuffix(LABEL_NAME_SUFFIX) if node.label else name


def _changes(path: str, item: str, old: Any, new: Any, node: Node) -> Iterator[FieldChange]:
    if _same(old, new, node):
        return
    if old is None or new is None or node.kind == "leaf":
        kind = "label changed" if node.label else "changed"
        before, after = _projected(old, node), _projected(new, node)
        yield FieldChange(path, kind, item, f"{_short(before)} → {_short(after)}", before, after)
    elif node.kind == "struct":
        yield from _struct_changes(path, item, old, new, node)
    else:
        assert node.item is not None
        yield from _list_changes(path, item, old, new, node.item)


def _struct_changes(path: str, item: str, old: dict, new: dict, node: Node) -> Iterator[FieldChange]:
    if not node.is_span:
        for name, child in node.fields.items():
            yield from _changes(f"{path}.{shown(name, child)}", item, old[name], new[name], child)
        return
    extent = [name for name in node.fields if name in SPAN_EXTENT]
    before, after = _place(old, node), _place(new, node)
    if any(not _same(old[name], new[name], node.fields[name]) for name in extent):
        detail = f"{_where(old)}{_quoted(old, node)} → {_where(new)}{_quoted(new, node)}"
        yield FieldChange(path, "moved", item, detail, before, after)
    attributes = [
        name for name in node.fields if name not in extent and not _same(old[name], new[name], node.fields[name])
    ]
    if attributes:
        changed = "; ".join(
            f"{shown(name, node.fields[name])}: {_short(old[name])} → {_short(new[name])}" for name in attributes
        )
        detail = f"{_quoted(new, node).strip()} {changed}".strip()
        for name in attributes:
            before[shown(name, node.fields[name])] = _projected(old[name], node.fields[name])
            after[shown(name, node.fields[name])] = _projected(new[name], node.fields[name])
        yield FieldChange(path, "relabelled", item, detail, before, after)


def _list_changes(path: str, item: str, old: list, new: list, node: Node) -> Iterator[FieldChange]:
    if node.kind != "struct":
        yield from _values_changes(path, item, old, new, node)
    elif node.members is not None:
        yield from _chain_changes(path, item, old, new, node, node.members)
    else:
        pairs, removed, added = _matched(old, new, node)
        for key, value in removed:
            yield FieldChange(path, "removed", _join(item, key), _describe(value, node), _projected(value, node))
        for key, value in added:
            yield FieldChange(path, "added", _join(item, key), _describe(value, node), new=_projected(value, node))
        changed = False
        for key, before, after in pairs:
            for change in _changes(path, _join(item, key), before, after, node):
                changed = True
                yield change
        if not (changed or removed or added):
            yield _reordered(path, item, old, new, node)


def _reordered(path: str, item: str, old: list, new: list, node: Node) -> FieldChange:
    """A list whose items are the same in another order: both orders, as they are compared."""
    return FieldChange(
        path, "reordered", item, "", _projected(old, Node("list", item=node)), _projected(new, Node("list", item=node))
    )


def _values_changes(path: str, item: str, old: list, new: list, node: Node) -> Iterator[FieldChange]:
    before, after = Counter(map(_hashable, old)), Counter(map(_hashable, new))
    if before == after:
        yield _reordered(path, item, old, new, node)
        return
    gone, came = before - after, after - before
    detail = ", ".join([*(f"-{_short(v)}" for v in gone.elements()), *(f"+{_short(v)}" for v in came.elements())])
    values = Node("list", item=node)
    kind = "label changed" if node.label else "changed"
    yield FieldChange(path, kind, item, detail, _projected(old, values), _projected(new, values))


Keyed = tuple[str, Any]


def _matched(old: list, new: list, node: Node) -> tuple[list[tuple[str, Any, Any]], list[Keyed], list[Keyed]]:
    """(key, old, new) of matched items, then the removed and the added items with their keys."""
    if node.keyed and _unique_ids(old) and _unique_ids(new):
        before = {value[ITEM_ID]: value for value in old}
        after = {value[ITEM_ID]: value for value in new}
        pairs = [(str(key), before[key], after[key]) for key in after if key in before]
        removed = [(str(key), value) for key, value in before.items() if key not in after]
        return pairs, removed, [(str(key), value) for key, value in after.items() if key not in before]
    left, right = list(enumerate(old)), list(enumerate(new))
    pairs_at: list[tuple[int, int]] = []
    matchers = [_exact(node), *((_extent_of(node), _attributes_of(node)) if node.is_span else ())]
    for key_of in matchers:
        found = _pair_by(left, right, key_of)
        pairs_at += found
        used_left, used_right = {a for a, _ in found}, {b for _, b in found}
        left = [(i, v) for i, v in left if i not in used_left]
        right = [(i, v) for i, v in right if i not in used_right]
    if not node.is_span and len(left) == len(right):
        pairs_at += [(a, b) for (a, _), (b, _) in zip(left, right, strict=True)]
        left = right = []
    pairs = [(_key(new[b], b, node), old[a], new[b]) for a, b in sorted(pairs_at, key=lambda pair: pair[1])]
    return pairs, [(_key(v, i, node), v) for i, v in left], [(_key(v, i, node), v) for i, v in right]


def _pair_by(left: list[tuple[int, Any]], right: list[tuple[int, Any]], key_of: Any) -> list[tuple[int, int]]:
    """Pairs of positions whose items have the same key, in order (each item used once)."""
    waiting: dict[Any, list[int]] = {}
    for index, value in left:
        waiting.setdefault(key_of(value), []).append(index)
    pairs = []
    for index, value in right:
        queue = waiting.get(key_of(value))
        if queue:
            pairs.append((queue.pop(0), index))
    return pairs


def _exact(node: Node) -> Any:
    return lambda value: _hashable(_projected(value, node))


def _extent_of(node: Node) -> Any:
    names = [name for name in node.fields if name in SPAN_EXTENT and name != "text"]
    return lambda value: _hashable([value[name] for name in names])


def _attributes_of(node: Node) -> Any:
    names = [name for name in node.fields if name not in SPAN_EXTENT]
    return lambda value: _hashable([_projected(value[name], node.fields[name]) for name in names])


def _chain_changes(path: str, item: str, old: list, new: list, node: Node, members: str) -> Iterator[FieldChange]:
    """Chains as groups of members: old and new chains sharing a member are compared together."""
    groups: UnionFind[tuple[str, int]] = UnionFind()
    owners: dict[Any, tuple[str, int]] = {}
    for index, chain in enumerate(old):
        groups.find(("old", index))
        for member in chain[members] or []:
            owners.setdefault(member, ("old", index))
    for index, chain in enumerate(new):
        groups.find(("new", index))
        for member in chain[members] or []:
            if member in owners:
                groups.union(owners[member], ("new", index))
    for group in sorted(groups.groups(), key=lambda g: min((s != "new", i) for s, i in g)):
        before = [old[i] for side, i in group if side == "old"]
        after = [new[i] for side, i in group if side == "new"]
        yield from _chain_group(path, item, before, after, node, members)


def _chain_group(path: str, item: str, old: list, new: list, node: Node, members: str) -> Iterator[FieldChange]:
    keys_old = [_key(chain, None, node) for chain in old]
    keys_new = [_key(chain, None, node) for chain in new]
    chains_old = [_projected(chain, node) for chain in old]
    chains_new = [_projected(chain, node) for chain in new]
    if not old or not new:
        kind, chains, keys = ("added", new, keys_new) if new else ("removed", old, keys_old)
        for key, chain in zip(keys, chains, strict=True):
            values = (None, _projected(chain, node)) if new else (_projected(chain, node), None)
            yield FieldChange(path, kind, _join(item, key), _members(chain, members), *values)
        return
    if len(old) > 1 or len(new) > 1:
        kind = "merged" if len(new) == 1 else "split" if len(old) == 1 else "members changed"
        named = keys_old[0] if kind == "split" else "+".join(keys_new)
        detail = f"{' + '.join(keys_old)} → {' + '.join(keys_new)}"
        yield FieldChange(path, kind, _join(item, named), detail, chains_old, chains_new)
        return
    yield from _one_chain_changes(path, _join(item, keys_new[0]), old[0], new[0], node, members)


def _one_chain_changes(
    path: str, item: str, before: dict, after: dict, node: Node, members: str
) -> Iterator[FieldChange]:
    """One chain on each side sharing members: its members, then its other fields (or only their order)."""
    if set(before[members]) != set(after[members]):
        gone = sorted(set(before[members]) - set(after[members]))
        came = sorted(set(after[members]) - set(before[members]))
        detail = ", ".join([*(f"-{m}" for m in gone), *(f"+{m}" for m in came)])
        yield FieldChange(path, "members changed", item, detail, list(before[members]), list(after[members]))
    others = {name: child for name, child in node.fields.items() if name != members}
    changed = [name for name, child in others.items() if not _same(before[name], after[name], child)]
    if changed:
        detail = "; ".join(
            f"{shown(name, others[name])}: {_short(before[name])} → {_short(after[name])}" for name in changed
        )
        values = [
            {shown(name, others[name]): _projected(chain[name], others[name]) for name in changed}
            for chain in (before, after)
        ]
        yield FieldChange(path, "relabelled", item, detail, *values)
    elif not _same(before[members], after[members], node.fields[members]) and set(before[members]) == set(
        after[members]
    ):
        yield FieldChange(path, "reordered", item, "", list(before[members]), list(after[members]))


def _same(old: Any, new: Any, node: Node) -> bool:
    """Equal in what ``node`` compares (as their projections are; stored values equal whole are, and the first
    field that differs decides, without projecting them)."""
    if old == new:
        return True
    if old is None or new is None:
        return False
    if node.kind == "struct":
        return all(_same(old[name], new[name], child) for name, child in node.fields.items())
    if node.kind == "list" and node.item is not None:
        item = node.item
        return len(old) == len(new) and all(_same(a, b, item) for a, b in zip(old, new, strict=True))
    return _is_nan(old) and _is_nan(new)


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and value != value


def _projected(value: Any, node: Node) -> Any:
    """``value`` with only the fields ``node`` compares (NaN made comparable)."""
    if value is None:
        return None
    if node.kind == "struct":
        return {name: _projected(value[name], child) for name, child in node.fields.items()}
    if node.kind == "list" and node.item is not None:
        return [_projected(item, node.item) for item in value]
    return "NaN" if _is_nan(value) else value


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple((key, _hashable(item)) for key, item in value.items())
    if isinstance(value, list):
        return tuple(_hashable(item) for item in value)
    return value


def _unique_ids(items: list) -> bool:
    ids = [item[ITEM_ID] for item in items]
    return len(set(ids)) == len(ids)


def _key(value: dict, position: int | None, node: Node) -> str:
    """How an item is named in a change: its id, a span's offsets, else its position."""
    if node.keyed and value.get(ITEM_ID) is not None:
        return str(value[ITEM_ID])
    if node.is_span:
        return _where(value)
    return f"#{position}"


def _where(span: dict) -> str:
    if "start" in span and "end" in span:
        return f"{span['start']}-{span['end']}"
    return ",".join(f"{a}-{b}" for a, b in (span.get("offsets") or []))


def _place(span: dict, node: Node) -> dict[str, Any]:
    """Where a span lies, as a change gives it: its offsets, and its text when both releases hold it."""
    place = {name: span[name] for name in node.fields if name in SPAN_EXTENT and name != "text"}
    text = _text(span, node)
    if text is not None:
        place["text"] = span["text"]
    return place


def _text(span: dict, node: Node) -> str | None:
    """A span's text when both releases hold it (a text-free release holds its recipe instead: None)."""
    text = span.get("text") if "text" in node.fields else None
    if isinstance(text, list) and text and all(isinstance(part, str) for part in text):
        return " … ".join(text)  # BigBio's list of fragments' texts
    return text if isinstance(text, str) else None


def _quoted(span: dict, node: Node) -> str:
    text = _text(span, node)
    return "" if text is None else f" “{_short(text)}”"


def _describe(value: Any, node: Node) -> str:
    """A span added or removed: where it lies, its text and its scalar attributes (``71-85 “pain” role=Type``)."""
    if not node.is_span:
        return ""
    attributes = [
        f"{shown(name, child)}={_short(value[name])}"
        for name, child in node.fields.items()
        if child.kind == "leaf" and name not in SPAN_EXTENT and name != ITEM_ID and value[name] is not None
    ]
    return " ".join([_where(value) + _quoted(value, node), *attributes])


def _members(chain: dict, members: str) -> str:
    return ", ".join(map(str, chain[members] or []))


def _join(item: str, key: str) -> str:
    return f"{item}/{key}" if item else key


def _short(value: Any) -> str:
    """A value on one line, as JSON writes it (a string as it is), cut at ``DETAIL_WIDTH`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = re.sub(r"\s+", " ", text)  # on one line, a span's edges kept
    return text if len(text) <= DETAIL_WIDTH else text[: DETAIL_WIDTH - 1] + "…"
