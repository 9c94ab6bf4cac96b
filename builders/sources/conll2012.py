"""Read and write CoNLL-2012 coreference files, the format of the reference scorer.

A file holds documents between ``#begin document (name); part 000`` and ``#end document``;
one token per line, whitespace-separated columns (document, part, word number, word, ...,
coreference last), a blank line between sentences. The coreference column is ``-`` or
bracket pieces such as ``(12``, ``12)``, ``(12)``, ``(3|(4)`` or ``(1(2``. As in the reference
scorer (``scorer.pl`` reads only the last field), a token line may have any number of columns:
the reference's own test files have two (document, coreference) or five; the word is the fourth
column when there are five or more.

A document is named by the exact text after ``#begin document `` (trailing spaces included),
which is how the reference matches key and response documents; ``normalise_names=True`` instead
names it ``(name); part NNN`` whatever the spelling (``part 0`` = ``part 000``), a documented
deviation kept for files written by tools that spell the header differently.

Mentions are :class:`TokenSpan` values over the document's tokens, counted across sentences
as the reference scorer counts them, so spans from a key and a response file compare by
identity. As in the reference, on one token single-token mentions are read first, then
openings, then closings, and a closing pairs with the latest opening of the same entity.
``chains`` holds each entity's distinct spans; ``mentions`` keeps them as read (entity order
of first appearance, repeats included), which the metrics need to treat repeats as the
reference does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, TextIO

from clinical_corpora.builders.sources.text_lines import utf8_lines
from clinical_corpora.core.errors import SourceError

WORD_COLUMNS = 5
"""A token line has a word column (the fourth) when it has at least this many columns."""
_BEGIN = re.compile(r"#\s*begin document(?: (?P<rest>.*)|\s*)")
_END = re.compile(r"#\s*end document\b.*")
_STANDARD_NAME = re.compile(r"\((?P<name>.+)\)\s*;?\s*(?:part\s+(?P<part>\d+))?")
_BRACKET = re.compile(r"\((?P<single>\d+)\)|\((?P<open>\d+)|(?P<close>\d+)\)|\|")
_EMPTY_COLUMNS = {"-", "_"}


class TokenSpan(NamedTuple):
    """Tokens ``start`` to ``end`` (exclusive), 0-based over the whole document."""

    start: int
    end: int


@dataclass(frozen=True)
class ConllDocument:
    """One ``#begin document`` … ``#end document`` block: its tokens and coreference chains."""

    name: str
    part: int
    sentences: tuple[tuple[str, ...], ...]
    chains: tuple[frozenset[TokenSpan], ...]
    header: str = ""
    """The exact text after ``#begin document `` (empty for a document made in code)."""
    mentions: tuple[tuple[TokenSpan, ...], ...] = ()
    """Each entity's spans as read, repeats included (empty for a document made in code)."""

    @property
    def doc_id(self) -> str:
        """The document's identity as the reference scorer matches it: the exact header text.

        ``(name); part 000`` for a document made in code.
        """
        return self.header or conll_doc_id(self.name, self.part)

    @property
    def normalised_id(self) -> str:
        """``(name); part 000`` whatever the header's spelling (``part 0``, trailing spaces)."""
        return conll_doc_id(self.name, self.part)


def conll_doc_id(name: str, part: int = 0) -> str:
    """``(name); part 000``: the text after ``#begin document`` naming a document."""
    return f"({name}); part {part:03d}"


class _BracketError(Exception):
    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass
