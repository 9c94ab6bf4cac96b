"""Coreference metrics computed as the CoNLL-2012 reference scorer (v8.01) computes them.

Metrics: MUC (Vilain et al. 1995), B³ (Bagga & Baldwin 1998), CEAF-m and CEAF-e (Luo 2005),
BLANC with the Luo et al. (2014) extension to system mentions, LEA (Moosavi & Strube 2016),
and the CoNLL F1 (mean of the MUC, B³ and CEAF-e F1).

A document's chains are an iterable of chains, each an iterable of hashable mention ids
(token spans, annotation ids, ...). Every metric has a ``*_counts`` function returning its
numerators and denominators; single-document scores and multi-document scores both go through
those counts, and documents are combined by summing counts, as the reference does (a
micro-average, not the mean of per-document scores).

Choices that follow the reference scorer's behaviour (``lib/CorScorer.pm``):

- Mentions are matched by identity (the reference's exact span match). A response mention
  absent from the key ("twinless") is kept: it adds to the precision denominators of every
  metric (B³ mentions, CEAF-m mentions, CEAF-e entities, MUC links, BLANC links, LEA
  entities), even as a response singleton, and never counts as correct.
- A key mention the response lacks counts against recall only.
- A key mention repeated in the response keeps its first occurrence (in chain order) and is
  removed from later chains; a chain left empty is dropped (reference: "Repeated mention in
  the response"). The reference refuses to score a run with more than 10 repeats; this module
  scores it and counts them (``align(...).repeated_response_mentions``) for the caller.
- A twinless mention repeated in the response is kept at every occurrence, as the reference
  keeps it (its repeat check only sees mentions already matched to the key): each occurrence
  adds to its chain's size and to the precision denominators, and BLANC counts the distinct
  mention pairs the repeats form. ``dedupe_twinless=True`` removes those repeats like key
  mentions' instead, a documented deviation from the reference.
- A mention repeated in the key is an error here (the reference prints a warning and then
  scores an inconsistent key); so is an empty chain.
- Scores with a zero denominator are 0; F1 is 0 when recall + precision is 0. So MUC is 0
  for a key made only of singletons, even against an identical response.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import NamedTuple, Protocol, Self, TypeVar

import numpy as np

from clinical_corpora.core.counts import f_measure, ratio
from clinical_corpora.core.errors import SourceError
from clinical_corpora.validation.metrics.coref_align import NO_CHAINS, ChainOverlap, Chains, Documents, align

METRIC_NAMES = ("muc", "b_cubed", "ceaf_m", "ceaf_e", "blanc", "lea")
CONLL_METRICS = ("muc", "b_cubed", "ceaf_e")


class Score(NamedTuple):
    """Recall, precision and F1, each in [0, 1]."""

    recall: float
    precision: float
    f1: float


class MetricCounts(Protocol):
    """What every metric's counts offer: addition across documents, and the final score."""

    def __add__(self, other: Self) -> Self: ...

    def score(self) -> Score: ...


_Fields = TypeVar("_Fields", "Counts", "BlancCounts")


def _add_fields(left: _Fields, right: _Fields) -> _Fields:
    """Field-wise sum, the one way documents are combined."""
    return type(left)(*(a + b for a, b in zip(astuple(left), astuple(right), strict=True)))


@dataclass(frozen=True)
class Counts:
    """Numerators and denominators of recall and precision (MUC, B³, CEAF, LEA).

    Recall and precision have different numerators here, unlike ``core.counts.PRFCounts``; the
    ratios and the F1 are that module's.
    """

    recall_num: float = 0.0
    recall_den: float = 0.0
    precision_num: float = 0.0
    precision_den: float = 0.0

    def __add__(self, other: Counts) -> Counts:
        return _add_fields(self, other)

    def score(self) -> Score:
        recall = ratio(self.recall_num, self.recall_den)
        precision = ratio(self.precision_num, self.precision_den)
        return Score(recall, precision, f_measure(precision, recall))


