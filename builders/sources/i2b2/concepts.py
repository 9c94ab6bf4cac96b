"""Reading the concept fields of an i2b2/VA 2011 document's concepts, chains and pairs files against its tokens.

A concept field is ``c="text" L:T L:T``: a position, ``line:token`` to ``line:token`` (:class:`TokenGrid` maps it
to character offsets and back), and the quoted text. The position defines the concept's span, whatever the quoted
text says (``he`` on ``Heis``, ``s a patie`` on ``a patient``): a quote other than the covered tokens is a change
the document's :class:`LineReading` keeps, of its kind. A line that cannot be read, or a position that does not
exist, is a problem: it is left out and kept, with file and line, in the document's :class:`LineReading`
(:mod:`clinical_corpora.builders.sources.i2b2.coref` lists it in the document it reads).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from clinical_corpora.builders.sources.i2b2.chains import (
    QUOTE_INSIDE_TOKENS,
    QUOTE_UNLIKE_TOKENS,
    ChainLine,
    Concept,
    CorefPair,
    PairLine,
)
from clinical_corpora.builders.sources.text_lines import utf8_lines
from clinical_corpora.core.errors import SourceError, excerpt
from clinical_corpora.core.reader_changes import ReaderChange


def _concept_pattern(prefix: str = "") -> str:
    """``c="text" L:T L:T`` with named groups ``<prefix>text``, ``<prefix>start_line``, ..."""
    return (
        rf'c="(?P<{prefix}text>.*?)" '
        rf"(?P<{prefix}start_line>\d+):(?P<{prefix}start_token>\d+) "
        rf"(?P<{prefix}end_line>\d+):(?P<{prefix}end_token>\d+)"
    )


_CONCEPT_LINE = re.compile(_concept_pattern() + r'\|\|t="(?P<type>[^"]*)"')
_CHAIN_ITEM = re.compile(_concept_pattern() + r"\|\|")
_COREF_TYPE = re.compile(r't="coref (?P<type>[^"]*)"')
_PAIR_LINE = re.compile(
    _concept_pattern("antecedent_") + r'\|\|t="coref (?P<type>[^"]*)"\|\|' + _concept_pattern("anaphor_")
)
_TOKEN = re.compile(r"\S+")

Position = tuple[int, int, int, int]
"""``(start_line, start_token, end_line, end_token)`` as written in the files."""


class TokenGrid:
    """Maps i2b2 ``line:token`` positions of a text to character offsets and back."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[list[tuple[int, int]]] = []
        line_start = 0
        for line in text.split("\n"):
            self.tokens.append([(line_start + m.start(), line_start + m.end()) for m in _TOKEN.finditer(line)])
            line_start += len(line) + 1
        self._by_start = {
            span[0]: (line, token)
            for line, spans in enumerate(self.tokens, start=1)
            for token, span in enumerate(spans)
        }
        self._by_end = {
            span[1]: (line, token)
            for line, spans in enumerate(self.tokens, start=1)
            for token, span in enumerate(spans)
        }

    def offsets(self, position: Position) -> tuple[int, int]:
        """Character ``(start, end)`` of a position; ValueError saying why it does not exist."""
        start_line, start_token, end_line, end_token = position
        start = self._token(start_line, start_token)[0]
        end = self._token(end_line, end_token)[1]
        if (start_line, start_token) > (end_line, end_token):
            raise ValueError(f"start {start_line}:{start_token} lies after end {end_line}:{end_token}")
        return start, end

    def position(self, start: int, end: int) -> Position:
        """The ``line:token`` position of a character span that starts and ends on token edges."""
        if start not in self._by_start or end not in self._by_end:
            raise ValueError(
                f"span {start}-{end} ({excerpt(self.text[start:end])}) does not start and end on "
                "whitespace token boundaries, which the i2b2/VA format cannot express"
            )
        return (*self._by_start[start], *self._by_end[end])

    def covered_tokens(self, start: int, end: int) -> list[str]:
        return _TOKEN.findall(self.text[start:end])

    def _token(self, line: int, token: int) -> tuple[int, int]:
        if not 1 <= line <= len(self.tokens):
            raise ValueError(f"line {line} does not exist (the text has {len(self.tokens)} lines)")
        if not 0 <= token < len(self.tokens[line - 1]):
            raise ValueError(
                f"token {token} does not exist on line {line} (it has {len(self.tokens[line - 1])} tokens)"
            )
        return self.tokens[line - 1][token]


