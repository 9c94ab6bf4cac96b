"""What ``clincorp view`` shows of one document, in terms every corpus shares.

A corpus turns its released rows into :class:`DocumentDisplay` values (its builder's ``displays`` hook);
the viewer renders any of them the same way: passages with their marked spans, groups of marks (events with
their arguments, chains, pairs, queries), sections and plain lists. Licensed text is None in a text-free
release: the display then holds offsets, labels and groups, and the viewer says the text is withheld.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

MarkKind = Literal["trigger", "argument", "textbound", "mention", "markable", "concept", "entity", "answer"]
GroupKind = Literal["event", "chain", "pair", "query"]
Facts = list[tuple[str, str]]
"""Name → value lines shown beside a mark, passage, group or document."""

RowReader = Callable[[str, "list[str] | None"], Iterator[tuple[str, dict[str, Any]]]]
"""``rows(config, columns)``: (split, row) of a config in release order, ClassLabels as names, licensed text None
in a text-free release; ``columns`` None for every column."""


@dataclass
class Mark:
    """One annotated span of a passage: one or more fragments (a discontinuous span), maybe of no width."""

    key: str
    """Unique within the document (a chain member is named by it)."""
    kind: MarkKind
    label: str
    fragments: list[tuple[int, int]]
    facts: Facts = field(default_factory=list)
    group: str | None = None
    """The group that colours it (a chain, an event, a query), by its key."""


@dataclass
class Passage:
    """A text with its marks: a note, one report of a patient, a case's passage."""

    key: str
    title: str
    text: str | None
    marks: list[Mark]
    facts: Facts = field(default_factory=list)
    sections: list[tuple[int, str]] = field(default_factory=list)
    """(offset, heading) where a section of the text starts."""


@dataclass
class Member:
    """A mark of a group, with its role in it (an event argument's role, an anaphor)."""

    mark: str
    role: str = ""


@dataclass
class Group:
    """Marks that belong together: an event (trigger and arguments), a chain, a pair, a cloze query."""

    key: str
    kind: GroupKind
    label: str
    members: list[Member]
    facts: Facts = field(default_factory=list)
    text: str | None = None
    """A query's text, when the group has one."""
    blank: str = ""
    """The part of ``text`` shown as a blank to fill (a cloze query's placeholder)."""


@dataclass
class Listing:
    """A titled list of plain lines (learning points, annotator notes, normalisations)."""

    title: str
    lines: list[str]


@dataclass
class DocumentDisplay:
    """One page of the viewer."""

    id: str
    split: str
    labels: list[str]
    """What the index filters by (event types, modalities, semantic classes)."""
    passages: list[Passage]
    groups: list[Group] = field(default_factory=list)
    listings: list[Listing] = field(default_factory=list)
    facts: Facts = field(default_factory=list)
    records: list[tuple[str, str]] = field(default_factory=list)
    """(config, record id) of every released record the page shows, so a violation naming one links here."""


def linked_display(
    display: DocumentDisplay, chains: list[list[str]], where: Callable[[int, Mark], str]
) -> DocumentDisplay:
    """``display`` with ``chains`` (of mark keys) as its groups, each mark labelled by the mark its chain links it
    to (the one before it, named by ``where(passage index, mark)``): two annotations of one document that link a
    mention alike then read as a match on the text, and one linked elsewhere as a label that differs."""
    marks = {mark.key: (index, mark) for index, passage in enumerate(display.passages) for mark in passage.marks}
    for _, unlinked in marks.values():
        unlinked.label = "no chain"
    groups = []
    for number, chain in enumerate(chains):
        ordered = sorted((m for m in chain if m in marks), key=lambda m: (marks[m][0], marks[m][1].fragments))
        for earlier, later in zip([None, *ordered], ordered, strict=False):
            marks[later][1].label = "new entity" if earlier is None else f"→ {where(*marks[earlier])}"
        groups.append(Group(f"chain{number}", "chain", f"{len(chain)} mention(s)", [Member(m) for m in chain]))
    display.groups = groups
    return display
