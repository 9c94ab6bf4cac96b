"""The pages of ``clincorp view``: what one document's page shows, prepared for its template."""

from __future__ import annotations

from dataclasses import dataclass, field

from clinical_corpora.builders.contract.display import DocumentDisplay, Facts, Group, Mark, Passage
from clinical_corpora.builders.view.layout import Laid, lay_out, placeable

TYPE = "\x1f"
"""Between a mark's kind and label in the colour key of a mark in no group."""
GROUP_TITLES = {"event": "Events", "chain": "Chains", "pair": "Pairs", "query": "Queries"}


@dataclass
class MarkView:
    number: int
    kind: str
    key: str
    label: str
    colour: str
    details: str
    offsets: str
    where: str
    """The offsets, and the passage when the page has several."""
    snippet: str
    zero: bool
    passage: int
    """The index of its passage on the page."""

    @property
    def hover(self) -> str:
        """What hovering its label shows: the whole label (a concept's full name) and its details."""
        return f"{self.label} · {self.details}" if self.details else self.label


@dataclass(frozen=True)
class Arc:
    """A line over the text from one mark's label to another's: an event's trigger to an argument (labelled by
    its role), an anaphor to its antecedent, a chain's mention to the one before it."""

    source: int
    target: int
    label: str
    colour: str


@dataclass
class PassageView:
    anchor: str
    title: str
    facts: Facts
    sections: list[tuple[int, str]]
    laid: Laid | None
    numbers: list[int]
    unplaced: list[int]
    length: int
    arcs: list[Arc] = field(default_factory=list)

    @property
    def arc_data(self) -> list[list[str | int]]:
        """The arcs as the page script reads them (``data-arcs``)."""
        return [[arc.source, arc.target, arc.label, arc.colour] for arc in self.arcs]


@dataclass
class MemberView:
    key: str
    role: str
    number: int | None
    snippet: str
    where: str


@dataclass
class GroupView:
    kind: str
    key: str
    anchor: str
    label: str
    colour: str
    members: list[MemberView]
    facts: Facts
    text: str | None
    numbers: str = ""
    blank: str = ""
    text_parts: list[str] = field(default_factory=list)


@dataclass
class PageView:
    """Everything a document's page template shows, and the counts the index lists."""

    marks: list[MarkView]
    passages: list[PassageView]
    group_sections: list[tuple[str, str, list[GroupView]]]
    counts: dict[str, int]
    legend: list[tuple[str, str]]
    """(colour, name) of the mark colours that name no group of the page (a hierarchy, a type)."""
    colours: int
    """How many colour classes the page uses (see :mod:`palette`)."""


class Colours:
    """A colour class per group key (a chain, an event) or, for a mark in no group, per label (its type), in
    order of first use; never one colour for two keys."""

    def __init__(self) -> None:
        self._given: dict[str, str] = {}

    def of(self, key: str) -> str:
        return self._given.setdefault(key, f"c{len(self._given)}")

    def given(self) -> dict[str, str]:
        return dict(self._given)


def page_view(doc: DocumentDisplay) -> PageView:
    colours = Colours()
    marks: list[MarkView] = []
    numbers: dict[str, int] = {}
    passages = []
    for index, passage in enumerate(doc.passages):
        own = []
        for mark in passage.marks:
            view = _mark_view(len(marks), mark, (index, passage), colours, len(doc.passages) > 1)
            numbers.setdefault(mark.key, view.number)
            marks.append(view)
            own.append((view.number, mark))
        laid = lay_out(passage.text, own, passage.sections) if passage.text is not None else None
        passages.append(
            PassageView(
                anchor=f"p{index}",
                title=passage.title,
                facts=passage.facts,
                sections=list(enumerate(heading for _, heading in passage.sections)),
                laid=laid,
                numbers=[number for number, _ in own],
                unplaced=laid.unplaced if laid is not None else [],
                length=len(passage.text) if passage.text is not None else 0,
            )
        )
    mark_groups = set(colours.given())
    sections = []
    for kind, title in GROUP_TITLES.items():
        groups = [
            _group_view(f"g-{kind}{number}", group, numbers, marks, colours if group.key in mark_groups else None)
            for number, group in enumerate(g for g in doc.groups if g.kind == kind)
        ]
        if groups:
            sections.append((kind, title, groups))
    counts = {"marks": len(marks), **{title.lower(): len(groups) for _, title, groups in sections}}
    for arc in arcs(doc.groups, numbers, marks):
        passages[marks[arc.source].passage].arcs.append(arc)
    keys = {group.key for group in doc.groups}
    legend = [(colour, key.split(TYPE)[-1]) for key, colour in colours.given().items() if key not in keys]
    return PageView(marks, passages, sections, counts, legend, len(colours.given()))