@dataclass
class LineReading:
    """A document's token grid and what reading its lines found: problems (lines left out) and changes (lines
    read otherwise than written)."""

    grid: TokenGrid
    problems: list[SourceError] = field(default_factory=list)
    changes: list[ReaderChange] = field(default_factory=list)


def read_concepts(
    path: Path, read: LineReading, concept_types: Collection[str] | None
) -> dict[tuple[int, int], Concept]:
    """The concepts file, indexed by character offsets; a concept listed twice with the same type
    is read once, with another type it is a problem (the first is read)."""
    concepts: dict[tuple[int, int], Concept] = {}
    for line_number, line in _lines(path):
        try:
            match = _full_match(_CONCEPT_LINE, line, path, line_number, 'c="text" L:T L:T||t="type"')
            start, end = _locate(match, read, path, line_number)
            if concept_types is not None and match["type"] not in concept_types:
                raise SourceError(
                    path,
                    f"concept {excerpt(read.grid.text[start:end])} has type {match['type']!r}; expected one of "
                    f"{sorted(concept_types)}",
                    line=line_number,
                )
        except SourceError as problem:
            read.problems.append(problem)
            continue
        known = concepts.get((start, end))
        if known is not None and known.type != match["type"]:
            read.problems.append(
                SourceError(
                    path,
                    f"concept {excerpt(read.grid.text[start:end])} is listed twice, as {known.type!r} and as "
                    f"{match['type']!r}; the first is read",
                    line=line_number,
                )
            )
        concepts.setdefault(
            (start, end), Concept(start, end, match["type"], read.grid.text[start:end], str(path), line_number)
        )
    return concepts


def read_chain_lines(path: Path, concepts: dict[tuple[int, int], Concept], read: LineReading) -> list[ChainLine]:
    """The lines of a chains file, each with the members that could be read (see :func:`_chain`); a missing file
    is a SourceError."""
    return [
        chain_line
        for line_number, line in _lines(path)
        if (chain_line := _chain(line, concepts, path, line_number, read)) is not None
    ]


