"""Reader and writer for the i2b2/VA 2011 coreference format (which carried the ODIE corpus).

A document ``<doc>`` is spread over folders of one root::

    docs/<doc>.txt               the text, one sentence per line, tokens split on whitespace
    concepts/<doc>.txt.con       c="text" L:T L:T||t="type"
    chains/<doc>.txt.chains      c="text" L:T L:T||c="text" L:T L:T||...||t="coref type"
    pairs/<doc>.txt.pairs        c="antecedent" L:T L:T||t="coref type"||c="anaphor" L:T L:T
                                 (optional)

Positions are ``line:token`` with lines 1-based and tokens 0-based on whitespace, the end token
included. The quoted text is the lower-cased tokens joined by single spaces. The format carries
identity coreference only: no Bagga class, no linguistic attributes, no set/subset or part/whole.

The position defines a concept's span, as the format encodes it and the i2b2 evaluation reads it: a
quoted text found inside the covered tokens (``m.d`` on ``M.D.``, case and punctuation aside) is read
at its position with a warning (:attr:`I2b2CorefDocument.warnings`); a position that does not exist,
or whose tokens do not hold the quoted text at all, is a problem. A line that cannot be read is a
problem, not the end of the document: the concept (or chain member, or pair) is left out and listed in
:attr:`I2b2CorefDocument.problems` with file and line. A concept listed twice with the same type is
read once. How chain lines and pairs are read together (lines sharing a concept, an empty chains file
beside pairs, a pair across chains) is :mod:`clinical_corpora.builders.sources.i2b2.chains`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from clinical_corpora.builders.sources.discovery import is_hidden, split_suffix, walk_files, warn_left_out
from clinical_corpora.builders.sources.i2b2.chains import Chain, ChainLine, Concept, CorefPair, PairLine, read_chains
from clinical_corpora.builders.sources.knowtator.document import KnowtatorDocument
from clinical_corpora.builders.sources.text_lines import read_utf8, utf8_lines
from clinical_corpora.core.errors import SourceError, excerpt
from clinical_corpora.core.file_limits import MAX_FILE_BYTES, check_file_size

DOCS_DIR = "docs"
CONCEPTS_DIR = "concepts"
CHAINS_DIR = "chains"
PAIRS_DIR = "pairs"


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


@dataclass(frozen=True)
class I2b2CorefDocument:
    doc_id: str
    text: str
    concepts: tuple[Concept, ...]
    chains: tuple[Chain, ...]
    pairs: tuple[CorefPair, ...] = ()
    problems: tuple[SourceError, ...] = field(default=(), compare=False)
    """Lines left out (a concept, chain member or pair that does not line up), in file order."""
    warnings: tuple[SourceError, ...] = field(default=(), compare=False)
    """Lines read otherwise than written: a quoted text found inside the tokens its position covers, chain
    lines joined, chains read from the pairs (see :mod:`clinical_corpora.builders.sources.i2b2.chains`)."""


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


LAYOUT = {DOCS_DIR: ".txt", CONCEPTS_DIR: ".txt.con", CHAINS_DIR: ".txt.chains", PAIRS_DIR: ".txt.pairs"}
"""Folder → suffix of a document's files in it."""
I2B2_FILES = "i2b2/VA files docs/<doc>.txt, concepts/<doc>.txt.con, chains/<doc>.txt.chains, pairs/<doc>.txt.pairs"


@dataclass(frozen=True)
class I2b2Files:
    """Where one document's files are: by folder (``docs``, ``concepts``...), the file found (its suffix in
    any case) or the path it is expected at."""

    doc_id: str
    files: dict[str, Path]
    found: frozenset[str]

    def path(self, folder: str) -> Path:
        return self.files[folder]

    def has(self, folder: str) -> bool:
        return folder in self.found


def i2b2_files(root: Path, doc_id: str) -> I2b2Files:
    """The files of ``doc_id`` at their usual (lower-case) paths."""
    files = {folder: root / folder / f"{doc_id}{suffix}" for folder, suffix in LAYOUT.items()}
    return I2b2Files(doc_id, files, frozenset(folder for folder, path in files.items() if path.is_file()))


