"""i2b2/VA 2011 chains as the reference reads them: one reading of a note's chain lines and identity pairs.

Real files disagree with themselves in two ways (Uzuner et al. 2012 release, as read through the ODIE
layout): one concept written in two chain lines whose members the pairs file links together (the two lines
describe one entity), and an empty chains file next to a pairs file that links concepts. The reading here:

- chain lines that share a concept are one chain, joined with a warning naming both lines; two lines of
  different coref types that share a concept have no common reading, and the later line is a problem;
- an empty chains file with pairs gives the chains the identity pairs join (a warning);
- otherwise a pair must link two members of one chain: a pair across chains, or naming a concept in no
  chain, is a problem of its own, and each chain is what the remaining pairs join of it;
- but a chain whose pairs were lost with lines left out (a quarantined concept and the pairs naming it) stays
  whole minus those members, as its chain line says: each member the remaining pairs leave apart is paired with
  the member before it (a change), so MUC and B³ see the entity the file annotates.

A problem is one line left out (quarantined by the builder), never the note. Every line read otherwise than
written is a :class:`ReaderChange` of one of the kinds below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from clinical_corpora.core.errors import SourceError, excerpt
from clinical_corpora.core.reader_changes import ReaderChange
from clinical_corpora.core.union_find import UnionFind

QUOTE_INSIDE_TOKENS = "quote_inside_tokens"
"""A concept's quoted text lies inside the tokens its position covers (``m.d`` on ``M.D.``): read at its position."""
QUOTE_UNLIKE_TOKENS = "quote_unlike_tokens"
"""A concept's quoted text is not the tokens its position covers (``he`` on ``Heis``): read at its position."""
CHAIN_LINES_JOINED = "chain_lines_joined"
"""Two chain lines sharing a concept, read as one chain."""
CHAINS_FROM_PAIRS = "chains_from_pairs"
"""An empty chains file beside a pairs file: the chains are what the identity pairs join."""
CHAIN_KEPT_WHOLE = "chain_kept_whole"
"""A chain whose pairs were lost with lines left out: a member paired with the member before it."""


@dataclass(frozen=True)
class Concept:
    """A mention: character offsets into the document text (end exclusive) and its type; where it was read
    (the concepts file and line, when read from one) does not take part in comparisons."""

    start: int
    end: int
    type: str
    text: str
    source: str | None = field(default=None, compare=False)
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Chain:
    """Concepts referring to one entity, in file order (grounding instance first)."""

    type: str
    concepts: tuple[Concept, ...]


@dataclass(frozen=True)
class CorefPair:
    antecedent: Concept
    anaphor: Concept
    type: str


@dataclass(frozen=True)
class ChainLine:
    """The members one line of a chains file names (those that could be read), with its line number."""

    line: int
    type: str
    members: tuple[Concept, ...]


@dataclass(frozen=True)
class PairLine:
    """One pair of a pairs file with its line number."""

    line: int
    pair: CorefPair


@dataclass
class ChainReading:
    """The chains and pairs of one note, and what reading them took: problems (lines left out) and changes
    (lines read otherwise than written)."""

    chains: list[Chain]
    pairs: list[CorefPair]
    problems: list[SourceError] = field(default_factory=list)
    changes: list[ReaderChange] = field(default_factory=list)


@dataclass
class _Group:
    """Chain lines read as one chain."""

    type: str
    lines: list[int]
    members: list[Concept]


def read_chains(
    chain_lines: list[ChainLine] | None,
    pair_lines: list[PairLine] | None,
    chains_path: Path,
    pairs_path: Path,
    explained: bool,
) -> ChainReading:
    """One reading of a note's chain lines and pairs (each ``None`` when its file holds no line: an empty chains
    file, no pairs file or an empty one). ``explained`` says problems were already found in the note: a chain the
    pairs split is then their consequence, else it is a problem of its own."""
    reading = ChainReading(chains=[], pairs=[])
    groups = _join_shared(chain_lines or [], chains_path, reading)
    if pair_lines is None:
        reading.chains = [Chain(group.type, tuple(group.members)) for group in groups if len(group.members) > 1]
        return reading
    linking = []
    for pair_line in pair_lines:
        if pair_line.pair.antecedent == pair_line.pair.anaphor:
            message = f"pair links concept {excerpt(pair_line.pair.anaphor.text)} to itself"
            reading.problems.append(SourceError(pairs_path, message, line=pair_line.line))
        else:
            linking.append(pair_line)
    if chain_lines is None and linking:
        return _from_pairs(linking, chains_path, pairs_path, reading)
    group_of = {member: index for index, group in enumerate(groups) for member in group.members}
    for pair_line in linking:
        problem = _pair_problem(pair_line, group_of, groups)
        if problem is None:
            reading.pairs.append(pair_line.pair)
        else:
            reading.problems.append(SourceError(pairs_path, problem, line=pair_line.line))
    explained = explained or bool(reading.problems)
    for group in groups:
        parts = _joined_by(group.members, reading.pairs)
        if [set(part) for part in parts] == [set(group.members)] or len(group.members) < 2:
            reading.chains.extend(Chain(group.type, tuple(part)) for part in parts)
        elif explained:
            _keep_whole(group, chains_path, reading)
        else:
            reading.chains.extend(Chain(group.type, tuple(part)) for part in parts)
            reading.problems.append(
                SourceError(
                    chains_path,
                    f"the pairs file joins {_count(parts)} of this chain's {len(group.members)} members; released "
                    "as the chains the pairs join",
                    line=group.lines[0],
                )
            )
    return reading


