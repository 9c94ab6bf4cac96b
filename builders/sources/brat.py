"""BRAT standoff annotations: reader and writer.

A BRAT document is a ``<doc>.txt`` holding the text and a ``<doc>.ann`` with one annotation per
line, tab separated (texts may contain anything but a newline, so no quoting rules apply)::

    T1<TAB>Tobacco 10 16<TAB>smokes                  text-bound (``10 16;20 25`` when discontinuous)
    E1<TAB>Tobacco:T1 Status:T2 Type2:T4             event: trigger first, then role:target pairs
    A1<TAB>StatusTimeVal T2 current                  attribute (``M`` is BRAT's legacy prefix;
                                                     binary attributes have no value)
    R1<TAB>Overlap Arg1:T2 Arg2:T5                   relation
    #1<TAB>AnnotatorNotes T3<TAB>chain=E12           note on any annotation
    *<TAB>Equiv T1 T4                                equivalence (no id of its own)

Offsets are 0-based character offsets into the ``.txt``, end exclusive. The text of a
discontinuous text-bound is its fragments joined by one space, as BRAT writes it. Every reference
must resolve inside the same file. Errors name the ``.ann`` file and line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from clinical_corpora.core.errors import SourceError

ANN_SUFFIX = ".ann"
TEXT_SUFFIX = ".txt"

_ID_PATTERN = re.compile(r"[TEAMR#]\w+")
_FRAGMENT_PATTERN = re.compile(r"\s*([0-9]+)\s+([0-9]+)\s*")
_CONTIGUOUS_TEXTBOUND_LINE = re.compile(r"(T\w+)\t(\S+) ([0-9]+) ([0-9]+)\t(.*)", re.DOTALL)
_ROLE_TARGET = re.compile(r"(\S+):([^\s:]+)")
_EVENT_BODY = re.compile(r"\s*\S+:[^\s:]+(?:\s+\S+:[^\s:]+)*\s*")
_TEXTBOUND_SHAPE = "'T<n>\\t<Type> <start> <end>[;<start> <end>...]\\t<text>'"
_EVENT_SHAPE = "'E<n>\\t<Type>:<trigger id> [<Role>:<id> ...]'"
_ATTRIBUTE_SHAPE = "'A<n>\\t<Name> <target id> [<value>]'"
_RELATION_SHAPE = "'R<n>\\t<Type> Arg1:<id> Arg2:<id>'"
_NOTE_SHAPE = "'#<n>\\t<Type> <target id>\\t<note text>'"
_EQUIVALENCE_SHAPE = "'*\\t<Type> <id> <id> [<id> ...]'"


@dataclass(frozen=True, slots=True)
class TextBound:
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
        return cls(id, type, fragments, _fragments_text(document_text, fragments))


@dataclass(frozen=True, slots=True)
class Event:
    """An event: its type, the id of its trigger text-bound and (role, target id) arguments."""

    id: str
    type: str
    trigger: str
    arguments: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Attribute:
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


def read_brat(ann_path: str | Path, text: str) -> BratDocument:
    """Read the ``.ann`` file at ``ann_path``, checking it against the document ``text``."""
    return parse_brat(read_utf8(ann_path), text, ann_path)


def parse_brat(ann: str, text: str, path: str | Path = "<string>") -> BratDocument:
    """Parse ``.ann`` content; ``path`` is only used to name the file in errors."""
    parser = _AnnParser(str(path), text)
    line_of, textbounds = parser.line_of, parser.textbounds
    for line_number, line in enumerate(ann.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        contiguous = _CONTIGUOUS_TEXTBOUND_LINE.fullmatch(line)
        if contiguous:  # fast path for a valid contiguous text-bound, the most common line
            identifier, type_, start, end, span_text = contiguous.groups()
            start_offset, end_offset = int(start), int(end)
            if (
                identifier not in line_of
                and text[start_offset:end_offset] == span_text
                and (start_offset < end_offset <= len(text))
            ):
                line_of[identifier] = line_number
                textbounds[identifier] = TextBound(identifier, type_, ((start_offset, end_offset),), span_text)
                continue
        if line and not line.isspace():
            parser.add(line, line_number)
    return parser.finish()


def write_brat(doc: BratDocument) -> str:
    """Serialise ``doc`` as ``.ann`` content, one kind after the other."""
    lines: list[str] = []
    for textbound in doc.textbounds:
        offsets = ";".join(f"{start} {end}" for start, end in textbound.fragments)
        lines.append(f"{textbound.id}\t{textbound.type} {offsets}\t{textbound.text}")
    for event in doc.events:
        pairs = [(event.type, event.trigger), *event.arguments]
        lines.append(f"{event.id}\t" + " ".join(f"{role}:{target}" for role, target in pairs))
    for attribute in doc.attributes:
        value = "" if attribute.value is None else f" {attribute.value}"
        lines.append(f"{attribute.id}\t{attribute.name} {attribute.target}{value}")
    for relation in doc.relations:
        arguments = " ".join(f"{role}:{target}" for role, target in relation.arguments)
        lines.append(f"{relation.id}\t{relation.type} {arguments}")
    for note in doc.notes:
        lines.append(f"{note.id}\t{note.type} {note.target}\t{note.text}")
    for equivalence in doc.equivalences:
        lines.append(f"*\t{equivalence.type} " + " ".join(equivalence.members))
    for line in lines:
        if "\n" in line or "\r" in line:
            raise ValueError(f"cannot write a BRAT line containing a line break: {line!r}")
    return "".join(f"{line}\n" for line in lines)


def brat_document_ids(root: str | Path) -> list[str]:
    """Sorted ids (relative path without suffix, ``/``-separated) of the documents under ``root``.

    Every ``.ann`` needs its ``.txt`` and every ``.txt`` its ``.ann``; otherwise a SourceError lists
    the unpaired files.
    """
    root = Path(root)
    if not root.is_dir():
        raise SourceError(root, "expected a folder of BRAT .txt/.ann pairs")
    stems: dict[str, set[str]] = {}
    for folder, _, files in os.walk(root):
        relative = Path(folder).relative_to(root).as_posix()
        prefix = "" if relative == "." else f"{relative}/"
        for name in files:
            stem, suffix = os.path.splitext(name)
            if suffix in (ANN_SUFFIX, TEXT_SUFFIX):
                stems.setdefault(prefix + stem, set()).add(suffix)
    unpaired = sorted(f"{doc_id}{suffix}" for doc_id, found in stems.items() if len(found) == 1 for suffix in found)
    if unpaired:
        raise SourceError(root, "each document needs both a .txt and a .ann; unpaired: " + ", ".join(unpaired))
    return sorted(stems)


def read_brat_document(root: str | Path, doc_id: str) -> tuple[str, BratDocument]:
    """Text and annotations of document ``doc_id`` (as listed by ``brat_document_ids``)."""
    base = os.path.join(root, doc_id)
    text = read_utf8(base + TEXT_SUFFIX)
    return text, read_brat(base + ANN_SUFFIX, text)


def iter_brat_folder(root: str | Path) -> Iterator[tuple[str, str, BratDocument]]:
    """Yield (document id, text, annotations) for every document under ``root``, sorted by id."""
    for doc_id in brat_document_ids(root):
        text, doc = read_brat_document(root, doc_id)
        yield doc_id, text, doc


def read_utf8(path: str | Path) -> str:
    """File content as UTF-8, line endings untouched (BRAT offsets count every character)."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except UnicodeDecodeError as error:
        raise SourceError(path, f"expected UTF-8 text: {error}") from error
    except OSError as error:
        raise SourceError(path, f"cannot read file: {error.strerror}") from error


