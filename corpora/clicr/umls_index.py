"""The UMLS dictionary CliCR's entity matcher looks strings up in, built from MRCONSO.RRF and MRSTY.RRF.

The dictionary holds the English, non-suppressed MRCONSO strings (LAT=ENG, SUPPRESS=N) of the
concepts whose MRSTY semantic types map to an i2b2-2010 category (:data:`SEMANTIC_TYPE_CATEGORIES`,
documented in ``corpora/clicr/README.md``). A key is a string's tokens
(:mod:`~clinical_corpora.builders.contract.text_units`) lower-cased and joined by one space.

Choices, all deterministic:

- a string naming several concepts goes to the concept it is the preferred name of
  (TS=P, STT=PF, ISPREF=Y), else to the lowest CUI;
- a concept with several mapped semantic types takes the first in table order;
- keys that cannot denote an entity are left out: single characters, strings of numbers and
  punctuation, keys made only of frequent English words (jusText's English stoplist: ``all``,
  ``was``, ``men`` are also UMLS acronyms), and keys starting with a determiner or pronoun.

The index is built by streaming MRSTY then MRCONSO (as Arrow columns); it is built in a child process and
cached on disk by :mod:`clinical_corpora.corpora.clicr.index_cache`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import justext
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from clinical_corpora.builders.contract.text_units import token_strings
from clinical_corpora.builders.sources.umls import (
    MRCONSO_COLUMNS,
    MRSTY_COLUMNS,
    NotPlainRrf,
    file_sha256,
    read_mrconso_lines,
    read_mrsty,
    rrf_batches,
)
from clinical_corpora.core.labels import Category

SEMANTIC_TYPE_CATEGORIES: tuple[tuple[str, str, Category], ...] = (
    ("T047", "Disease or Syndrome", "problem"),
    ("T191", "Neoplastic Process", "problem"),
    ("T048", "Mental or Behavioral Dysfunction", "problem"),
    ("T046", "Pathologic Function", "problem"),
    ("T037", "Injury or Poisoning", "problem"),
    ("T019", "Congenital Abnormality", "problem"),
    ("T020", "Acquired Abnormality", "problem"),
    ("T190", "Anatomical Abnormality", "problem"),
    ("T049", "Cell or Molecular Dysfunction", "problem"),
    ("T184", "Sign or Symptom", "problem"),
    ("T033", "Finding", "problem"),
    ("T034", "Laboratory or Test Result", "problem"),
    ("T061", "Therapeutic or Preventive Procedure", "treatment"),
    ("T200", "Clinical Drug", "treatment"),
    ("T121", "Pharmacologic Substance", "treatment"),
    ("T195", "Antibiotic", "treatment"),
    ("T127", "Vitamin", "treatment"),
    ("T122", "Biomedical or Dental Material", "treatment"),
    ("T074", "Medical Device", "treatment"),
    ("T203", "Drug Delivery Device", "treatment"),
    ("T059", "Laboratory Procedure", "test"),
    ("T060", "Diagnostic Procedure", "test"),
    ("T201", "Clinical Attribute", "test"),
    ("T130", "Indicator, Reagent, or Diagnostic Aid", "test"),
)
"""(TUI, semantic type name, i2b2-2010 category), in priority order."""

FUNCTION_WORDS: frozenset[str] = frozenset(
    """a an the this that these those my your his her its our their whose which what
    some any no each every all both either neither another such
    i me you he him she it we us they them mine yours hers ours theirs
    myself yourself himself herself itself ourselves themselves""".split()
)
"""Determiners and pronouns moved out of the start of an entity (lower case)."""

ENGLISH_STOPWORDS = justext.get_stoplist("English")
_TUI_PRIORITY = {tui: rank for rank, (tui, _, _) in enumerate(SEMANTIC_TYPE_CATEGORIES)}
_NOT_PREFERRED = 10**8  # added to a CUI number: CUIs are C + 7 digits
INDEX_VERSION = 4
"""Bump when :func:`build_index` changes what it stores: older cached indexes are then rebuilt."""
_CUI_LIMIT = 10**7  # CUIs are C + 7 digits


class ConceptTable:
    """Per CUI number, a semantic type rank and English names, in flat arrays (a few bytes a concept).

    Concepts are sorted by number; ``names`` holds each concept's names as UTF-8, one per line, from
    ``name_offsets[i]`` to ``name_offsets[i + 1]``. Millions of Python strings and lists would take
    ten times the memory.
    """

    __slots__ = ("name_offsets", "names", "numbers", "ranks")

    def __init__(self, ranks: dict[int, int], names: dict[int, bytes]) -> None:
        """``names``: per CUI number, its names as UTF-8, one per line."""
        self.numbers = np.array(sorted(ranks), dtype=np.int64)
        self.ranks = np.array([ranks[number] for number in self.numbers.tolist()], dtype=np.int8)
        blocks = [names.get(number, b"") for number in self.numbers.tolist()]
        self.name_offsets = np.concatenate(([0], np.cumsum([len(block) for block in blocks], dtype=np.int64)))
        self.names = b"".join(blocks)

    @classmethod
    def from_arrays(
        cls, numbers: np.ndarray, ranks: np.ndarray, name_offsets: np.ndarray, names: bytes
    ) -> ConceptTable:
        """The table of these arrays (as :func:`write_index` stores them)."""
        table = cls.__new__(cls)
        table.numbers, table.ranks, table.name_offsets, table.names = numbers, ranks, name_offsets, names
        return table

    def _row(self, number: int) -> int | None:
        row = int(np.searchsorted(self.numbers, number))
        return row if row < len(self.numbers) and self.numbers[row] == number else None

    def rank(self, number: int) -> int | None:
        """The concept's row in :data:`SEMANTIC_TYPE_CATEGORIES`; None outside the mapped types."""
        row = self._row(number)
        return None if row is None else int(self.ranks[row])

    def names_of(self, number: int) -> list[str]:
        """The concept's English non-suppressed names in file order (empty when it has none)."""
        row = self._row(number)
        if row is None or self.name_offsets[row] == self.name_offsets[row + 1]:
            return []
        return self.names[self.name_offsets[row] : self.name_offsets[row + 1]].decode("utf-8").split("\n")


