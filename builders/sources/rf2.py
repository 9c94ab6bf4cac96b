"""SNOMED CT RF2 Snapshot reader: active concepts, FSNs, synonyms, is-a graph, hierarchies, depth.

RF2 files are UTF-8, tab separated, with a header row and CRLF line ends; terms may contain
quote characters, so lines are split on tabs with no quote processing. Only the active rows of
a Snapshot are used. A concept's hierarchy is the top-level hierarchy (Clinical finding,
Procedure, Body structure) it descends from through active is-a relationships (transitive
closure); its depth is the length of the shortest is-a chain up to the root concept.
"""

from __future__ import annotations

import fnmatch
import re
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from clinical_corpora.builders.sources.discovery import walk_files, warn_left_out
from clinical_corpora.builders.sources.text_lines import utf8_lines
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.labels import Hierarchy

ROOT_CONCEPT_ID = 138875005
IS_A_TYPE_ID = 116680003
FSN_TYPE_ID = 900000000000003001
SYNONYM_TYPE_ID = 900000000000013009

HIERARCHY_ROOTS: Mapping[Hierarchy, int] = MappingProxyType(
    {"finding": 404684003, "procedure": 71388002, "body_structure": 123037004}
)
"""The challenge's three sub-hierarchies: Clinical finding, Procedure, Body structure."""

CONCEPT_COLUMNS = ("id", "effectiveTime", "active", "moduleId", "definitionStatusId")
DESCRIPTION_COLUMNS = (
    "id",
    "effectiveTime",
    "active",
    "moduleId",
    "conceptId",
    "languageCode",
    "typeId",
    "term",
    "caseSignificanceId",
)
RELATIONSHIP_COLUMNS = (
    "id",
    "effectiveTime",
    "active",
    "moduleId",
    "sourceId",
    "destinationId",
    "relationshipGroup",
    "typeId",
    "characteristicTypeId",
    "modifierId",
)

_SEMANTIC_TAG = re.compile(r"\(([^()]+)\)\s*$")


@dataclass(frozen=True)
class SnapshotFiles:
    """The three RF2 Snapshot files the reader needs."""

    concept: Path
    description: Path
    relationship: Path


@dataclass(frozen=True)
class Concept:
    """What a release needs to know about one active concept."""

    concept_id: int
    fsn: str
    semantic_tag: str
    synonyms: tuple[str, ...]
    hierarchy: Hierarchy | None
    depth: int | None


@dataclass(frozen=True)
class Terminology:
    """An RF2 Snapshot reduced to what entity linking needs (all keyed by concept id)."""

    active: frozenset[int]
    inactive: frozenset[int]
    fsn: Mapping[int, str]
    semantic_tag: Mapping[int, str]
    synonyms: Mapping[int, tuple[str, ...]]
    parents: Mapping[int, tuple[int, ...]]
    hierarchy: Mapping[int, Hierarchy]
    depth: Mapping[int, int]

    def concept(self, concept_id: int) -> Concept:
        """The active concept ``concept_id`` (KeyError if it is not an active concept)."""
        if concept_id not in self.active:
            raise KeyError(concept_id)
        return Concept(
            concept_id=concept_id,
            fsn=self.fsn[concept_id],
            semantic_tag=self.semantic_tag[concept_id],
            synonyms=self.synonyms.get(concept_id, ()),
            hierarchy=self.hierarchy.get(concept_id),
            depth=self.depth.get(concept_id),
        )


