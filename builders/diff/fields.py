"""What changed inside one record, field by field, from the shape both releases share (``shape.Node``).

A change is (path, kind, item, detail): ``path`` names the field (``events.arguments``), ``item`` the thing
changed inside the record (``E1/T5``: an event's argument, by id; a span without id by its offsets).

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

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
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
        yield FieldChange(path, kind, item, f"{_short(old)} → {_short(new)}")
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
    if any(not _same(old[name], new[name], node.fields[name]) for name in extent):
        yield FieldChange(path, "moved", item, f"{_where(old)} → {_where(new)}")
    attributes = [
        name for name in node.fields if name not in extent and not _same(old[name], new[name], node.fields[name])
    ]
    if attributes:
        detail = "; ".join(
            f"{shown(name, node.fields[name])}: {_short(old[name])} → {_short(new[name])}" for name in attributes
        )
        yield FieldChange(path, "relabelled", item, detail)


def _list_changes(path: str, item: str, old: list, new: list, node: Node) -> Iterator[FieldChange]:
    if node.kind != "struct":
        yield from _values_changes(path, item, old, new, node)
    elif node.members is not None:
        yield from _chain_changes(path, item, old, new, node, node.members)
    else:
        pairs, removed, added = _matched(old, new, node)
        for key, value in removed:
            yield FieldChange(path, "removed", _join(item, key), _describe(value, node))
        for key, value in added:
            yield FieldChange(path, "added", _join(item, key), _describe(value, node))
        changed = False
        for key, before, after in pairs:
            for change in _changes(path, _join(item, key), before, after, node):
                changed = True
                yield change
        if not (changed or removed or added):
            yield FieldChange(path, "reordered", item)


def _values_changes(path: str, item: str, old: list, new: list, node: Node) -> Iterator[FieldChange]:
    before, after = Counter(map(_hashable, old)), Counter(map(_hashable, new))
    if before == after:
        yield FieldChange(path, "reordered", item)
        return
    gone, came = before - after, after - before
    detail = ", ".join([*(f"-{_short(v)}" for v in gone.elements()), *(f"+{_short(v)}" for v in came.elements())])
    yield FieldChange(path, "label changed" if node.label else "changed", item, detail)


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
    if not old or not new:
        kind, chains, keys = ("added", new, keys_new) if new else ("removed", old, keys_old)
        for key, chain in zip(keys, chains, strict=True):
            yield FieldChange(path, kind, _join(item, key), _members(chain, members))
    elif len(old) > 1 and len(new) == 1:
        yield FieldChange(path, "merged", _join(item, keys_new[0]), f"{' + '.join(keys_old)} → {keys_new[0]}")
    elif len(old) == 1 and len(new) > 1:
        yield FieldChange(path, "split", _join(item, keys_old[0]), f"{keys_old[0]} → {' + '.join(keys_new)}")
    elif len(old) > 1:
        detail = f"{' + '.join(keys_old)} → {' + '.join(keys_new)}"
        yield FieldChange(path, "members changed", _join(item, "+".join(keys_new)), detail)
    else:
        before, after = old[0], new[0]
        if set(before[members]) != set(after[members]):
            gone = sorted(set(before[members]) - set(after[members]))
            came = sorted(set(after[members]) - set(before[members]))
            detail = ", ".join([*(f"-{m}" for m in gone), *(f"+{m}" for m in came)])
            yield FieldChange(path, "members changed", _join(item, keys_new[0]), detail)
        others = {name: child for name, child in node.fields.items() if name != members}
        changed = [name for name, child in others.items() if not _same(before[name], after[name], child)]
        if changed:
            detail = "; ".join(
                f"{shown(name, others[name])}: {_short(before[name])} → {_short(after[name])}" for name in changed
            )
            yield FieldChange(path, "relabelled", _join(item, keys_new[0]), detail)
        elif not _same(before[members], after[members], node.fields[members]) and set(before[members]) == set(
            after[members]
        ):
            yield FieldChange(path, "reordered", _join(item, keys_new[0]))


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


def _describe(value: Any, node: Node) -> str:
    """A span added or removed: where it lies and its scalar attributes (``71-85 role=Type subtype=N/A``)."""
    if not node.is_span:
        return ""
    attributes = [
        f"{shown(name, child)}={_short(value[name])}"
        for name, child in node.fields.items()
        if child.kind == "leaf" and name not in SPAN_EXTENT and name != ITEM_ID and value[name] is not None
    ]
    return " ".join([_where(value), *attributes])


def _members(chain: dict, members: str) -> str:
    return ", ".join(map(str, chain[members] or []))


def _join(item: str, key: str) -> str:
    return f"{item}/{key}" if item else key


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    text = " ".join(text.split())
    return text if len(text) <= DETAIL_WIDTH else text[: DETAIL_WIDTH - 1] + "…"