class _MentionCollector:
    """Turns coreference columns, token by token, into chains of spans."""

    chains: dict[int, list[TokenSpan]] = field(default_factory=dict)
    open_mentions: dict[int, list[tuple[int, int | None]]] = field(default_factory=dict)

    def add(self, token: int, column: str, line: int | None) -> None:
        if column in _EMPTY_COLUMNS:
            return
        singles, opens, closes = [], [], []
        position = 0
        while position < len(column):
            match = _BRACKET.match(column, position)
            if match is None:
                raise _BracketError(
                    f"coreference column {column!r}: expected '-' or pieces like '(12', '12)', "
                    f"'(12)' joined by '|', found {column[position:]!r}",
                    line,
                )
            if match["single"]:
                singles.append(int(match["single"]))
            elif match["open"]:
                opens.append(int(match["open"]))
            elif match["close"]:
                closes.append(int(match["close"]))
            position = match.end()
        for entity in singles:
            self.chains.setdefault(entity, []).append(TokenSpan(token, token + 1))
        for entity in opens:
            self.chains.setdefault(entity, [])
            self.open_mentions.setdefault(entity, []).append((token, line))
        for entity in closes:
            started = self.open_mentions.get(entity)
            if not started:
                raise _BracketError(f"'{entity})' closes entity {entity}, which has no open mention", line)
            start, _ = started.pop()
            self.chains.setdefault(entity, []).append(TokenSpan(start, token + 1))

    def finish(self) -> tuple[tuple[TokenSpan, ...], ...]:
        """Each entity's spans in reading order, repeats included (entities in order of first use)."""
        for entity, started in self.open_mentions.items():
            if started:
                _, line = started[-1]
                raise _BracketError(f"'({entity}' opens a mention of entity {entity} that is never closed", line)
        return tuple(tuple(spans) for spans in self.chains.values() if spans)


def _parse_header(rest: str | None, path: str | Path, line: int) -> tuple[str, int]:
    rest = (rest or "").strip()
    if not rest:
        raise SourceError(path, "'#begin document' without a document name", line=line)
    standard = _STANDARD_NAME.fullmatch(rest)
    if standard is None:
        return rest, 0
    return standard["name"], int(standard["part"] or 0)


@dataclass
class _OpenDocument:
    name: str
    part: int
    header: str
    begin_line: int
    sentences: list[tuple[str, ...]] = field(default_factory=list)
    sentence: list[str] = field(default_factory=list)
    tokens: int = 0
    mentions: _MentionCollector = field(default_factory=_MentionCollector)

    def end_sentence(self) -> None:
        if self.sentence:
            self.sentences.append(tuple(self.sentence))
            self.sentence = []


def iter_conll2012(path: str | Path, *, normalise_names: bool = False) -> Iterator[ConllDocument]:
    """Yield the documents of a CoNLL-2012 file one at a time (memory: one document).

    Two documents with the same name (exact header text, or ``(name); part NNN`` with
    ``normalise_names``) are an error: the reference would silently score only one of them.
    """
    document: _OpenDocument | None = None
    seen: dict[str, int] = {}
    for line_number, raw in utf8_lines(path):
        text = raw.strip()
        begin = _BEGIN.fullmatch(raw.rstrip("\r\n").lstrip())
        if document is None:
            if begin is None:
                if text:
                    raise SourceError(path, "expected '#begin document (name); part NNN'", line=line_number)
                continue
            name, part = _parse_header(begin["rest"], path, line_number)
            document = _OpenDocument(name, part, begin["rest"], line_number)
            doc_id = conll_doc_id(name, part) if normalise_names else document.header
            if doc_id in seen:
                raise SourceError(
                    path,
                    f"document {doc_id!r} already began at line {seen[doc_id]}",
                    line=line_number,
                )
            seen[doc_id] = line_number
        elif begin is not None:
            raise SourceError(
                path,
                f"'#begin document' inside document ({document.name}) begun at line "
                f"{document.begin_line}; expected '#end document' first",
                line=line_number,
            )
        elif _END.fullmatch(text):
            yield _close(document, path, normalise_names)
            document = None
        elif not text:
            document.end_sentence()
        elif text.startswith("#"):
            raise SourceError(path, "unexpected '#' line inside a document; expected a token line", line=line_number)
        else:
            _add_token(document, text, path, line_number)
    if document is not None:
        raise SourceError(
            path,
            f"document ({document.name}) begun here has no '#end document' before the end of the file",
            line=document.begin_line,
        )


def _add_token(document: _OpenDocument, text: str, path: str | Path, line: int) -> None:
    columns = text.split()
    try:
        document.mentions.add(document.tokens, columns[-1], line)
    except _BracketError as error:
        raise SourceError(path, error.message, line=error.line) from error
    document.sentence.append(columns[3] if len(columns) >= WORD_COLUMNS else "_")
    document.tokens += 1


def _close(document: _OpenDocument, path: str | Path, normalise_names: bool = False) -> ConllDocument:
    document.end_sentence()
    try:
        mentions = document.mentions.finish()
    except _BracketError as error:
        raise SourceError(path, error.message, line=error.line) from error
    return ConllDocument(
        document.name,
        document.part,
        tuple(document.sentences),
        tuple(frozenset(spans) for spans in mentions),
        header="" if normalise_names else document.header,
        mentions=mentions,
    )