@dataclass(slots=True)
class UmlsIndex:
    """The matcher's dictionary and the concept table for semantic types and answer expansion.

    ``entries`` maps a normalised string to an int: -1 when it is only a proper prefix (whole tokens)
    of keys, so that matching extends a candidate only while a key can still follow; else
    ``(number * 32 + rank) * 2 + is_prefix`` for a key naming CUI ``number`` (``C0012345`` → 12345)
    of semantic type ``rank`` (its row in :data:`SEMANTIC_TYPE_CATEGORIES`). One dictionary for both
    keeps each string once.
    """

    entries: dict[str, int]
    concepts: ConceptTable
    source_sha256: dict[str, str]
    untyped: dict[str, int]
    """CUIs of English, non-suppressed MRCONSO rows that have no MRSTY row at all (a truncated or
    mismatched MRSTY.RRF), each with its first MRCONSO line: their concepts cannot be categorised."""

    def concept(self, key: str) -> int | None:
        """The CUI number a normalised string names; None when it is no key."""
        entry = self.entries.get(key, -1)
        return None if entry < 0 else entry >> (1 + _RANK_BITS)

    def semantic_type(self, cui: str) -> tuple[str, Category] | None:
        """The mapped semantic type name and category of ``cui``; None outside the mapped types."""
        rank = self.concepts.rank(_cui_number(cui))
        if rank is None:
            return None
        _, name, category = SEMANTIC_TYPE_CATEGORIES[rank]
        return name, category

    def synonyms(self, cui: str, original: str = "") -> list[str]:
        """English non-suppressed names of ``cui``, de-duplicated case-insensitively (first spelling
        kept), without ``original``; empty for a concept outside the mapped semantic types."""
        seen = {original.lower()}
        names = []
        for name in self.concepts.names_of(_cui_number(cui)):
            if name.lower() not in seen:
                seen.add(name.lower())
                names.append(name)
        return names

    def decode(self, entry: int) -> tuple[str, str, Category]:
        """The CUI, semantic type name and category of a key's entry (an entry >= 0 of :attr:`entries`)."""
        code = entry >> 1
        _, sem_type, category = SEMANTIC_TYPE_CATEGORIES[code & ((1 << _RANK_BITS) - 1)]
        return f"C{code >> _RANK_BITS:07d}", sem_type, category


_RANK_BITS = 5
"""Bits of an entry holding the semantic type rank (fewer than 32 mapped types)."""


def _cui_number(cui: str) -> int:
    return int(cui[1:])