@dataclass(frozen=True)
class BlancCounts:
    """Link counts of BLANC: correct, key and response coreference and non-coreference links."""

    coref_correct: int = 0
    coref_key: int = 0
    coref_response: int = 0
    non_coref_correct: int = 0
    non_coref_key: int = 0
    non_coref_response: int = 0

    def __add__(self, other: BlancCounts) -> BlancCounts:
        return _add_fields(self, other)

    def score(self) -> Score:
        """Mean of the coreference-link and non-coreference-link scores (F: mean of the Fs).

        As the reference, when the key has no coreference links only the non-coreference
        part counts, when it has no non-coreference links only the coreference part counts,
        and when it has neither the score is 0.
        """
        coref = Counts(self.coref_correct, self.coref_key, self.coref_correct, self.coref_response)
        non_coref = Counts(
            self.non_coref_correct,
            self.non_coref_key,
            self.non_coref_correct,
            self.non_coref_response,
        )
        if not self.coref_key and not self.non_coref_key:
            return Score(0.0, 0.0, 0.0)
        if not self.coref_key:
            return non_coref.score()
        if not self.non_coref_key:
            return coref.score()
        return Score(*((a + b) / 2 for a, b in zip(coref.score(), non_coref.score(), strict=True)))


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def muc_counts(overlap: ChainOverlap) -> Counts:
    """MUC: links (chain size - 1) recovered.

    Correct links: each (key chain, response chain) cell sharing n mentions gives n - 1.
    Singleton chains have no links, so twinless response singletons change nothing.
    """
    correct = sum(n - 1 for n in overlap.shared.values())
    key_links = sum(size - 1 for size in overlap.key_sizes)
    response_links = sum(size - 1 for size in overlap.response_sizes)
    return Counts(correct, key_links, correct, response_links)


def b_cubed_counts(overlap: ChainOverlap) -> Counts:
    """B³: per mention, the share of its chain found in the other side's chain.

    Denominators are all key mentions and all response mentions, twinless ones included.
    """
    recall_num = sum(n * n / overlap.key_sizes[i] for (i, _), n in overlap.shared.items())
    precision_num = sum(n * n / overlap.response_sizes[j] for (_, j), n in overlap.shared.items())
    return Counts(recall_num, sum(overlap.key_sizes), precision_num, sum(overlap.response_sizes))


Similarity = Callable[[int, int, int], float]


def _optimal_similarity(overlap: ChainOverlap, similarity: Similarity) -> float:
    """Total similarity of the best one-to-one alignment of key and response chains.

    The reference runs the Hungarian algorithm (Algorithm::Munkres) on the full key × response
    matrix; the optimum is the same when each connected group of overlapping chains is solved
    on its own (chains sharing no mention have similarity 0), which keeps this near-linear.
    """
    if not overlap.shared:
        return 0.0
    # imported here: scipy.optimize costs ~0.5 s to import, and only CEAF needs it (not a build's imports)
    from scipy.optimize import linear_sum_assignment
    from scipy.sparse import coo_array
    from scipy.sparse.csgraph import connected_components

    # Graph nodes: key chain i is node i, response chain j is node len(key_sizes) + j.
    cells = list(overlap.shared.items())
    rows = [i for (i, _), _ in cells]
    cols = [len(overlap.key_sizes) + j for (_, j), _ in cells]
    nodes = len(overlap.key_sizes) + len(overlap.response_sizes)
    graph = coo_array((np.ones(len(cells)), (rows, cols)), shape=(nodes, nodes))
    _, labels = connected_components(graph, directed=False)

    groups: dict[int, list[tuple[tuple[int, int], int]]] = defaultdict(list)
    for row, cell in zip(rows, cells, strict=True):
        groups[labels[row]].append(cell)
    total = 0.0
    for group in groups.values():
        if len(group) == 1:
            (i, j), n = group[0]
            total += similarity(n, overlap.key_sizes[i], overlap.response_sizes[j])
            continue
        group_rows = {i: n for n, i in enumerate({i for (i, _), _ in group})}
        group_cols = {j: n for n, j in enumerate({j for (_, j), _ in group})}
        matrix = np.zeros((len(group_rows), len(group_cols)))
        for (i, j), n in group:
            matrix[group_rows[i], group_cols[j]] = similarity(n, overlap.key_sizes[i], overlap.response_sizes[j])
        chosen_rows, chosen_cols = linear_sum_assignment(matrix, maximize=True)
        total += float(matrix[chosen_rows, chosen_cols].sum())
    return total


def ceaf_m_counts(overlap: ChainOverlap) -> Counts:
    """Mention-based CEAF: similarity = shared mentions; denominators = mention counts."""
    aligned = _optimal_similarity(overlap, lambda shared, _key, _response: shared)
    return Counts(aligned, sum(overlap.key_sizes), aligned, sum(overlap.response_sizes))