def locate_snapshot_files(folder: str | Path) -> SnapshotFiles:
    """Find the Concept, Description and Relationship Snapshot files under ``folder``.

    ``folder`` may be the release root, its ``Snapshot`` folder or ``Snapshot/Terminology``.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise SourceError(folder, "expected an RF2 release folder holding a Snapshot")
    files = walk_files(folder)
    found = {
        name: [path for path in files if fnmatch.fnmatchcase(path.name.lower(), pattern.lower())]
        for name, pattern in (
            ("concept", "sct2_Concept_Snapshot*.txt"),
            ("description", "sct2_Description_Snapshot*.txt"),
            ("relationship", "sct2_Relationship_Snapshot*.txt"),
        )
    }
    read = {path for paths in found.values() for path in paths}
    left_out = [path.relative_to(folder).as_posix() for path in files if path not in read]
    if left_out:
        warn_left_out(folder, left_out, "a Concept, Description or Relationship Snapshot file")
    for name, paths in found.items():
        if len(paths) != 1:
            pattern = f"sct2_{name.capitalize()}_Snapshot*.txt"
            raise SourceError(folder, f"expected exactly one {pattern}, found {[str(path) for path in paths]}")
    return SnapshotFiles(**{name: paths[0] for name, paths in found.items()})


def load_snapshot(folder: str | Path) -> Terminology:
    """Read an RF2 Snapshot folder into a :class:`Terminology` with hierarchies and depths."""
    files = locate_snapshot_files(folder)
    active, inactive = _read_concepts(files.concept)
    fsn, semantic_tag, synonyms = _read_descriptions(files.description, active, inactive)
    missing_fsn = active - fsn.keys()
    if missing_fsn:
        raise SourceError(
            files.description,
            f"active concept without an active FSN ({len(missing_fsn)} such concepts)",
            record=str(min(missing_fsn)),
        )
    for concept_id in (ROOT_CONCEPT_ID, *HIERARCHY_ROOTS.values()):
        if concept_id not in active:
            raise SourceError(files.concept, "expected an active concept", record=str(concept_id))
    parents = _read_is_a(files.relationship, active)
    children = _children(parents)
    return Terminology(
        active=frozenset(active),
        inactive=frozenset(inactive),
        fsn=MappingProxyType(fsn),
        semantic_tag=MappingProxyType(semantic_tag),
        synonyms=MappingProxyType({concept_id: tuple(terms) for concept_id, terms in synonyms.items()}),
        parents=MappingProxyType({concept_id: tuple(ids) for concept_id, ids in parents.items()}),
        hierarchy=MappingProxyType(_hierarchies(files.relationship, children)),
        depth=MappingProxyType(_depths_from_root(children)),
    )


def semantic_tag_of(fsn: str) -> str | None:
    """The semantic tag in an FSN's trailing parenthesis: ``"Asthma (disorder)"`` → ``"disorder"``."""
    match = _SEMANTIC_TAG.search(fsn)
    return match.group(1) if match else None