def _is_useful_key(tokens: Sequence[str]) -> bool:
    if tokens[0] in FUNCTION_WORDS or len("".join(tokens)) < 2:
        return False
    if not any(char.isalpha() for token in tokens for char in token):
        return False
    return not all(token in ENGLISH_STOPWORDS or not token.isalnum() for token in tokens)


def build_index(mrconso: str | Path, mrsty: str | Path, *, source_sha256: dict[str, str] | None = None) -> UmlsIndex:
    """Build the dictionary from MRSTY.RRF and MRCONSO.RRF (two streaming passes); ``source_sha256``, the
    files' digests when the caller has them (else they are computed).

    The files are read as Arrow columns and filtered there (language, suppression, semantic type), so only
    the mapped concepts' names reach Python; a file the columnar reader cannot vouch for
    (:class:`NotPlainRrf`) is read row by row, which gives the same index or the error naming its line."""
    try:
        ranks, typed = _semantic_types(mrsty, columnar=True)
        names = _Names(ranks)
        untyped = _read_names_columnar(mrconso, names, typed)
    except NotPlainRrf:
        ranks, typed = _semantic_types(mrsty, columnar=False)
        names = _Names(ranks)
        untyped = _read_names_by_row(mrconso, names, typed)
    hashes = source_sha256 or rrf_sha256(mrconso, mrsty)
    entries, concepts = names.finish()
    return UmlsIndex(entries, concepts, hashes, untyped)


_NO_RANK = 127


