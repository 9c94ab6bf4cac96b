"""Two (or more) annotators of one document side by side: each span and group either marked alike by all,
marked on the same text with different labels, or marked by some only, so a maintainer sees what an
agreement measure counted."""

from __future__ import annotations

from dataclasses import dataclass

from clinical_corpora.builders.contract.display import DocumentDisplay, Group, Mark

Fragments = tuple[tuple[int, int], ...]
Located = tuple[str, Fragments]
"""A mark's passage (by key) and fragments."""


@dataclass
class OverlayRow:
    """One span or group and how each annotator labelled it (empty: not marked)."""

    what: str
    where: str
    snippet: str
    labels: list[str]
    verdict: str
    """``match``, ``label differs`` or ``only <annotators>``."""


@dataclass
class Overlay:
    annotators: list[str]
    rows: list[OverlayRow]

    def tally(self) -> dict[str, int]:
        counted: dict[str, int] = {}
        for row in self.rows:
            counted[row.verdict] = counted.get(row.verdict, 0) + 1
        return counted

    @property
    def disagreements(self) -> int:
        return sum(row.verdict != "match" for row in self.rows)


def overlay(doc: DocumentDisplay, annotators: dict[str, DocumentDisplay]) -> Overlay:
    """Compare the annotators' displays of ``doc``, passage by passage (spans by their fragments), then their
    groups (by kind and their members' fragments)."""
    names = sorted(annotators)
    rows: list[OverlayRow] = []
    for passage in doc.passages:
        text = passage.text
        spans: dict[Fragments, list[str]] = {}
        for number, name in enumerate(names):
            for mark in _passage_marks(annotators[name], passage.key):
                labels = spans.setdefault(tuple(mark.fragments), [""] * len(names))
                labels[number] = _joined(labels[number], mark.label)
        for fragments, labels in sorted(spans.items()):
            rows.append(
                OverlayRow(
                    "span",
                    _where(fragments, passage.title, len(doc.passages)),
                    _snippet(text, fragments),
                    labels,
                    _verdict(names, labels),
                )
            )
    groups: dict[tuple[str, tuple[Located, ...]], list[str]] = {}
    for number, name in enumerate(names):
        located = {
            mark.key: (passage.key, tuple(mark.fragments))
            for passage in annotators[name].passages
            for mark in passage.marks
        }
        for group in annotators[name].groups:
            signature = (group.kind, _members(group, located) if group.kind != "query" else ((group.key, ()),))
            labels = groups.setdefault(signature, [""] * len(names))
            labels[number] = _joined(labels[number], group.label)
    titles = {passage.key: passage.title for passage in doc.passages}
    for (kind, members), labels in sorted(groups.items()):
        where = " → ".join(_where(fragments, titles.get(key, key), len(titles)) for key, fragments in members)
        rows.append(OverlayRow(kind, where, "", labels, _verdict(names, labels)))
    return Overlay(names, rows)


def _passage_marks(doc: DocumentDisplay, key: str) -> list[Mark]:
    return [mark for passage in doc.passages if passage.key == key for mark in passage.marks]


def _members(group: Group, located: dict[str, Located]) -> tuple[Located, ...]:
    """Where a group's marks are (a chain's sorted): what makes two annotators' groups one (a query: its id)."""
    members = tuple(located.get(member.mark, ("", ())) for member in group.members)
    return tuple(sorted(members)) if group.kind == "chain" else members


def _joined(before: str, label: str) -> str:
    return f"{before} + {label}" if before else label


def _verdict(names: list[str], labels: list[str]) -> str:
    present = [name for name, label in zip(names, labels, strict=True) if label]
    if len(present) < len(names):
        return "only " + ", ".join(present)
    return "match" if len(set(labels)) == 1 else "label differs"


def _where(fragments: Fragments, title: str, passages: int) -> str:
    offsets = "; ".join(f"[{start}, {end})" for start, end in fragments)
    return f"{offsets} in {title}" if passages > 1 else offsets


def _snippet(text: str | None, fragments: Fragments) -> str:
    if text is None or not all(0 <= start <= end <= len(text) for start, end in fragments):
        return ""
    return " … ".join(text[start:end] for start, end in fragments)
