"""The annotations of a BRAT ``.ann`` file as values, one type per kind of line, and the document holding them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from clinical_corpora.core.errors import SourceError


class TextBound(NamedTuple):
    """A typed span of the text; ``fragments`` holds (start, end) pairs (several: discontinuous)."""

    id: str
    type: str
    fragments: tuple[tuple[int, int], ...]
    text: str

    @property
    def start(self) -> int:
        """Start of the first fragment."""
        return self.fragments[0][0]

    @property
    def end(self) -> int:
        """End of the last fragment."""
        return self.fragments[-1][1]

    @classmethod
    def from_offsets(cls, id: str, type: str, fragments: tuple[tuple[int, int], ...], document_text: str) -> TextBound:
        """Build a text-bound whose text is taken from ``document_text`` the way BRAT writes it."""
        return cls(id, type, fragments, fragments_text(document_text, fragments))


class Event(NamedTuple):
    """An event: its type, the id of its trigger text-bound and (role, target id) arguments."""

    id: str
    type: str
    trigger: str
    arguments: tuple[tuple[str, str], ...]


class Attribute(NamedTuple):
    """An attribute ``name`` on annotation ``target``; ``value`` is None for a binary attribute."""

    id: str
    name: str
    target: str
    value: str | None


@dataclass(frozen=True, slots=True)
class Relation:
    """A typed relation with (role, target id) arguments: ``(("Arg1", "T1"), ("Arg2", "T2"))``."""

    id: str
    type: str
    arguments: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Note:
    """A ``#`` line: a note of ``type`` (usually AnnotatorNotes) on annotation ``target``."""

    id: str
    type: str
    target: str
    text: str


@dataclass(frozen=True, slots=True)
class Normalization:
    """An ``N`` line: annotation ``target`` linked to entry ``entry`` of ``resource`` (e.g. Wikipedia
    534366), ``text`` the entry's name as written after the second tab (may be empty)."""

    id: str
    type: str
    target: str
    resource: str
    entry: str
    text: str


@dataclass(frozen=True, slots=True)
class Equivalence:
    """A ``*`` line: text-bounds or events declared equivalent, e.g. coreferent mentions."""

    type: str
    members: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BratDocument:
    """Every annotation of one ``.ann`` file, each kind in file order."""

    textbounds: tuple[TextBound, ...] = ()
    events: tuple[Event, ...] = ()
    attributes: tuple[Attribute, ...] = ()
    relations: tuple[Relation, ...] = ()
    notes: tuple[Note, ...] = ()
    equivalences: tuple[Equivalence, ...] = ()
    normalizations: tuple[Normalization, ...] = ()
    lines: Mapping[str, int] = field(default_factory=dict, compare=False)
    """Annotation id → its 1-based line in the ``.ann`` (empty for a document not read from one)."""


OnBroken = Callable[[SourceError], None]
"""Receives each broken annotation's error (file, line, what was left out with it)."""


def raise_broken(error: SourceError) -> None:
    """The default :data:`OnBroken`: the first broken annotation fails the read."""
    raise error


def fragments_text(text: str, fragments: tuple[tuple[int, int], ...]) -> str:
    """The text of ``fragments`` the way BRAT writes it: joined by one space."""
    if len(fragments) == 1:
        return text[fragments[0][0] : fragments[0][1]]
    return " ".join(text[start:end] for start, end in fragments)
