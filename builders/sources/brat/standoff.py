"""BRAT standoff ``.ann`` content read the way brat reads it into a document, and written back.

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

Broken annotations are left out with what depends on them by :mod:`builders.sources.brat.resolution`.
A folder's documents (each a ``<doc>.txt`` and its ``<doc>.ann``) are those
:mod:`builders.sources.brat.folder` finds; each one's text and annotations are read here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from clinical_corpora.builders.sources.brat.annotations import (
    Attribute,
    BratDocument,
    Equivalence,
    Event,
    Normalization,
    Note,
    OnBroken,
    Relation,
    TextBound,
    fragments_text,
    raise_broken,
)
from clinical_corpora.builders.sources.brat.folder import ANN_SUFFIX, TEXT_SUFFIX, brat_documents
from clinical_corpora.builders.sources.brat.resolution import PendingAnnotations
from clinical_corpora.builders.sources.discovery import Document
from clinical_corpora.builders.sources.text_lines import read_utf8
from clinical_corpora.core.errors import SourceError, excerpt
from clinical_corpora.core.file_limits import MAX_FILE_BYTES

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


def parse_brat(
    ann: str, text: str, path: str | Path = "<string>", *, on_broken: OnBroken | None = None
) -> BratDocument:
    """Parse ``.ann`` content; ``path`` is only used to name the file in errors.

    Without ``on_broken`` the first broken annotation raises its SourceError; with it, each one is
    passed to ``on_broken`` and left out of the document with what depends on it
    (:mod:`builders.sources.brat.resolution`).
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


def read_brat(
    ann_path: str | Path, text: str, *, on_broken: OnBroken | None = None, max_bytes: int = MAX_FILE_BYTES
) -> BratDocument:
    """Read the ``.ann`` file at ``ann_path``, checking it against the document ``text``; a file over
    ``max_bytes`` is a SourceError (:mod:`core.file_limits`)."""
    return parse_brat(read_utf8(ann_path, max_bytes), text, ann_path, on_broken=on_broken)


def read_brat_document(
    document: Document,
    *,
    text_without_ann: bool = False,
    on_broken: OnBroken | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> tuple[str, BratDocument]:
    """Text and annotations of a document (as listed by :func:`brat_documents`). A missing companion is a
    SourceError naming the file found, except a ``.txt`` alone with ``text_without_ann``: no annotations. A
    file over ``max_bytes`` is a SourceError naming it (:mod:`core.file_limits`)."""
    text = read_utf8(document.paths.get(TEXT_SUFFIX) or document.require(TEXT_SUFFIX), max_bytes)
    ann = document.paths.get(ANN_SUFFIX)
    if ann is None and text_without_ann:
        return text, BratDocument()
    return text, read_brat(ann or document.require(ANN_SUFFIX), text, on_broken=on_broken, max_bytes=max_bytes)


def iter_brat_folder(root: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> Iterator[tuple[str, str, BratDocument]]:
    """Yield (document id, text, annotations) for every document under ``root``, sorted by id; a document
    lacking its ``.txt`` or ``.ann`` is a SourceError naming it."""
    for document in brat_documents(root):
        text, doc = read_brat_document(document, max_bytes=max_bytes)
        yield document.id, text, doc


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


def _shorten(line: str, limit: int = 120) -> str:
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _split_pair(field: str) -> tuple[str, str] | None:
    name, colon, target = field.rpartition(":")
    return (name, target) if colon and name and target else None


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


class _AnnParser(PendingAnnotations):
    """Reads the lines of one ``.ann`` file into pending annotations.

    A line that cannot be read is a problem kept for ``finish``; its id (when it has one) is
    *broken*, so that what refers to it is left out with it rather than reported again.
    """

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
        expected = fragments_text(self.text, fragments)
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