def arcs(groups: list[Group], numbers: dict[str, int], marks: list[MarkView]) -> list[Arc]:
    """The arcs of the groups whose marks sit in one passage's text: an event's from its trigger (its first
    member) to each argument, a pair's from its first member to its second, a chain's from each mention to the
    one before it in the text, unless the page has pairs (the annotated links a chain closes over, drawn instead)."""
    drawn = []
    paired = any(group.kind == "pair" for group in groups)
    for group in groups:
        members = [(numbers[m.mark], m.role) for m in group.members if m.mark in numbers]
        if group.kind == "chain" and not paired:
            ordered = sorted(number for number, _ in members)
            links = [(later, earlier, "") for earlier, later in zip(ordered, ordered[1:], strict=False)]
        elif group.kind in ("event", "pair") and members:
            (head, _), rest = members[0], members[1:]
            links = [(head, number, role if group.kind == "event" else group.label) for number, role in rest]
        else:  # a query, or a chain of a page with pairs
            links = []
        for source, target, label in links:
            if source != target and marks[source].passage == marks[target].passage:
                drawn.append(Arc(source, target, label, marks[target].colour))
    return drawn


def _mark_view(number: int, mark: Mark, placed: tuple[int, Passage], colours: Colours, many_passages: bool) -> MarkView:
    index, passage = placed
    offsets = "; ".join(f"[{start}, {end})" for start, end in mark.fragments)
    snippet = mark.label  # a text-free release: the label stands for the text
    if passage.text is not None and placeable(mark, len(passage.text)):
        snippet = " … ".join(passage.text[start:end] for start, end in mark.fragments) or "(empty)"
    first = mark.fragments[0] if mark.fragments else (0, 0)
    return MarkView(
        number=number,
        kind=mark.kind,
        key=mark.key,
        label=mark.label,
        colour=colours.of(mark.group if mark.group is not None else f"{mark.kind}{TYPE}{mark.label}"),
        details="; ".join(f"{name}: {value}" for name, value in mark.facts),
        offsets=offsets,
        where=f"{offsets} in {passage.title}" if many_passages else offsets,
        snippet=snippet,
        zero=first[0] == first[1] and len(mark.fragments) == 1,
        passage=index,
    )


def _group_view(
    anchor: str, group: Group, numbers: dict[str, int], marks: list[MarkView], colours: Colours | None
) -> GroupView:
    """A group, coloured as its marks (or, when they are coloured otherwise, as its first mark: a pair)."""
    members = []
    for member in group.members:
        number = numbers.get(member.mark)
        mark = marks[number] if number is not None else None
        members.append(
            MemberView(
                key=member.mark,
                role=member.role,
                number=number,
                snippet=mark.snippet if mark is not None else "",
                where=mark.where if mark is not None else "",
            )
        )
    return GroupView(
        kind=group.kind,
        key=group.key,
        anchor=anchor,
        label=group.label,
        colour=colours.of(group.key) if colours is not None else _first_colour(members, marks),
        members=members,
        facts=group.facts,
        text=group.text,
        numbers=" ".join(f"m{m.number}" for m in members if m.number is not None),
        blank=group.blank,
        text_parts=group.text.split(group.blank) if group.text is not None and group.blank else [group.text or ""],
    )


def _first_colour(members: list[MemberView], marks: list[MarkView]) -> str:
    return next((marks[m.number].colour for m in members if m.number is not None), "c-none")