def ceaf_e_counts(overlap: ChainOverlap) -> Counts:
    """Entity-based CEAF: similarity = 2|K∩R| / (|K| + |R|); denominators = chain counts.

    Every response chain counts in the precision denominator, twinless singletons included.
    """
    aligned = _optimal_similarity(
        overlap, lambda shared, key_size, response_size: 2 * shared / (key_size + response_size)
    )
    return Counts(aligned, len(overlap.key_sizes), aligned, len(overlap.response_sizes))


def blanc_counts(overlap: ChainOverlap) -> BlancCounts:
    """BLANC links as the reference enumerates them, counted without enumerating pairs.

    Coreference links are mention pairs within a chain; non-coreference links are pairs
    across chains of the same side, twinless mentions included (Luo et al. 2014).
    """
    coref_key = sum(_pairs(size) for size in overlap.key_sizes)
    coref_response = sum(_pairs(size) for size in overlap.response_sizes)
    non_coref_response = _pairs(sum(overlap.response_sizes)) - coref_response
    if overlap.response_links is not None:
        coref_response, non_coref_response = overlap.response_links
    coref_correct = sum(_pairs(n) for n in overlap.shared.values())

    shared_per_key: Counter[int] = Counter()
    shared_per_response: Counter[int] = Counter()
    for (i, j), n in overlap.shared.items():
        shared_per_key[i] += n
        shared_per_response[j] += n
    shared_mentions = sum(overlap.shared.values())
    # Pairs of shared mentions, less those in one key chain or one response chain
    # (inclusion-exclusion: pairs in both were subtracted twice).
    non_coref_correct = (
        _pairs(shared_mentions)
        - sum(_pairs(n) for n in shared_per_key.values())
        - sum(_pairs(n) for n in shared_per_response.values())
        + coref_correct
    )
    return BlancCounts(
        coref_correct=coref_correct,
        coref_key=coref_key,
        coref_response=coref_response,
        non_coref_correct=non_coref_correct,
        non_coref_key=_pairs(sum(overlap.key_sizes)) - coref_key,
        non_coref_response=non_coref_response,
    )


def _lea_side(sizes: tuple[int, ...], links_found: Mapping[int, int], singles_found: set[int]) -> float:
    """Sum over one side's chains of size × share of its links found on the other side."""
    total = 0.0
    for chain, size in enumerate(sizes):
        if size == 1:
            total += 1.0 if chain in singles_found else 0.0
        else:
            total += size * links_found.get(chain, 0) / _pairs(size)
    return total


def lea_counts(overlap: ChainOverlap) -> Counts:
    """LEA: each chain weighs its size, times the share of its links the other side has.

    A singleton chain is one self-link, found when the other side has that mention as a
    singleton too (Moosavi & Strube 2016, as in the reference's LEA).
    """
    key_links: Counter[int] = Counter()
    response_links: Counter[int] = Counter()
    key_singles: set[int] = set()
    response_singles: set[int] = set()
    for (i, j), n in overlap.shared.items():
        key_links[i] += _pairs(n)
        response_links[j] += _pairs(n)
        if overlap.key_sizes[i] == 1 and overlap.response_sizes[j] == 1:
            key_singles.add(i)
            response_singles.add(j)
    return Counts(
        _lea_side(overlap.key_sizes, key_links, key_singles),
        sum(overlap.key_sizes),
        _lea_side(overlap.response_sizes, response_links, response_singles),
        sum(overlap.response_sizes),
    )


METRICS: Mapping[str, Callable[[ChainOverlap], MetricCounts]] = {
    "muc": muc_counts,
    "b_cubed": b_cubed_counts,
    "ceaf_m": ceaf_m_counts,
    "ceaf_e": ceaf_e_counts,
    "blanc": blanc_counts,
    "lea": lea_counts,
}


def muc(key: Chains, response: Chains) -> Score:
    """MUC recall, precision, F1 of one document."""
    return muc_counts(align(key, response)).score()


def b_cubed(key: Chains, response: Chains) -> Score:
    """B³ recall, precision, F1 of one document."""
    return b_cubed_counts(align(key, response)).score()


def ceaf_m(key: Chains, response: Chains) -> Score:
    """Mention-based CEAF recall, precision, F1 of one document."""
    return ceaf_m_counts(align(key, response)).score()


def ceaf_e(key: Chains, response: Chains) -> Score:
    """Entity-based CEAF recall, precision, F1 of one document."""
    return ceaf_e_counts(align(key, response)).score()