def i2b2_documents(root: Path, *, quiet: bool = False) -> list[I2b2Files]:
    """Every document of ``root``, sorted by id: each file of ``docs/``, ``concepts/``, ``chains/`` and
    ``pairs/`` (suffixes in any case, linked folders followed), grouped by document. Hidden files are
    counted in a warning; any other file, or two files of one document differing only in suffix case, is
    a SourceError naming them."""
    if not root.is_dir():
        raise SourceError(root, f"expected a folder of {I2B2_FILES}")
    found: dict[str, dict[str, Path]] = {}
    left_out, unexpected = [], []
    for path in walk_files(root):
        relative = path.relative_to(root).as_posix()
        folder, _, name = relative.partition("/")
        named = split_suffix(name, [LAYOUT[folder]]) if folder in LAYOUT and "/" not in name else None
        if is_hidden(relative):
            left_out.append(relative)
        elif named is None:
            unexpected.append(relative)
        elif found.setdefault(named[0], {}).setdefault(folder, path) != path:
            twin = found[named[0]][folder]
            raise SourceError(path, f"{twin.name} and {path.name} are both {folder}/ files of {named[0]}: keep one")
    if unexpected:
        raise SourceError(root, f"not {I2B2_FILES}: {', '.join(unexpected[:10])}")
    if left_out and not quiet:
        warn_left_out(root, left_out, I2B2_FILES)
    documents = []
    for doc_id, files in sorted(found.items()):
        usual = i2b2_files(root, doc_id)
        documents.append(I2b2Files(doc_id, {**usual.files, **files}, frozenset(files)))
    return documents


def iter_i2b2_documents(root: Path, *, max_bytes: int = MAX_FILE_BYTES) -> Iterator[I2b2CorefDocument]:
    """Read every document of ``root``, in id order."""
    for files in i2b2_documents(root):
        yield read_i2b2_files(files, max_bytes=max_bytes)


def read_i2b2_document(root: Path, doc_id: str) -> I2b2CorefDocument:
    """Read the text, concepts, chains and (if present) pairs of one document at its usual paths."""
    return read_i2b2_files(i2b2_files(root, doc_id))


def read_i2b2_files(
    files: I2b2Files, concept_types: Collection[str] | None = None, *, max_bytes: int = MAX_FILE_BYTES
) -> I2b2CorefDocument:
    """Read one document's text, concepts, chains and (if present) pairs. A missing text, concepts or
    chains file is a SourceError naming it (and, for the text, the files that need it), and so is a file
    over ``max_bytes`` (:mod:`core.file_limits`). A concept whose type is not in ``concept_types`` (when
    given) is a problem, left out like one that does not line up."""
    text_path = files.path(DOCS_DIR)
    if not files.has(DOCS_DIR):
        others = ", ".join(f"{folder}/{files.path(folder).name}" for folder in sorted(files.found))
        raise SourceError(text_path, f"file not found; {others} need{'s' if len(files.found) == 1 else ''} it")
    for folder in sorted(files.found):
        check_file_size(files.path(folder), max_bytes)
    text = read_utf8(text_path, max_bytes)
    read = _Reading(TokenGrid(text))
    concepts = _read_concepts(files.path(CONCEPTS_DIR), read, concept_types)
    chains_path, pairs_path = files.path(CHAINS_DIR), files.path(PAIRS_DIR)
    chain_lines = [
        chain_line
        for line_number, line in _lines(chains_path)
        if (chain_line := _chain(line, concepts, chains_path, line_number, read)) is not None
    ]
    pair_lines = _read_pairs(pairs_path, concepts, read) if files.has(PAIRS_DIR) else []
    written_pairs = files.has(PAIRS_DIR) and _has_lines(pairs_path)
    reading = read_chains(
        chain_lines if _has_lines(chains_path) else None,
        pair_lines if written_pairs else None,
        chains_path,
        pairs_path,
        bool(read.problems),
    )
    return I2b2CorefDocument(
        doc_id=files.doc_id,
        text=text,
        concepts=tuple(sorted(concepts.values(), key=lambda c: (c.start, c.end))),
        chains=tuple(reading.chains),
        pairs=tuple(reading.pairs),
        problems=(*read.problems, *reading.problems),
        warnings=(*read.warnings, *reading.warnings),
    )


@dataclass
class _Reading:
    """A document's token grid and what reading its lines found: problems (lines left out) and warnings."""

    grid: TokenGrid
    problems: list[SourceError] = field(default_factory=list)
    warnings: list[SourceError] = field(default_factory=list)