def read_conll2012_chains(path: str | Path, *, normalise_names: bool = False) -> dict[str, list[list[TokenSpan]]]:
    """``{doc_id: chains}`` of a CoNLL-2012 file, ready for :mod:`clinical_corpora.validation.metrics.coref`.

    Chains list each entity's spans as read, repeats included: the metrics decide what a
    repeat means (as the reference scorer does).
    """
    return {
        document.doc_id: [list(spans) for spans in document.mentions]
        for document in iter_conll2012(path, normalise_names=normalise_names)
    }


def _coreference_columns(document: ConllDocument) -> list[str]:
    """The coreference column of every token; entity numbers are chain positions."""
    token_count = sum(len(sentence) for sentence in document.sentences)
    opens: list[list[tuple[int, int]]] = [[] for _ in range(token_count)]
    singles: list[list[int]] = [[] for _ in range(token_count)]
    closes: list[list[tuple[int, int]]] = [[] for _ in range(token_count)]
    for entity, chain in enumerate(document.chains):
        for start, end in chain:
            if not 0 <= start < end <= token_count:
                raise ValueError(f"{document.doc_id}: span ({start}, {end}) is outside tokens 0..{token_count}")
            if end - start == 1:
                singles[start].append(entity)
            else:
                opens[start].append((end, entity))
                closes[end - 1].append((start, entity))
    columns = []
    for token in range(token_count):
        pieces = [f"({entity}" for _, entity in sorted(opens[token], reverse=True)]
        pieces += [f"({entity})" for entity in sorted(singles[token])]
        pieces += [f"{entity})" for _, entity in sorted(closes[token], reverse=True)]
        columns.append("|".join(pieces) or "-")
    _check_readable(document, columns)
    return columns


def _check_readable(document: ConllDocument, columns: list[str]) -> None:
    """Fail when brackets would read back as other spans (crossing mentions of one entity)."""
    collector = _MentionCollector()
    try:
        for token, column in enumerate(columns):
            collector.add(token, column, None)
        written = collector.finish()
    except _BracketError as error:
        raise ValueError(f"{document.doc_id}: chains cannot be written: {error.message}") from error
    if {frozenset(spans) for spans in written} != {chain for chain in document.chains if chain}:
        raise ValueError(
            f"{document.doc_id}: mentions of one entity cross (or one ends where another starts), "
            "which CoNLL-2012 brackets cannot express"
        )


def _check_tokens(document: ConllDocument) -> None:
    if not document.name or any(character.isspace() for character in document.name):
        raise ValueError(f"document name {document.name!r} must be non-empty without whitespace")
    for sentence in document.sentences:
        if not sentence:
            raise ValueError(f"{document.doc_id}: empty sentence")
        for word in sentence:
            if not word or any(character.isspace() for character in word):
                raise ValueError(f"{document.doc_id}: token {word!r} is empty or has whitespace")


def format_conll2012(document: ConllDocument) -> list[str]:
    """The lines (without newlines) of one document, tab-separated CoNLL-2012 columns.

    Columns: document, part, word number, word, then ``-`` for POS, parse, predicate lemma,
    frameset, sense and speaker, ``*`` for named entities, and the coreference column.
    Raises ``ValueError`` for a document the format cannot hold, before producing any line.
    """
    _check_tokens(document)
    columns = iter(_coreference_columns(document))
    lines = [f"#begin document {document.doc_id}"]
    for sentence in document.sentences:
        for word_number, word in enumerate(sentence):
            leading = [document.name, str(document.part), str(word_number), word]
            lines.append("\t".join([*leading, "-", "-", "-", "-", "-", "-", "*", next(columns)]))
        lines.append("")
    lines.append("#end document")
    return lines


def write_conll2012(documents: Iterable[ConllDocument], target: str | Path | TextIO) -> None:
    """Write documents to a path or an open text stream, one document at a time.

    A document the format cannot hold raises ``ValueError`` before any of its lines is written.
    """
    if isinstance(target, str | Path):
        with open(target, "w", encoding="utf-8", newline="\n") as handle:
            write_conll2012(documents, handle)
        return
    for document in documents:
        for line in format_conll2012(document):
            target.write(line + "\n")