def _rows(path: Path, columns: tuple[str, ...]) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line number, fields)`` of a tab-separated RF2 file after checking its header."""
    lines = utf8_lines(path)
    _, first = next(lines, (1, ""))
    header = first.rstrip("\r\n").lstrip("\ufeff").split("\t")
    if header != list(columns):
        raise SourceError(
            path, f"expected the RF2 header {' '.join(columns)} (tab separated), found {' '.join(header)}", line=1
        )
    for line_number, line in lines:
        fields = line.rstrip("\r\n").split("\t")
        if len(fields) != len(columns):
            found = f"expected {len(columns)} tab-separated fields, found {len(fields)}"
            raise SourceError(path, found, line=line_number)
        yield line_number, fields


def _is_active(path: Path, line: int, value: str) -> bool:
    if value == "1":
        return True
    if value == "0":
        return False
    raise SourceError(path, f"column active: expected 0 or 1, found {value!r}", line=line)


def _sctid(path: Path, line: int, column: str, value: str) -> int:
    if not value.isdigit() or not 6 <= len(value) <= 18:
        raise SourceError(path, f"column {column}: expected an SCTID (6-18 digits), found {value!r}", line=line)
    return int(value)


def _read_concepts(path: Path) -> tuple[set[int], set[int]]:
    active: set[int] = set()
    inactive: set[int] = set()
    for line, fields in _rows(path, CONCEPT_COLUMNS):
        concept_id = _sctid(path, line, "id", fields[0])
        (active if _is_active(path, line, fields[2]) else inactive).add(concept_id)
    return active, inactive


def _read_descriptions(
    path: Path, active: set[int], inactive: set[int]
) -> tuple[dict[int, str], dict[int, str], dict[int, list[str]]]:
    fsn: dict[int, str] = {}
    fsn_line: dict[int, int] = {}
    semantic_tag: dict[int, str] = {}
    synonyms: dict[int, list[str]] = {}
    for line, fields in _rows(path, DESCRIPTION_COLUMNS):
        if not _is_active(path, line, fields[2]):
            continue
        concept_id = _sctid(path, line, "conceptId", fields[4])
        if concept_id not in active:
            if concept_id in inactive:
                continue
            raise SourceError(path, f"conceptId {concept_id} is not in the concept file", line=line)
        type_id = _sctid(path, line, "typeId", fields[6])
        term = fields[7]
        if type_id == SYNONYM_TYPE_ID:
            synonyms.setdefault(concept_id, []).append(term)
        elif type_id == FSN_TYPE_ID:
            if concept_id in fsn:
                raise SourceError(
                    path,
                    f"a second active FSN for concept {concept_id} (first at line {fsn_line[concept_id]})",
                    line=line,
                )
            tag = semantic_tag_of(term)
            if tag is None:
                raise SourceError(path, f"FSN {term!r} has no semantic tag; expected 'term (tag)'", line=line)
            fsn[concept_id], fsn_line[concept_id], semantic_tag[concept_id] = term, line, tag
    return fsn, semantic_tag, synonyms


def _read_is_a(path: Path, active: set[int]) -> dict[int, list[int]]:
    """Active is-a edges as child → parents; both ends must be active concepts."""
    parents: dict[int, list[int]] = {}
    is_a = str(IS_A_TYPE_ID)
    for line, fields in _rows(path, RELATIONSHIP_COLUMNS):
        if fields[7] != is_a or not _is_active(path, line, fields[2]):
            continue
        child = _sctid(path, line, "sourceId", fields[4])
        parent = _sctid(path, line, "destinationId", fields[5])
        for role, concept_id in (("sourceId", child), ("destinationId", parent)):
            if concept_id not in active:
                raise SourceError(path, f"active is-a row with {role} {concept_id}, not an active concept", line=line)
        if child == parent:
            raise SourceError(
                path,
                f"active is-a row from concept {child} to itself: a concept is not a kind of itself "
                "(SNOMED CT's is-a hierarchy has no cycles)",
                line=line,
            )
        parents.setdefault(child, []).append(parent)
    _check_acyclic(path, parents)
    return parents


def _check_acyclic(path: Path, parents: Mapping[int, list[int]]) -> None:
    """A SourceError naming a cycle of active is-a edges (``A is-a B is-a A``), found depth first."""
    state: dict[int, bool] = {}  # concept → True while on the current chain, False once finished
    for start in parents:
        if start in state:
            continue
        chain, stack = [start], [iter(parents[start])]
        state[start] = True
        while stack:
            parent = next(stack[-1], None)
            if parent is None:
                state[chain.pop()] = False
                stack.pop()
            elif state.get(parent) is True:
                cycle = [*chain[chain.index(parent) :], parent]
                raise SourceError(
                    path,
                    "active is-a rows make a cycle (SNOMED CT's is-a hierarchy has none): "
                    + " is-a ".join(map(str, cycle)),
                    record=str(parent),
                )
            elif parent not in state:
                state[parent] = True
                chain.append(parent)
                stack.append(iter(parents.get(parent, ())))


def _children(parents: Mapping[int, list[int]]) -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for child, child_parents in parents.items():
        for parent in child_parents:
            children.setdefault(parent, []).append(child)
    return children


def _hierarchies(path: Path, children: Mapping[int, list[int]]) -> dict[int, Hierarchy]:
    """The challenge hierarchy of every concept under one of the three tops (they must not overlap)."""
    hierarchy: dict[int, Hierarchy] = {}
    for name, top in HIERARCHY_ROOTS.items():
        for concept_id in _descendants_or_self(top, children):
            if concept_id in hierarchy:
                raise SourceError(
                    path,
                    f"is-a chains put this concept under both {hierarchy[concept_id]} and {name}; "
                    "expected the top-level hierarchies to be disjoint",
                    record=str(concept_id),
                )
            hierarchy[concept_id] = name
    return hierarchy


def _descendants_or_self(top: int, children: Mapping[int, list[int]]) -> set[int]:
    reached = {top}
    stack = [top]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in reached:
                reached.add(child)
                stack.append(child)
    return reached


def _depths_from_root(children: Mapping[int, list[int]]) -> dict[int, int]:
    """Breadth-first search down from the root: the first visit is the shortest is-a chain."""
    depth = {ROOT_CONCEPT_ID: 0}
    queue = deque([ROOT_CONCEPT_ID])
    while queue:
        concept_id = queue.popleft()
        child_depth = depth[concept_id] + 1
        for child in children.get(concept_id, ()):
            if child not in depth:
                depth[child] = child_depth
                queue.append(child)
    return depth


__all__ = [
    "CONCEPT_COLUMNS",
    "DESCRIPTION_COLUMNS",
    "FSN_TYPE_ID",
    "HIERARCHY_ROOTS",
    "IS_A_TYPE_ID",
    "RELATIONSHIP_COLUMNS",
    "ROOT_CONCEPT_ID",
    "SYNONYM_TYPE_ID",
    "Concept",
    "Hierarchy",
    "SnapshotFiles",
    "Terminology",
    "load_snapshot",
    "locate_snapshot_files",
    "semantic_tag_of",
]