def _semantic_types(mrsty: str | Path, *, columnar: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per CUI number, the best rank of its mapped semantic types (:data:`_NO_RANK` when none) and whether it
    has any MRSTY row."""
    ranks = np.full(_CUI_LIMIT, _NO_RANK, dtype=np.int8)
    typed = np.zeros(_CUI_LIMIT, dtype=bool)
    if columnar:
        tuis = pa.array(list(_TUI_PRIORITY))  # in rank order
        for _, batch in rrf_batches(mrsty, MRSTY_COLUMNS, ["CUI", "TUI"]):
            numbers = _cui_numbers(batch.column("CUI"))
            typed[numbers] = True
            rank = pc.index_in(batch.column("TUI"), value_set=tuis)
            mapped = rank.is_valid().to_numpy(zero_copy_only=False)
            np.minimum.at(ranks, numbers[mapped], rank.drop_null().to_numpy().astype(np.int8))
        return ranks, typed
    for semantic_type in read_mrsty(mrsty):
        number = _cui_number(semantic_type.cui)
        typed[number] = True
        rank = _TUI_PRIORITY.get(semantic_type.tui)
        if rank is not None:
            ranks[number] = min(rank, ranks[number])
    return ranks, typed


def _cui_numbers(cuis: pa.Array) -> np.ndarray:
    return pc.cast(pc.utf8_slice_codeunits(cuis, 1), pa.int64()).to_numpy()


def _read_names_columnar(mrconso: str | Path, names: _Names, typed: np.ndarray) -> dict[str, int]:
    """Feed the English non-suppressed names of mapped concepts to ``names``; returns the untyped CUIs."""
    untyped: dict[str, int] = {}
    wanted = ["CUI", "LAT", "TS", "STT", "ISPREF", "STR", "SUPPRESS"]
    for line, batch in rrf_batches(mrconso, MRCONSO_COLUMNS, wanted):
        english = pc.and_(pc.equal(batch.column("LAT"), "ENG"), pc.equal(batch.column("SUPPRESS"), "N"))
        rows = np.flatnonzero(english.to_numpy(zero_copy_only=False))
        numbers = _cui_numbers(batch.column("CUI").take(rows))
        mapped = names.ranks[numbers] != _NO_RANK
        cuis = batch.column("CUI")
        for row in rows[~mapped & ~typed[numbers]].tolist():
            untyped.setdefault(cuis[row].as_py(), line + row)
        kept = pa.array(rows[mapped])
        preferred = pc.and_(
            pc.and_(pc.equal(batch.column("TS").take(kept), "P"), pc.equal(batch.column("STT").take(kept), "PF")),
            pc.equal(batch.column("ISPREF").take(kept), "Y"),
        )
        names.add(numbers[mapped].tolist(), batch.column("STR").take(kept).to_pylist(), preferred.to_pylist())
    return untyped


def _read_names_by_row(mrconso: str | Path, names: _Names, typed: np.ndarray) -> dict[str, int]:
    """:func:`_read_names_columnar` reading row by row (any file the row reader accepts)."""
    untyped: dict[str, int] = {}
    for line_number, row in read_mrconso_lines(mrconso):
        if row.lat != "ENG" or row.suppress != "N":
            continue
        number = _cui_number(row.cui)
        if names.ranks[number] == _NO_RANK:
            if not typed[number]:
                untyped.setdefault(row.cui, line_number)
            continue
        names.add([number], [row.string], [row.ts == "P" and row.stt == "PF" and row.ispref == "Y"])
    return untyped


class _Names:
    """The mapped concepts' names, in file order: the dictionary entries and each concept's synonyms.

    While names are added, ``entries`` maps a key to ``ranked * 2 + is_prefix`` (``ranked``: the CUI number,
    plus :data:`_NOT_PREFERRED` unless the string is the concept's preferred name) and a proper prefix of
    keys to -1, in one dictionary: :meth:`finish` rewrites the values in place.
    """

    def __init__(self, ranks: np.ndarray) -> None:
        self.ranks = ranks
        self.entries: dict[str, int] = {}
        self.synonyms: dict[int, bytes] = {}
        """Per CUI number, its names (de-duplicated in each group of rows) as UTF-8, one per line."""
        self.group_cui, self.group_names = -1, set[str]()  # MRCONSO is grouped by CUI: de-duplicate in a group
        self.group_strings: list[str] = []

    def add(self, numbers: list[int], strings: list[str], preferred: list[bool]) -> None:
        entries = self.entries
        group_cui, group_names, group_strings = self.group_cui, self.group_names, self.group_strings
        for number, string, is_preferred in zip(numbers, strings, preferred, strict=True):
            if number != group_cui:
                self._keep_synonyms(group_cui, group_strings)
                group_cui, group_names, group_strings = number, set(), []
            lowered = string.lower()
            if lowered not in group_names:
                group_names.add(lowered)
                group_strings.append(string)
            # lower-casing ASCII moves no token boundary; other scripts are tokenised before lower-casing
            tokens = token_strings(lowered) if string.isascii() else [t.lower() for t in token_strings(string)]
            if not tokens or not _is_useful_key(tokens):
                continue
            ranked = number if is_preferred else number + _NOT_PREFERRED
            key = " ".join(tokens)
            known = entries.get(key)
            if known is None or known == -1:
                entries[key] = ranked << 1 | (known == -1)
            elif ranked < known >> 1:
                entries[key] = ranked << 1 | (known & 1)
            if known is not None:
                continue  # a key or prefix seen before: its own prefixes are marked already
            for end in range(1, len(tokens)):
                prefix = " ".join(tokens[:end])
                known = entries.setdefault(prefix, -1)
                if known >= 0 and not known & 1:
                    entries[prefix] = known | 1
        self.group_cui, self.group_names, self.group_strings = group_cui, group_names, group_strings

    def _keep_synonyms(self, number: int, strings: list[str]) -> None:
        if strings:
            block = "\n".join(strings).encode("utf-8")
            known = self.synonyms.get(number)
            self.synonyms[number] = block if known is None else known + b"\n" + block

    def finish(self) -> tuple[dict[str, int], ConceptTable]:
        """The matcher's entries (see :class:`UmlsIndex`) and the concept table; empties this."""
        self._keep_synonyms(self.group_cui, self.group_strings)
        typed_numbers = np.flatnonzero(self.ranks != _NO_RANK)
        semantic_types = dict(zip(typed_numbers.tolist(), self.ranks[typed_numbers].tolist(), strict=True))
        entries = self.entries
        for key, value in entries.items():
            if value >= 0:
                number = (value >> 1) % _NOT_PREFERRED
                entries[key] = ((number << _RANK_BITS | semantic_types[number]) << 1) | (value & 1)
        concepts = ConceptTable(semantic_types, self.synonyms)
        self.entries, self.synonyms, self.group_strings = {}, {}, []
        return entries, concepts


def rrf_sha256(mrconso: str | Path, mrsty: str | Path) -> dict[str, str]:
    """The SHA-256 of both RRF files, by file name."""
    return {"MRCONSO.RRF": file_sha256(mrconso), "MRSTY.RRF": file_sha256(mrsty)}
