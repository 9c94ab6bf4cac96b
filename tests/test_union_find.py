"""Union-find (core.union_find): groups of linked items, in a stable order."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from clinical_corpora.core.union_find import UnionFind


def test_links_join_groups_and_groups_keep_first_seen_order() -> None:
    groups = UnionFind(["m1", "m2", "m3", "m4", "m5"])
    groups.union("m4", "m2")
    groups.union("m5", "m4")
    assert groups.groups() == [["m1"], ["m2", "m4", "m5"], ["m3"]]
    assert groups.find("m5") == groups.find("m2") != groups.find("m1")


def test_items_join_when_first_named() -> None:
    groups: UnionFind[str] = UnionFind()
    groups.union("a", "b")
    groups.union("c", "c")
    groups.union("b", "a")  # already joined: nothing changes
    assert groups.groups() == [["a", "b"], ["c"]]
    assert groups.find("z") == "z"
    assert groups.groups()[-1] == ["z"]


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=60))
def test_groups_are_the_connected_components(links: list[tuple[int, int]]) -> None:
    groups = UnionFind(range(31))
    for first, second in links:
        groups.union(first, second)
    found = groups.groups()
    assert sorted(item for group in found for item in group) == list(range(31))
    component = {item: index for index, group in enumerate(found) for item in group}
    for first, second in links:
        assert component[first] == component[second]
    # no group could be split: each is connected by the links inside it
    for group in found:
        reached, frontier = {group[0]}, [group[0]]
        while frontier:
            item = frontier.pop()
            for a, b in links:
                for here, there in ((a, b), (b, a)):
                    if here == item and there not in reached:
                        reached.add(there)
                        frontier.append(there)
        assert reached == set(group)