def _fragments_text(text: str, fragments: tuple[tuple[int, int], ...]) -> str:
    if len(fragments) == 1:
        return text[fragments[0][0] : fragments[0][1]]
    return " ".join(text[start:end] for start, end in fragments)


def _shorten(line: str, limit: int = 120) -> str:
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _split_pair(field: str) -> tuple[str, str] | None:
    name, colon, target = field.rpartition(":")
    return (name, target) if colon and name and target else None


class _AnnParser:
    """Accumulates the annotations of one file, then resolves references in ``finish``."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.line_of: dict[str, int] = {}
        self.textbounds: dict[str, TextBound] = {}
        self.events: dict[str, Event] = {}
        self.attributes: list[Attribute] = []
        self.relations: dict[str, Relation] = {}
        self.notes: list[Note] = []
        self.equivalences: list[tuple[Equivalence, int]] = []
        self._parsers: dict[str, Callable[[str, str, int], None]] = {
            "T": self._textbound,
            "E": self._event,
            "A": self._attribute,
            "M": self._attribute,
            "R": self._relation,
            "#": self._note,
        }

    def error(self, message: str, line: int) -> SourceError:
        return SourceError(self.path, message, line=line)

    def add(self, line: str, line_number: int) -> None:
        identifier, tab, rest = line.partition("\t")
        if tab and identifier == "*":
            self._equivalence(rest, line_number)
            return
        if not tab or not _ID_PATTERN.fullmatch(identifier):
            raise self.error(
                "expected an annotation id starting with T, E, A, M, R or #, or *, followed by "
                f"a tab, got {_shorten(line)!r}",
                line_number,
            )
        if identifier in self.line_of:
            raise self.error(
                f"duplicate id {identifier} (first defined on line {self.line_of[identifier]})",
                line_number,
            )
        self.line_of[identifier] = line_number
        self._parsers[identifier[0]](identifier, rest, line_number)

    def _textbound(self, identifier: str, rest: str, line: int) -> None:
        head, tab, span_text = rest.partition("\t")
        type_, _, offsets = head.partition(" ")
        matches = [_FRAGMENT_PATTERN.fullmatch(piece) for piece in offsets.split(";")]
        if not tab or not type_ or not all(matches):
            raise self.error(
                f"malformed text-bound: expected {_TEXTBOUND_SHAPE}, got {_shorten(identifier + chr(9) + rest)!r}",
                line,
            )
        fragments = tuple((int(m[1]), int(m[2])) for m in matches if m)
        for start, end in fragments:
            if start >= end:
                raise self.error(f"{identifier} has fragment {start}-{end}: expected start < end", line)
            if end > len(self.text):
                raise self.error(
                    f"{identifier} offsets {start}-{end} run past the end of the text (length {len(self.text)})",
                    line,
                )
        expected = _fragments_text(self.text, fragments)
        if span_text != expected:
            raise self.error(
                f"{identifier} text {span_text!r} differs from the .txt at its offsets: {_shorten(expected)!r}",
                line,
            )
        self.textbounds[identifier] = TextBound(identifier, type_, fragments, span_text)

    def _event(self, identifier: str, rest: str, line: int) -> None:
        if not _EVENT_BODY.fullmatch(rest):
            raise self.error(f"malformed event: expected {_EVENT_SHAPE}, got {_shorten(rest)!r}", line)
        (type_, trigger), *arguments = _ROLE_TARGET.findall(rest)
        self.events[identifier] = Event(identifier, type_, trigger, tuple(arguments))

    def _attribute(self, identifier: str, rest: str, line: int) -> None:
        fields = rest.split()
        if len(fields) not in (2, 3):
            raise self.error(f"malformed attribute: expected {_ATTRIBUTE_SHAPE}, got {_shorten(rest)!r}", line)
        value = fields[2] if len(fields) == 3 else None
        self.attributes.append(Attribute(identifier, fields[0], fields[1], value))

    def _relation(self, identifier: str, rest: str, line: int) -> None:
        fields = rest.split()
        pairs = [_split_pair(field) for field in fields[1:]]
        if len(fields) != 3 or not all(pairs):
            raise self.error(f"malformed relation: expected {_RELATION_SHAPE}, got {_shorten(rest)!r}", line)
        self.relations[identifier] = Relation(identifier, fields[0], tuple(pair for pair in pairs if pair))

    def _note(self, identifier: str, rest: str, line: int) -> None:
        head, _, note_text = rest.partition("\t")
        fields = head.split()
        if len(fields) != 2:
            raise self.error(f"malformed note: expected {_NOTE_SHAPE}, got {_shorten(rest)!r}", line)
        self.notes.append(Note(identifier, fields[0], fields[1], note_text))

    def _equivalence(self, rest: str, line: int) -> None:
        fields = rest.split()
        if len(fields) < 3:
            raise self.error(
                f"malformed equivalence: expected {_EQUIVALENCE_SHAPE}, got {_shorten(rest)!r}",
                line,
            )
        self.equivalences.append((Equivalence(fields[0], tuple(fields[1:])), line))

    def _require(self, owner: str, target: str, allowed: Mapping[str, object], what: str, line: int = 0) -> None:
        if target not in allowed:
            raise self.error(
                f"{owner} refers to {target}, which is not {what} in this file",
                line or self.line_of[owner],
            )

    def finish(self) -> BratDocument:
        arguments_allowed = {**self.textbounds, **self.events}
        for event in self.events.values():
            self._require(event.id, event.trigger, self.textbounds, "a text-bound")
            trigger_type = self.textbounds[event.trigger].type
            if trigger_type != event.type:
                raise self.error(
                    f"{event.id} has type {event.type} but its trigger {event.trigger} "
                    f"has type {trigger_type}; expected the same type",
                    self.line_of[event.id],
                )
            for _, target in event.arguments:
                self._require(event.id, target, arguments_allowed, "a text-bound or event")
        for relation in self.relations.values():
            for _, target in relation.arguments:
                self._require(relation.id, target, arguments_allowed, "a text-bound or event")
        annotated = {**arguments_allowed, **self.relations}
        for attribute in self.attributes:
            self._require(attribute.id, attribute.target, annotated, "an annotation")
        for equivalence, line in self.equivalences:
            for member in equivalence.members:
                self._require("*", member, arguments_allowed, "a text-bound or event", line)
        every_id = dict.fromkeys(self.line_of)
        for note in self.notes:
            self._require(note.id, note.target, every_id, "an annotation")
        return BratDocument(
            textbounds=tuple(self.textbounds.values()),
            events=tuple(self.events.values()),
            attributes=tuple(self.attributes),
            relations=tuple(self.relations.values()),
            notes=tuple(self.notes),
            equivalences=tuple(equivalence for equivalence, _ in self.equivalences),
        )