def write_i2b2_document(root: Path, document: I2b2CorefDocument) -> None:
    """Write one document in the i2b2/VA layout under ``root`` (pairs only if it has any)."""
    grid = TokenGrid(document.text)

    def concept_field(concept: Concept) -> str:
        start_line, start_token, end_line, end_token = grid.position(concept.start, concept.end)
        quoted = " ".join(grid.covered_tokens(concept.start, concept.end)).lower()
        return f'c="{quoted}" {start_line}:{start_token} {end_line}:{end_token}'

    files = {
        root / DOCS_DIR / f"{document.doc_id}.txt": document.text,
        root / CONCEPTS_DIR / f"{document.doc_id}.txt.con": "".join(
            f'{concept_field(c)}||t="{c.type}"\n' for c in sorted(document.concepts, key=lambda c: (c.start, c.end))
        ),
        root / CHAINS_DIR / f"{document.doc_id}.txt.chains": "".join(
            "||".join(concept_field(c) for c in chain.concepts) + f'||t="coref {chain.type}"\n'
            for chain in document.chains
        ),
    }
    if document.pairs:
        files[root / PAIRS_DIR / f"{document.doc_id}.txt.pairs"] = "".join(
            f'{concept_field(p.antecedent)}||t="coref {p.type}"||{concept_field(p.anaphor)}\n' for p in document.pairs
        )
    for path, content in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="") as handle:
            handle.write(content)


def from_knowtator(document: KnowtatorDocument) -> I2b2CorefDocument:
    """The i2b2/VA view of a Knowtator document: identity chains and identity pairs only.

    Concept types are the semantic classes with spaces (``sign or symptom``); a chain and its
    pairs take the type of the chain's grounding instance. Discontinuous markables cannot be
    written in this format and raise ValueError.
    """
    concepts = {}
    for markable in document.markables:
        if len(markable.fragments) > 1:
            raise ValueError(
                f"{document.doc_id}: markable {markable.id} ({excerpt(markable.text)}) is discontinuous; "
                "the i2b2/VA format has no discontinuous concepts"
            )
        concepts[markable.id] = Concept(
            start=markable.start,
            end=markable.end,
            type=markable.semantic_class.replace("_", " "),
            text=document.text[markable.start : markable.end],
        )
    chains = []
    chain_type_of = {}
    for chain_ids in document.identity_chains():
        chain_type = concepts[chain_ids[0]].type
        chains.append(Chain(type=chain_type, concepts=tuple(concepts[i] for i in chain_ids)))
        chain_type_of.update(dict.fromkeys(chain_ids, chain_type))
    pairs = tuple(
        CorefPair(
            antecedent=concepts[p.antecedent_id],
            anaphor=concepts[p.anaphor_id],
            type=chain_type_of[p.anaphor_id],
        )
        for p in document.pairs
        if p.relation == "identity"
    )
    return I2b2CorefDocument(
        doc_id=document.doc_id,
        text=document.text,
        concepts=tuple(sorted(concepts.values(), key=lambda c: (c.start, c.end))),
        chains=tuple(chains),
        pairs=pairs,
    )


def _read_concepts(path: Path, read: _Reading, concept_types: Collection[str] | None) -> dict[tuple[int, int], Concept]:
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


def _read_pairs(path: Path, concepts: dict[tuple[int, int], Concept], read: _Reading) -> list[PairLine]:
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


def _has_lines(path: Path) -> bool:
    return any(True for _ in _lines(path))


def _full_match(pattern: re.Pattern[str], line: str, path: Path, line_number: int, expected: str) -> re.Match[str]:
    match = pattern.fullmatch(line)
    if match is None:
        raise SourceError(path, f"cannot parse {line!r}; expected {expected}", line=line_number)
    return match


def _locate(match: re.Match[str], read: _Reading, path: Path, line_number: int, prefix: str = "") -> tuple[int, int]:
    """Offsets of one ``c="..." L:T L:T``: the position defines the span. Its quoted text must be the covered
    tokens, or lie inside them (a warning): only a quote found nowhere in them is a problem."""
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
    where = "{}:{} {}:{}".format(*position)
    if covered.lower() == quoted.lower():
        return start, end
    if quote_lies_inside(quoted, covered):
        read.warnings.append(
            SourceError(
                path,
                f"concept text {excerpt(quoted)} lies inside the tokens at {where} ({excerpt(covered)}): "
                "the position is read",
                line=line_number,
            )
        )
        return start, end
    raise SourceError(
        path,
        f"concept text {excerpt(quoted)} does not match the tokens at {where}: {excerpt(covered)} "
        "(nor lies inside them)",
        line=line_number,
    )


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
    line: str, concepts: dict[tuple[int, int], Concept], path: Path, line_number: int, read: _Reading
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