def blanc(key: Chains, response: Chains) -> Score:
    """BLANC recall, precision, F of one document (F is the mean of the two link Fs)."""
    return blanc_counts(align(key, response)).score()


def lea(key: Chains, response: Chains) -> Score:
    """LEA recall, precision, F1 of one document."""
    return lea_counts(align(key, response)).score()


def conll_f1(key: Chains, response: Chains) -> float:
    """CoNLL F1 of one document: mean of the MUC, B³ and CEAF-e F1."""
    return conll_f1_documents({"document": key}, {"document": response})


def score_documents_all(
    key_docs: Documents,
    response_docs: Documents,
    metrics: Iterable[str] = METRIC_NAMES,
    *,
    dedupe_twinless: bool = False,
) -> dict[str, Score]:
    """Score many documents with each metric, summing counts across documents.

    A key document missing from the response is scored against an empty response (as the
    reference does). A response document missing from the key is an error (the reference
    skips it silently). ``dedupe_twinless``: see the module docstring.
    """
    names = tuple(metrics)
    unknown = [name for name in names if name not in METRICS]
    if unknown:
        raise ValueError(f"unknown metrics {unknown}; expected some of {list(METRICS)}")
    extra = sorted(set(response_docs) - set(key_docs))
    if extra:
        raise ValueError(f"response documents not in the key: {extra[:5]}")
    totals = {name: METRICS[name](NO_CHAINS) for name in names}
    for document, key in key_docs.items():
        overlap = align(key, response_docs.get(document, ()), dedupe_twinless=dedupe_twinless)
        for name in names:
            totals[name] += METRICS[name](overlap)
    return {name: counts.score() for name, counts in totals.items()}


TABLE_7_METRICS = ("muc", "b_cubed", "ceaf_e", "blanc")
"""The metrics Datta et al. 2022 report for their systems (Table 7), with the CoNLL F1."""


def reported_metrics(scores: Mapping[str, Score]) -> dict[str, float]:
    """The metrics ``clincorp score coref`` reports: ``<metric>.recall|precision|f1`` of each metric scored, and
    ``conll_f1`` (the mean of the MUC, B³ and CEAF-e F1) when those three are."""
    metrics = {f"{name}.{part}": value for name, score in scores.items() for part, value in score._asdict().items()}
    if all(name in scores for name in CONLL_METRICS):
        metrics["conll_f1"] = sum(scores[name].f1 for name in CONLL_METRICS) / len(CONLL_METRICS)
    return metrics


def table_7_f1(key_docs: Documents, response_docs: Documents) -> dict[str, float]:
    """The F1 of each of :data:`TABLE_7_METRICS` (``muc.f1`` …) and ``conll_f1``, named as
    ``clincorp score coref`` reports them."""
    metrics = reported_metrics(score_documents_all(key_docs, response_docs, TABLE_7_METRICS))
    return {name: value for name, value in metrics.items() if name.endswith("f1")}


def score_documents(key_docs: Documents, response_docs: Documents, metric: str) -> Score:
    """Score many documents with one metric, summing counts across documents."""
    return score_documents_all(key_docs, response_docs, (metric,))[metric]


def conll_f1_documents(key_docs: Documents, response_docs: Documents) -> float:
    """CoNLL F1 over many documents: mean of the summed MUC, B³ and CEAF-e F1."""
    scores = score_documents_all(key_docs, response_docs, CONLL_METRICS)
    return math.fsum(scores[name].f1 for name in CONLL_METRICS) / len(CONLL_METRICS)


def load_chains_json(path: str | Path) -> dict[str, list[list[str | int]]]:
    """Read ``{document: [[mention_id, ...], ...]}`` (mention ids: strings or integers).

    Chains are returned as written, repeats included: the metrics decide what a repeat means.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except json.JSONDecodeError as error:
        raise SourceError(path, f"invalid JSON: {error.msg}", line=error.lineno) from error
    if not isinstance(data, dict):
        raise SourceError(path, "expected an object mapping document ids to lists of chains")
    documents: dict[str, list[list[str | int]]] = {}
    for document, chains in data.items():
        if not isinstance(chains, list) or not all(isinstance(chain, list) for chain in chains):
            raise SourceError(path, "expected a list of chains (lists of mention ids)", record=document)
        for chain in chains:
            for mention in chain:
                if isinstance(mention, bool) or not isinstance(mention, str | int):
                    raise SourceError(path, f"mention id {mention!r} is not a string or an integer", record=document)
        documents[document] = chains
    return documents
