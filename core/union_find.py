"""Union-find (disjoint sets): the groups of items joined by links, such as identity chains."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

Item = TypeVar("Item", bound=Hashable)


class UnionFind(Generic[Item]):
    """Disjoint sets of items; an item joins as a singleton the first time it is named."""

    def __init__(self, items: Iterable[Item] = ()) -> None:
        self._parent: dict[Item, Item] = {item: item for item in items}

    def find(self, item: Item) -> Item:
        """The representative of ``item``'s group (paths are halved on the way)."""
        parent = self._parent
        parent.setdefault(item, item)
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    def union(self, first: Item, second: Item) -> None:
        """Join the groups of ``first`` and ``second``."""
        root = self.find(first)
        self._parent[root] = self.find(second)

    def groups(self) -> list[list[Item]]:
        """Every group, its members in the order they were first named; groups by their first member."""
        members: dict[Item, list[Item]] = {}
        for item in self._parent:
            members.setdefault(self.find(item), []).append(item)
        return list(members.values())