def read_pairs(path: Path, concepts: dict[tuple[int, int], Concept], read: LineReading) -> list[PairLine]:
    """The pairs that could be read, each once: a pair listed twice is read once, and with another type it is a
    problem (the first is read)."""
    pairs: dict[tuple[Concept, Concept], PairLine] = {}
    for line_number, line in _lines(path):
        try:
            match = _full_match(
                _PAIR_LINE,
                line,
                path,
                line_number,
                'c="antecedent" L:T L:T||t="coref type"||c="anaphor" L:T L:T',
            )
            antecedent, anaphor = (
                _known(_locate(match, read, path, line_number, role), concepts, path, line_number)
                for role in ("antecedent_", "anaphor_")
            )
        except SourceError as problem:
            read.problems.append(problem)
            continue
        known = pairs.setdefault(
            (antecedent, anaphor), PairLine(line_number, CorefPair(antecedent, anaphor, match["type"]))
        )
        if known.pair.type != match["type"]:
            read.problems.append(
                SourceError(
                    path,
                    f"pair {excerpt(antecedent.text)} -> {excerpt(anaphor.text)} is listed twice, as "
                    f"{known.pair.type!r} (line {known.line}) and as {match['type']!r}; the first is read",
                    line=line_number,
                )
            )
    return list(pairs.values())


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based numbers; a missing file is a SourceError."""
    if not path.is_file():
        raise SourceError(path, "file not found")
    for line_number, line in utf8_lines(path):
        if line.strip():
            yield line_number, line.rstrip("\r\n")


def has_lines(path: Path) -> bool:
    return any(True for _ in _lines(path))


def _full_match(pattern: re.Pattern[str], line: str, path: Path, line_number: int, expected: str) -> re.Match[str]:
    match = pattern.fullmatch(line)
    if match is None:
        raise SourceError(path, f"cannot parse {line!r}; expected {expected}", line=line_number)
    return match


def _locate(match: re.Match[str], read: LineReading, path: Path, line_number: int, prefix: str = "") -> tuple[int, int]:
    """Offsets of one ``c="..." L:T L:T``: the position defines the span, as the i2b2 evaluation reads it. A
    quoted text other than the covered tokens is a change (:data:`QUOTE_INSIDE_TOKENS` when found inside them,
    else :data:`QUOTE_UNLIKE_TOKENS`); only a position that does not exist is a problem."""
    position: Position = (
        int(match[f"{prefix}start_line"]),
        int(match[f"{prefix}start_token"]),
        int(match[f"{prefix}end_line"]),
        int(match[f"{prefix}end_token"]),
    )
    quoted = match[f"{prefix}text"]
    try:
        start, end = read.grid.offsets(position)
    except ValueError as error:
        raise SourceError(path, f"concept {excerpt(quoted)}: {error}", line=line_number) from None
    covered = " ".join(read.grid.covered_tokens(start, end))
    if covered.lower() != quoted.lower():
        inside = quote_lies_inside(quoted, covered)
        what = "lies inside" if inside else "is not"
        read.changes.append(
            ReaderChange(
                QUOTE_INSIDE_TOKENS if inside else QUOTE_UNLIKE_TOKENS,
                str(path),
                f"concept text {excerpt(quoted)} {what} the tokens at {'{}:{} {}:{}'.format(*position)} "
                f"({excerpt(covered)}): the position is read",
                line_number,
            )
        )
    return start, end


_WORD = re.compile(r"[^\W_]+")


def quote_lies_inside(quoted: str, covered: str) -> bool:
    """Whether a quoted text is found inside the covered tokens, ignoring case and punctuation: its words a
    run of their words (``lad`` in ``lad/``, ``penny k. mcbride , m.d.`` in ``By:Penny K. Mcbride , M.D.``)
    or its letters and digits theirs (``md`` on ``M.D.``). A part of a word is not (``cyst`` on ``cysts``)."""
    quoted_words, covered_words = _WORD.findall(quoted.lower()), _WORD.findall(covered.lower())
    if not quoted_words:
        return False
    if "".join(quoted_words) == "".join(covered_words):
        return True
    size = len(quoted_words)
    return any(covered_words[i : i + size] == quoted_words for i in range(len(covered_words) - size + 1))


def _known(offsets: tuple[int, int], concepts: dict[tuple[int, int], Concept], path: Path, line_number: int) -> Concept:
    """The concepts-file entry for a concept named in a chains or pairs file."""
    known = concepts.get(offsets)
    if known is None:
        raise SourceError(
            path,
            f"concept at characters {offsets[0]}-{offsets[1]} is not listed in the concepts file",
            line=line_number,
        )
    return known


def _chain(
    line: str, concepts: dict[tuple[int, int], Concept], path: Path, line_number: int, read: LineReading
) -> ChainLine | None:
    """One chains line with the members that could be read; a member that does not line up is a problem and
    left out. A line that cannot be parsed is a problem."""
    members: list[Concept] = []
    cursor = written = 0
    while (item := _CHAIN_ITEM.match(line, cursor)) is not None:
        written += 1
        cursor = item.end()
        try:
            member = _known(_locate(item, read, path, line_number), concepts, path, line_number)
        except SourceError as problem:
            read.problems.append(problem)
            continue
        if member not in members:
            members.append(member)
    chain_type = _COREF_TYPE.fullmatch(line, cursor)
    if chain_type is None or written < 2:
        read.problems.append(
            SourceError(
                path,
                f'cannot parse {line!r}; expected two or more c="text" L:T L:T joined by || and ending in '
                '||t="coref type"',
                line=line_number,
            )
        )
        return None
    return ChainLine(line_number, chain_type["type"], tuple(members))