def _keep_whole(group: _Group, chains_path: Path, reading: ChainReading) -> None:
    """A chain the remaining pairs leave in parts because lines were left out: whole, each member the pairs leave
    apart paired with the member before it (a change naming both)."""
    members, joined = set(group.members), UnionFind(group.members)
    for pair in reading.pairs:
        if pair.antecedent in members and pair.anaphor in members:
            joined.union(pair.antecedent, pair.anaphor)
    first = group.members[0]
    for antecedent, anaphor in zip(group.members, group.members[1:], strict=False):
        if joined.find(anaphor) != joined.find(first):
            joined.union(antecedent, anaphor)
            reading.pairs.append(CorefPair(antecedent, anaphor, group.type))
            reading.changes.append(
                ReaderChange(
                    CHAIN_KEPT_WHOLE,
                    str(chains_path),
                    f"the pairs joining {excerpt(anaphor.text)} to this chain were left out: paired with "
                    f"{excerpt(antecedent.text)}, the member before it",
                    group.lines[0],
                )
            )
    reading.chains.append(Chain(group.type, tuple(group.members)))


def _join_shared(chain_lines: list[ChainLine], path: Path, reading: ChainReading) -> list[_Group]:
    """Chain lines sharing a concept joined into one group (a warning naming both lines); a line of another
    coref type sharing a concept is a problem and left out."""
    groups: list[_Group] = []
    for chain_line in chain_lines:
        touching = [group for group in groups if set(group.members) & set(chain_line.members)]
        other_type = next((group for group in touching if group.type != chain_line.type), None)
        if other_type is not None:
            reading.problems.append(
                SourceError(
                    path,
                    f"chain of type {chain_line.type!r} shares {_shared(other_type.members, chain_line.members)} "
                    f"with the chain of type {other_type.type!r} on line {other_type.lines[0]}; no reading joins "
                    "them, this line is left out",
                    line=chain_line.line,
                )
            )
            continue
        joined = _Group(chain_line.type, [], [])
        for group in touching:
            reading.changes.append(
                ReaderChange(
                    CHAIN_LINES_JOINED,
                    str(path),
                    f"shares {_shared(group.members, chain_line.members)} with the chain on line {group.lines[0]}: "
                    "the two lines are read as one chain",
                    chain_line.line,
                )
            )
            joined.lines += group.lines
            joined.members += [m for m in group.members if m not in joined.members]
        joined.lines.append(chain_line.line)
        joined.members += [m for m in chain_line.members if m not in joined.members]
        position = groups.index(touching[0]) if touching else len(groups)
        groups = [group for group in groups if group not in touching]
        groups.insert(min(position, len(groups)), joined)
    return groups


def _from_pairs(pair_lines: list[PairLine], chains_path: Path, pairs_path: Path, reading: ChainReading) -> ChainReading:
    """The chains of an empty chains file: what the identity pairs join (each typed by its first pair)."""
    reading.pairs = [pair_line.pair for pair_line in pair_lines]
    type_of: dict[Concept, str] = {}
    for pair in reading.pairs:
        type_of.setdefault(pair.antecedent, pair.type)
    parts = _joined_by([m for pair in reading.pairs for m in (pair.antecedent, pair.anaphor)], reading.pairs)
    reading.chains = [Chain(type_of.get(part[0], reading.pairs[0].type), tuple(part)) for part in parts]
    reading.changes.append(
        ReaderChange(
            CHAINS_FROM_PAIRS,
            str(chains_path),
            f"the chains file is empty while {pairs_path.name} links {len(pair_lines)} pair(s): "
            f"{_count(parts)} read from the identity pairs",
        )
    )
    return reading


def _pair_problem(pair_line: PairLine, group_of: dict[Concept, int], groups: list[_Group]) -> str | None:
    """Why a pair has no place in the chains, or None when it links two members of one chain."""
    pair = pair_line.pair
    outside = [concept for concept in (pair.antecedent, pair.anaphor) if concept not in group_of]
    if outside:
        return f"pair names concept {excerpt(outside[0].text)}, which is in no chain of the chains file"
    antecedent, anaphor = group_of[pair.antecedent], group_of[pair.anaphor]
    if antecedent != anaphor:
        return (
            f"pair links {excerpt(pair.antecedent.text)} (chain on line {groups[antecedent].lines[0]}) to "
            f"{excerpt(pair.anaphor.text)} (chain on line {groups[anaphor].lines[0]}), which the chains file "
            "keeps apart"
        )
    return None


def _joined_by(members: list[Concept], pairs: list[CorefPair]) -> list[list[Concept]]:
    """The parts of ``members`` that the pairs join (two members or more each), members in the given order."""
    known = set(members)
    joined = UnionFind(members)
    for pair in pairs:
        if pair.anaphor in known and pair.antecedent in known:
            joined.union(pair.anaphor, pair.antecedent)
    return [part for part in joined.groups() if len(part) > 1]


def _shared(first: list[Concept], second: tuple[Concept, ...]) -> str:
    shared = [concept for concept in first if concept in second]
    return "concept " + ", ".join(excerpt(concept.text) for concept in shared)


def _count(parts: list[list[Concept]]) -> str:
    return f"{sum(map(len, parts))} member(s) in {len(parts)} chain(s)"
