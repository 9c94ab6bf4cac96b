"""BRAT standoff annotations: reader and writer.

A BRAT document is a ``<doc>.txt`` holding the text and a ``<doc>.ann`` with one annotation per
line, tab separated (texts may contain anything but a newline, so no quoting rules apply)::

    T1<TAB>Tobacco 10 16<TAB>smokes                  text-bound (``10 16;20 25`` when discontinuous)
    E1<TAB>Tobacco:T1 Status:T2 Type2:T4             event: trigger first, then role:target pairs
    A1<TAB>StatusTimeVal T2 current                  attribute (``M`` is BRAT's legacy prefix;
                                                     binary attributes have no value)
    R1<TAB>Overlap Arg1:T2 Arg2:T5                   relation
    N1<TAB>Reference T1 Wikipedia:534366<TAB>Barack Obama   normalisation: a text-bound (or event,
                                                     relation) linked to entry 534366 of
                                                     resource Wikipedia; the text is optional
    #1<TAB>AnnotatorNotes T3<TAB>chain=E12           note on any annotation
    *<TAB>Equiv T1 T4                                equivalence (no id of its own)

Offsets are 0-based character offsets into the ``.txt``, end exclusive; a fragment may be empty
(``232 232``: brat and the n2c2 scorer accept it, only start > end is an error). The text of a
discontinuous text-bound is its fragments joined by one space, as BRAT writes it. The BioNLP
Shared Task 2013 form of a normalisation (``Reference Annotation:T1 Referent:GO:0005634``), which
brat also reads, is read as ``Reference T1 GO:0005634``. Every reference must resolve inside the
same file. Errors name the ``.ann`` file and line.

Broken annotations: by default the first one (in line order) raises a SourceError. Given
``on_broken``, :func:`parse_brat` hands each one to it and leaves it out of the document together
with what depends on it, so one bad line costs that annotation, not the document:

- a broken text-bound takes with it the events it triggers, the argument slots that use it (the
  event stays, without that argument), relations on it, and attributes, normalisations and notes
  on any of these; equivalences lose it as a member (and go when fewer than two members remain);
- a broken event (trigger missing or of another type) goes the same way; an event argument that
  names a missing id is left out on its own, the event stays;
- a broken relation, attribute, normalisation, note or equivalence goes alone (with the notes,
  attributes and normalisations on it).

Each error names the broken line and ends with the annotations depending on it (``; depending on
it: E2 argument Amount:T7 (line 16), A1 (line 5)``), which are left out with it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from clinical_corpora.builders.sources.discovery import BRAT_CONFIGURATION, Document, find_documents
from clinical_corpora.core.errors import SourceError, excerpt

ANN_SUFFIX = ".ann"
TEXT_SUFFIX = ".txt"

_ID_PATTERN = re.compile(r"[TEAMNR#]\w+")
_FRAGMENT_PATTERN = re.compile(r"\s*([0-9]+)\s+([0-9]+)\s*")
_CONTIGUOUS_TEXTBOUND_LINE = re.compile(r"(T\w+)\t(\S+) ([0-9]+) ([0-9]+)\t(.*)", re.DOTALL)
_ROLE_TARGET = re.compile(r"(\S+):([^\s:]+)")
_SIMPLE_EVENT_LINE = re.compile(r"(E\w+)\t(\S+:[^\s:]+(?: \S+:[^\s:]+)*)")
_SIMPLE_ATTRIBUTE_LINE = re.compile(r"(A\w+)\t(\S+) (\S+)(?: (\S+))?")
_EVENT_BODY = re.compile(r"\s*\S+:[^\s:]+(?:\s+\S+:[^\s:]+)*\s*")
_TEXTBOUND_SHAPE = "'T<n>\\t<Type> <start> <end>[;<start> <end>...]\\t<text>'"
_EVENT_SHAPE = "'E<n>\\t<Type>:<trigger id> [<Role>:<id> ...]'"
_ATTRIBUTE_SHAPE = "'A<n>\\t<Name> <target id> [<value>]'"
_RELATION_SHAPE = "'R<n>\\t<Type> Arg1:<id> Arg2:<id>'"
_NOTE_SHAPE = "'#<n>\\t<Type> <target id>\\t<note text>'"
_NORMALIZATION_SHAPE = "'N<n>\\t<Type> <target id> <resource>:<entry>[\\t<text>]'"
_NORMALIZATION_BODY = re.compile(r"(\S+) (\S+) ([^\s:]+):(\S+)\s*")
_BIONLP_ST_2013_NORMALIZATION = (
    (re.compile(r"(Reference) Annotation:(\S+) Referent:(\S+)"), r"\1 \2 \3"),
    (re.compile(r"(Reference) Referent:(\S+) Annotation:(\S+)"), r"\1 \3 \2"),
)
_EQUIVALENCE_SHAPE = "'*\\t<Type> <id> <id> [<id> ...]'"


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
        return cls(id, type, fragments, _fragments_text(document_text, fragments))


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


def read_brat(ann_path: str | Path, text: str, *, on_broken: OnBroken | None = None) -> BratDocument:
    """Read the ``.ann`` file at ``ann_path``, checking it against the document ``text``."""
    return parse_brat(read_utf8(ann_path), text, ann_path, on_broken=on_broken)


def parse_brat(
    ann: str, text: str, path: str | Path = "<string>", *, on_broken: OnBroken | None = None
) -> BratDocument:
    """Parse ``.ann`` content; ``path`` is only used to name the file in errors.

    Without ``on_broken`` the first broken annotation raises its SourceError; with it, each one is
    passed to ``on_broken`` and left out of the document with what depends on it (module docstring).
    """
    parser = _AnnParser(str(path), text)
    line_of, textbounds, events, attributes = parser.line_of, parser.textbounds, parser.events, parser.attributes
    lines = ann.split("\n")
    if "\r" in ann:
        lines = [line.removesuffix("\r") for line in lines]
    for line_number, line in enumerate(lines, start=1):
        # fast paths for the most common lines, when valid; anything else goes through ``add``
        kind = line[:1]
        if kind == "T" and (contiguous := _CONTIGUOUS_TEXTBOUND_LINE.fullmatch(line)):
            identifier, type_, start, end, span_text = contiguous.groups()
            start_offset, end_offset = int(start), int(end)
            if (
                identifier not in line_of
                and text[start_offset:end_offset] == span_text
                and (start_offset <= end_offset <= len(text))
            ):
                line_of[identifier] = line_number
                textbounds[identifier] = TextBound(identifier, type_, ((start_offset, end_offset),), span_text)
                continue
        elif kind == "E" and (simple_event := _SIMPLE_EVENT_LINE.fullmatch(line)):
            identifier = simple_event[1]
            if identifier not in line_of:
                line_of[identifier] = line_number
                (type_, _, trigger), *pairs = [field.rpartition(":") for field in simple_event[2].split(" ")]
                events[identifier] = Event(
                    identifier, type_, trigger, tuple([(role, target) for role, _, target in pairs])
                )
                continue
        elif kind == "A" and (simple_attribute := _SIMPLE_ATTRIBUTE_LINE.fullmatch(line)):
            identifier = simple_attribute[1]
            if identifier not in line_of:
                line_of[identifier] = line_number
                attributes.append(Attribute(identifier, simple_attribute[2], simple_attribute[3], simple_attribute[4]))
                continue
        if line and not line.isspace():
            parser.add(line, line_number)
    return parser.finish(on_broken or raise_broken)


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
    for normalization in doc.normalizations:
        reference = f"{normalization.resource}:{normalization.entry}"
        lines.append(
            f"{normalization.id}\t{normalization.type} {normalization.target} {reference}\t{normalization.text}"
        )
    for note in doc.notes:
        lines.append(f"{note.id}\t{note.type} {note.target}\t{note.text}")
    for equivalence in doc.equivalences:
        lines.append(f"*\t{equivalence.type} " + " ".join(equivalence.members))
    for line in lines:
        if "\n" in line or "\r" in line:
            raise ValueError(f"cannot write a BRAT line containing a line break: {line!r}")
    return "".join(f"{line}\n" for line in lines)


class Pruning:
    """Annotations of a read document to leave out, each for its reason; :meth:`apply` leaves them
    out with what depends on them (the rules of the module docstring) and reports each reason to
    ``on_broken``, naming its line."""

    def __init__(self, path: str | Path, doc: BratDocument) -> None:
        self.path = str(path)
        self.doc = doc
        self._parser: _AnnParser | None = None  # made on the first leave_out: most documents need none

    def _pruned(self) -> _AnnParser:
        if self._parser is None:
            self._parser = _AnnParser.from_document(self.path, self.doc)
        return self._parser

    def leave_out(self, identifier: str, reason: str) -> None:
        """Leave out annotation ``identifier`` (with its dependents) because of ``reason``."""
        self._pruned().remove(identifier, reason)

    def leave_out_argument(self, event_id: str, role: str, target: str, reason: str) -> None:
        """Leave out the argument ``role:target`` of event ``event_id`` because of ``reason``."""
        self._pruned().remove_argument(event_id, role, target, reason)

    def apply(self, on_broken: OnBroken) -> BratDocument:
        """The document without what was left out; ``doc`` itself when nothing was."""
        return self.doc if self._parser is None else self._parser.finish(on_broken)


BRAT_FILES = "BRAT .txt/.ann files"


def brat_documents(root: str | Path, *, quiet: bool = False) -> list[Document]:
    """The documents under ``root`` (:mod:`builders.sources.discovery`: suffixes in any case, linked folders
    followed, brat's configuration files and hidden files counted in a warning), sorted by id; each
    may lack its ``.txt`` or ``.ann`` (see :func:`brat_document_ids` for a listing that refuses that)."""
    return find_documents(
        Path(root), (ANN_SUFFIX, TEXT_SUFFIX), what=BRAT_FILES, ignored=BRAT_CONFIGURATION, quiet=quiet
    )


def brat_document_ids(root: str | Path, *, text_without_ann: bool = False) -> list[str]:
    """Sorted ids (relative path without suffix, ``/``-separated) of the documents under ``root``.

    Every ``.ann`` needs its ``.txt`` and every ``.txt`` its ``.ann``; otherwise a SourceError lists
    the unpaired files. With ``text_without_ann`` a ``.txt`` alone is a document with no
    annotations, as brat shows it (:func:`read_brat_document` reads it so).
    """
    documents = brat_documents(root)
    unpaired = sorted(
        path.relative_to(root).as_posix()
        for document in documents
        if len(document.paths) == 1 and not (text_without_ann and TEXT_SUFFIX in document.paths)
        for path in document.files.values()
    )
    if unpaired:
        raise SourceError(root, "each document needs both a .txt and a .ann; unpaired: " + ", ".join(unpaired))
    return [document.id for document in documents]


def read_brat_document(
    document: Document, *, text_without_ann: bool = False, on_broken: OnBroken | None = None
) -> tuple[str, BratDocument]:
    """Text and annotations of a document (as listed by :func:`brat_documents`). A missing companion is a
    SourceError naming the file found, except a ``.txt`` alone with ``text_without_ann``: no annotations."""
    text = read_utf8(document.paths.get(TEXT_SUFFIX) or document.require(TEXT_SUFFIX))
    ann = document.paths.get(ANN_SUFFIX)
    if ann is None and text_without_ann:
        return text, BratDocument()
    return text, read_brat(ann or document.require(ANN_SUFFIX), text, on_broken=on_broken)


def iter_brat_folder(root: str | Path) -> Iterator[tuple[str, str, BratDocument]]:
    """Yield (document id, text, annotations) for every document under ``root``, sorted by id; a document
    lacking its ``.txt`` or ``.ann`` is a SourceError naming it."""
    for document in brat_documents(root):
        text, doc = read_brat_document(document)
        yield document.id, text, doc


def read_utf8(path: str | Path) -> str:
    """File content as UTF-8, line endings untouched (BRAT offsets count every character)."""
    try:
        with open(path, "rb", buffering=0) as handle:  # unbuffered: one read of the whole file, ~2 µs less
            return handle.read().decode("utf-8")
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


_Where = int | str
"""Where a problem is: its line, or an annotation id when the document was not read from a file."""


def _problem_order(problem: tuple[_Where, str]) -> tuple[int, str]:
    where = problem[0]
    return (where, "") if isinstance(where, int) else (1 << 62, where)


_PARSER_OF_KIND = {
    "T": "_textbound",
    "E": "_event",
    "A": "_attribute",
    "M": "_attribute",
    "N": "_normalization",
    "R": "_relation",
    "#": "_note",
}
"""The ``_AnnParser`` method reading each kind of line (by its id's first character)."""


class _AnnParser:
    """Accumulates the annotations of one file, then resolves references in ``finish``.

    A line that cannot be read is a problem kept for ``finish``; its id (when it has one) is
    *broken*, so that what refers to it is left out with it rather than reported again.
    """

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.line_of: dict[str, int] = {}
        self.textbounds: dict[str, TextBound] = {}
        self.events: dict[str, Event] = {}
        self.attributes: list[Attribute] = []
        self.relations: dict[str, Relation] = {}
        self.normalizations: list[Normalization] = []
        self.notes: list[Note] = []
        self.equivalences: list[tuple[Equivalence, int]] = []
        self.problems: list[tuple[_Where, str]] = []
        self.broken: dict[str, _Where] = {}  # id → where the problem that left it out is
        self.left_out: dict[_Where, list[str]] = {}  # problem → what was left out with it

    def error(self, message: str, line: int) -> SourceError:
        return SourceError(self.path, message, line=line)

    def where(self, identifier: str) -> _Where:
        """The line of ``identifier``, or the id itself for a document not read from a file."""
        return self.line_of.get(identifier) or identifier

    @classmethod
    def from_document(cls, path: str, doc: BratDocument) -> _AnnParser:
        """A parser holding ``doc``'s annotations, to leave some out with ``finish``."""
        parser = cls(path, "")
        parser.line_of = dict(doc.lines)
        parser.textbounds = {textbound.id: textbound for textbound in doc.textbounds}
        parser.events = {event.id: event for event in doc.events}
        parser.attributes = list(doc.attributes)
        parser.relations = {relation.id: relation for relation in doc.relations}
        parser.normalizations = list(doc.normalizations)
        parser.notes = list(doc.notes)
        parser.equivalences = [(equivalence, 0) for equivalence in doc.equivalences]
        for identifier in parser.textbounds.keys() | parser.events.keys() | parser.relations.keys():
            parser.line_of.setdefault(identifier, 0)
        ids = [a.id for a in parser.attributes] + [n.id for n in parser.normalizations] + [n.id for n in parser.notes]
        for identifier in ids:
            parser.line_of.setdefault(identifier, 0)
        return parser

    def remove(self, identifier: str, message: str) -> None:
        """Leave out annotation ``identifier`` (and what depends on it) for the reason ``message``."""
        where = self.where(identifier)
        self.problems.append((where, message))
        self.broken[identifier] = where
        self.textbounds.pop(identifier, None)
        self.events.pop(identifier, None)
        self.relations.pop(identifier, None)
        self.attributes = [a for a in self.attributes if a.id != identifier]
        self.normalizations = [n for n in self.normalizations if n.id != identifier]
        self.notes = [n for n in self.notes if n.id != identifier]

    def remove_argument(self, event_id: str, role: str, target: str, message: str) -> None:
        """Leave out one argument of event ``event_id`` for the reason ``message``."""
        self.problems.append((self.where(event_id), message))
        event = self.events[event_id]
        arguments = tuple(pair for pair in event.arguments if pair != (role, target))
        self.events[event_id] = Event(event.id, event.type, event.trigger, arguments)

    def add(self, line: str, line_number: int) -> None:
        identifier, tab, rest = line.partition("\t")
        if tab and identifier == "*":
            self._guarded(self._equivalence, rest, line_number)
            return
        if not tab or not _ID_PATTERN.fullmatch(identifier):
            self.problems.append(
                (
                    line_number,
                    "expected an annotation id starting with T, E, A, M, N, R or #, or *, followed by "
                    f"a tab, got {excerpt(line)}",
                )
            )
            return
        if identifier in self.line_of:
            self.problems.append(
                (line_number, f"duplicate id {identifier} (first defined on line {self.line_of[identifier]})")
            )
            return
        self.line_of[identifier] = line_number
        parse = getattr(self, _PARSER_OF_KIND[identifier[0]])  # looked up per line: no bound-method cycle to collect
        if not self._guarded(functools.partial(parse, identifier), rest, line_number):
            self.broken[identifier] = line_number

    def _guarded(self, parse: Callable[[str, int], None], rest: str, line: int) -> bool:
        try:
            parse(rest, line)
        except SourceError as error:
            self.problems.append((line, error.message))
            return False
        return True

    def _textbound(self, identifier: str, rest: str, line: int) -> None:
        head, tab, span_text = rest.partition("\t")
        type_, _, offsets = head.partition(" ")
        matches = [_FRAGMENT_PATTERN.fullmatch(piece) for piece in offsets.split(";")]
        if not tab or not type_ or not all(matches):
            raise self.error(
                f"malformed text-bound: expected {_TEXTBOUND_SHAPE}, got {excerpt(identifier + chr(9) + rest)}",
                line,
            )
        fragments = tuple((int(m[1]), int(m[2])) for m in matches if m)
        for start, end in fragments:
            if start > end:
                raise self.error(f"{identifier} has fragment {start}-{end}: expected start <= end", line)
            if end > len(self.text):
                raise self.error(
                    f"{identifier} offsets {start}-{end} run past the end of the text (length {len(self.text)})",
                    line,
                )
        expected = _fragments_text(self.text, fragments)
        if span_text != expected:
            raise self.error(
                f"{identifier} text {excerpt(span_text)} differs from the .txt at its offsets: {excerpt(expected)}",
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

    def _normalization(self, identifier: str, rest: str, line: int) -> None:
        head, _, entry_text = rest.partition("\t")
        for pattern, replacement in _BIONLP_ST_2013_NORMALIZATION:
            head = pattern.sub(replacement, head, count=1)
        match = _NORMALIZATION_BODY.fullmatch(head)
        if match is None:
            raise self.error(f"malformed normalisation: expected {_NORMALIZATION_SHAPE}, got {excerpt(rest)}", line)
        type_, target, resource, entry = match.groups()
        self.normalizations.append(Normalization(identifier, type_, target, resource, entry, entry_text))

    def _note(self, identifier: str, rest: str, line: int) -> None:
        head, _, note_text = rest.partition("\t")
        fields = head.split()
        if len(fields) != 2:
            raise self.error(f"malformed note: expected {_NOTE_SHAPE}, got {excerpt(rest)}", line)
        self.notes.append(Note(identifier, fields[0], fields[1], note_text))

    def _equivalence(self, rest: str, line: int) -> None:
        fields = rest.split()
        if len(fields) < 3:
            raise self.error(
                f"malformed equivalence: expected {_EQUIVALENCE_SHAPE}, got {_shorten(rest)!r}",
                line,
            )
        self.equivalences.append((Equivalence(fields[0], tuple(fields[1:])), line))

    def _resolves(self, owner: str, target: str, allowed: Mapping[str, object], what: str, line: _Where = 0) -> bool:
        """Whether ``target`` is in ``allowed``; if not, ``owner`` (shown as ``owner``, at ``line`` or
        its own line) is left out: with the broken annotation ``target`` came from, or as a problem
        of its own."""
        if target in allowed:
            return True
        line = line or self.where(owner)
        if target in self.broken:
            shown = f"{owner} (line {line})" if isinstance(line, int) else owner
            self.left_out.setdefault(self.broken[target], []).append(shown)
        else:
            self.problems.append((line, f"{owner} refers to {target}, which is not {what} in this file"))
        return False

    def _leave_out(self, identifier: str, line: _Where) -> None:
        """Mark ``identifier`` as left out with the problem its owner line reported."""
        self.broken.setdefault(identifier, line)

    def _kept_events(self) -> dict[str, Event]:
        events: dict[str, Event] = {}
        for event in self.events.values():
            line = self.where(event.id)
            if not self._resolves(event.id, event.trigger, self.textbounds, "a text-bound"):
                self._leave_out(event.id, self.broken.get(event.trigger, line))
                continue
            trigger_type = self.textbounds[event.trigger].type
            if trigger_type != event.type:
                self.problems.append(
                    (
                        line,
                        f"{event.id} has type {event.type} but its trigger {event.trigger} "
                        f"has type {trigger_type}; expected the same type",
                    )
                )
                self._leave_out(event.id, line)
                continue
            events[event.id] = event
        arguments_allowed = {**self.textbounds, **events}
        for event in list(events.values()):
            arguments = tuple(
                (role, target)
                for role, target in event.arguments
                if self._resolves(f"{event.id} argument {role}:{target}", target, arguments_allowed,
                                  "a text-bound or event", self.where(event.id))
            )  # fmt: skip
            if arguments != event.arguments:
                events[event.id] = Event(event.id, event.type, event.trigger, arguments)
        return events

    def finish(self, on_broken: OnBroken) -> BratDocument:
        if self._all_resolved():
            return BratDocument(
                textbounds=tuple(self.textbounds.values()),
                events=tuple(self.events.values()),
                attributes=tuple(self.attributes),
                lines={identifier: line for identifier, line in self.line_of.items() if line},
            )
        events = self._kept_events()
        arguments_allowed = {**self.textbounds, **events}
        relations: dict[str, Relation] = {}
        for relation in self.relations.values():
            if all(
                [self._resolves(relation.id, target, arguments_allowed, "a text-bound or event")
                 for _, target in relation.arguments]
            ):  # fmt: skip
                relations[relation.id] = relation
            else:
                self._leave_out(relation.id, self.where(relation.id))
        annotated = {**arguments_allowed, **relations}
        attributes = [a for a in self.attributes if self._kept(a.id, a.target, annotated, "an annotation")]
        normalizations = [n for n in self.normalizations if self._kept(n.id, n.target, annotated, "an annotation")]
        equivalences = []
        for equivalence, line in self.equivalences:
            members = tuple(
                member
                for member in equivalence.members
                if self._resolves(f"{equivalence.type} equivalence", member, arguments_allowed,
                                  "a text-bound or event", line or f"{equivalence.type} equivalence")
            )  # fmt: skip
            if len(members) >= 2:
                equivalences.append(Equivalence(equivalence.type, members))
        every_id = {identifier: None for identifier in self.line_of if identifier not in self.broken}
        notes = [note for note in self.notes if self._kept(note.id, note.target, every_id, "an annotation")]
        for where, message in sorted(self.problems, key=_problem_order):
            left_out = self.left_out.get(where)
            suffix = f"; depending on it: {', '.join(left_out)}" if left_out else ""
            if isinstance(where, int):
                on_broken(self.error(message + suffix, where))
            else:
                on_broken(SourceError(self.path, message + suffix, record=where))
        return BratDocument(
            textbounds=tuple(self.textbounds.values()),
            events=tuple(events.values()),
            attributes=tuple(attributes),
            relations=tuple(relations.values()),
            notes=tuple(notes),
            equivalences=tuple(equivalences),
            normalizations=tuple(normalizations),
            lines={
                identifier: line for identifier, line in self.line_of.items() if line and identifier not in self.broken
            },
        )

    def _all_resolved(self) -> bool:
        """Whether the document holds only text-bounds, events and attributes, all well formed and
        referring to what is in the file (most documents): ``finish`` then has nothing to leave out."""
        if self.problems or self.broken or self.relations or self.normalizations or self.notes or self.equivalences:
            return False
        textbounds, events = self.textbounds, self.events
        for event in events.values():
            trigger = textbounds.get(event.trigger)
            if trigger is None or trigger.type != event.type:
                return False
            for _, target in event.arguments:
                if target not in textbounds and target not in events:
                    return False
        return all(attribute.target in textbounds or attribute.target in events for attribute in self.attributes)

    def _kept(self, identifier: str, target: str, allowed: Mapping[str, object], what: str) -> bool:
        if self._resolves(identifier, target, allowed, what):
            return True
        self._leave_out(identifier, self.broken.get(target, self.where(identifier)))
        return False
