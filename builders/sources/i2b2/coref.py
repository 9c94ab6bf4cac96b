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
quoted text other than the covered tokens (``m.d`` on ``M.D.``, ``he`` on ``Heis``) is read at its
position, a change (:attr:`I2b2CorefDocument.changes`); a position that does not exist is a problem. A
line that cannot be read is a problem, not the end of the document: the concept (or chain member, or
pair) is left out and listed in :attr:`I2b2CorefDocument.problems` with file and line. A concept
listed twice with the same type is read once. How each line is read against the tokens is
:mod:`clinical_corpora.builders.sources.i2b2.concepts`; how chain lines and pairs are read together
(lines sharing a concept, an empty chains file beside pairs, a pair across chains, a chain kept whole) is
:mod:`clinical_corpora.builders.sources.i2b2.chains`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from clinical_corpora.builders.sources.discovery import is_hidden, split_suffix, walk_files, warn_left_out
from clinical_corpora.builders.sources.i2b2.chains import Chain, Concept, CorefPair, read_chains
from clinical_corpora.builders.sources.i2b2.concepts import (
    LineReading,
    TokenGrid,
    has_lines,
    read_chain_lines,
    read_concepts,
    read_pairs,
)
from clinical_corpora.builders.sources.knowtator.document import KnowtatorDocument
from clinical_corpora.builders.sources.text_lines import read_utf8
from clinical_corpora.core.errors import SourceError, excerpt
from clinical_corpora.core.file_limits import MAX_FILE_BYTES, check_file_size
from clinical_corpora.core.reader_changes import ReaderChange
from clinical_corpora.core.safe_names import inside

DOCS_DIR = "docs"
CONCEPTS_DIR = "concepts"
CHAINS_DIR = "chains"
PAIRS_DIR = "pairs"


@dataclass(frozen=True)
class I2b2CorefDocument:
    doc_id: str
    text: str
    concepts: tuple[Concept, ...]
    chains: tuple[Chain, ...]
    pairs: tuple[CorefPair, ...] = ()
    problems: tuple[SourceError, ...] = field(default=(), compare=False)
    """Lines left out (a concept, chain member or pair that does not line up), in file order."""
    changes: tuple[ReaderChange, ...] = field(default=(), compare=False)
    """Lines read otherwise than written: a quoted text other than the tokens its position covers, chain lines
    joined, chains read from the pairs, a chain kept whole (:mod:`clinical_corpora.builders.sources.i2b2.chains`)."""


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
    read = LineReading(TokenGrid(text))
    concepts = read_concepts(files.path(CONCEPTS_DIR), read, concept_types)
    chains_path, pairs_path = files.path(CHAINS_DIR), files.path(PAIRS_DIR)
    chain_lines = read_chain_lines(chains_path, concepts, read)
    pair_lines = read_pairs(pairs_path, concepts, read) if files.has(PAIRS_DIR) else []
    written_pairs = files.has(PAIRS_DIR) and has_lines(pairs_path)
    reading = read_chains(
        chain_lines if has_lines(chains_path) else None,
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
        changes=(*read.changes, *reading.changes),
    )


def write_i2b2_document(root: Path, document: I2b2CorefDocument) -> None:
    """Write one document in the i2b2/VA layout under ``root`` (pairs only if it has any)."""
    grid = TokenGrid(document.text)

    def concept_field(concept: Concept) -> str:
        start_line, start_token, end_line, end_token = grid.position(concept.start, concept.end)
        quoted = " ".join(grid.covered_tokens(concept.start, concept.end)).lower()
        return f'c="{quoted}" {start_line}:{start_token} {end_line}:{end_token}'

    files = {
        inside(root / DOCS_DIR, document.doc_id, ".txt"): document.text,
        inside(root / CONCEPTS_DIR, document.doc_id, ".txt.con"): "".join(
            f'{concept_field(c)}||t="{c.type}"\n' for c in sorted(document.concepts, key=lambda c: (c.start, c.end))
        ),
        inside(root / CHAINS_DIR, document.doc_id, ".txt.chains"): "".join(
            "||".join(concept_field(c) for c in chain.concepts) + f'||t="coref {chain.type}"\n'
            for chain in document.chains
        ),
    }
    if document.pairs:
        files[inside(root / PAIRS_DIR, document.doc_id, ".txt.pairs")] = "".join(
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
