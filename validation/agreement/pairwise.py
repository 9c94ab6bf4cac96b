"""Pair-wise inter-annotator agreement for anaphoric relations (Savova et al., JAMIA 2011).

Two annotations of a document agree on a pair when both link the same anaphor to the same
antecedent with the same relation type. TP, FP and FN count ``(anaphor, antecedent, relation)``
triples, the second annotation being the reference (``FP``: only in the response, ``FN``: only in
the reference). Precision, recall and F follow (eqns 1-3). For Cohen's kappa (eqns 4-8) the true
negatives are every candidate triple nobody annotated: with ``n`` markables and ``R`` relation
types there are ``P(n, 2) * R`` candidates, so ``TN = P(n, 2) * R - (TP + FP + FN)``.

Across documents Savova et al. 2011 sum TP, FP, FN and TN and computes every score from the sums (its
"All" columns equal the sums of the per-note-type columns). The per-relation table restricts the
triples to one relation type (``P(n, 2)`` candidates per document); the per-markable-type table
restricts them to pairs whose anaphor has that semantic class (``n_t * (n - 1) * R`` candidates),
so both tables partition the document's candidates. The paper leaves these two candidate counts
unstated; this is the choice made here.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from clinical_corpora.core.counts import PRFCounts, Scored

PairTriple = tuple[Hashable, Hashable, str]
"""``(anaphor, antecedent, relation)``; markables as any key shared by both annotations."""


@dataclass(frozen=True)
class PairCounts(Scored):
    """TP, FP and FN over pair triples, with Savova et al. 2011's precision, recall and F (``f_score``)."""

    tp: int
    fp: int
    fn: int

    @property
    def counts(self) -> PRFCounts:
        """The response's pairs as predicted, the reference's as gold."""
        return PRFCounts(self.tp, self.tp + self.fp, self.tp + self.fn)

    @property
    def f_score(self) -> float:
        return self.f1


@dataclass(frozen=True)
class AgreementTable(PairCounts):
    """The full 2x2 table: pair counts plus the true negatives, with Cohen's kappa."""

    tn: int

    def __post_init__(self) -> None:
        if min(self.tp, self.fp, self.fn, self.tn) < 0:
            raise ValueError(f"negative count in {self}: more pairs than candidate triples?")

    def __add__(self, other: AgreementTable) -> AgreementTable:
        return AgreementTable(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn, self.tn + other.tn)

    @property
    def kappa(self) -> float:
        return cohen_kappa(self.tp, self.fp, self.fn, self.tn)[2]

    def as_dict(self) -> dict[str, float]:
        """Rows of Savova et al. 2011's tables, for cards and validation reports."""
        return {
            "true_positive": self.tp,
            "false_positive": self.fp,
            "false_negative": self.fn,
            "true_negative": self.tn,
            "precision": self.precision,
            "recall": self.recall,
            "f_score": self.f_score,
            "kappa": self.kappa,
        }


EMPTY_TABLE = AgreementTable(0, 0, 0, 0)


@dataclass(frozen=True)
class AnnotatedPairs:
    """One annotation of one document: its markables' semantic classes and its pairs."""

    semantic_classes: Mapping[Hashable, str]
    pairs: frozenset[PairTriple]


@dataclass(frozen=True)
class AgreementReport:
    """Savova et al. 2011's tables for one document or a sum of documents."""

    overall: AgreementTable = EMPTY_TABLE
    by_relation: Mapping[str, AgreementTable] = field(default_factory=dict)
    by_markable_type: Mapping[str, AgreementTable] = field(default_factory=dict)

    def __add__(self, other: AgreementReport) -> AgreementReport:
        return AgreementReport(
            overall=self.overall + other.overall,
            by_relation=_add_tables(self.by_relation, other.by_relation),
            by_markable_type=_add_tables(self.by_markable_type, other.by_markable_type),
        )


def cohen_kappa(tp: int, fp: int, fn: int, tn: int) -> tuple[float, float, float]:
    """``(P(a), P(e), kappa)`` of a 2x2 table (eqns 4-8); kappa is NaN when ``P(e) = 1``.

    Computed in exact fractions: with many true negatives ``P(a)`` and ``P(e)`` are both close to 1
    and their float difference would lose every significant digit.
    """
    total = tp + fp + fn + tn
    if total == 0:
        return math.nan, math.nan, math.nan
    p_observed = Fraction(tp + tn, total)
    p_expected = Fraction((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn), total * total)
    if p_expected == 1:
        return float(p_observed), float(p_expected), math.nan
    return float(p_observed), float(p_expected), float((p_observed - p_expected) / (1 - p_expected))


def pairwise_kappa(
    tp: int, fp: int, fn: int, n_markables: int, n_relation_types: int = 4
) -> tuple[float, float, float]:
    """``(P(a), P(e), kappa)`` with ``TN = P(n, 2) * n_relation_types - (TP + FP + FN)``."""
    tn = math.perm(n_markables, 2) * n_relation_types - (tp + fp + fn)
    if tn < 0:
        raise ValueError(
            f"{tp + fp + fn} pairs exceed the {math.perm(n_markables, 2) * n_relation_types} "
            f"candidate triples of {n_markables} markables and {n_relation_types} relation types"
        )
    return cohen_kappa(tp, fp, fn, tn)


def pair_agreement(response: Iterable[PairTriple], reference: Iterable[PairTriple]) -> PairCounts:
    """TP, FP, FN of one document's pair triples, ``reference`` being the second annotation."""
    response_set, reference_set = set(response), set(reference)
    return PairCounts(
        tp=len(response_set & reference_set),
        fp=len(response_set - reference_set),
        fn=len(reference_set - response_set),
    )


def document_agreement(
    response: AnnotatedPairs, reference: AnnotatedPairs, relation_types: Sequence[str]
) -> AgreementReport:
    """Overall, per-relation and per-markable-type tables of one document.

    The document's markables are the union of both annotations' markables; a markable's type is
    the reference's semantic class, or the response's for markables only the response has.
    """
    semantic_classes = {**response.semantic_classes, **reference.semantic_classes}
    _check_pairs(response.pairs | reference.pairs, semantic_classes, relation_types)
    n = len(semantic_classes)
    n_types = len(relation_types)

    def table(keep: Callable[[PairTriple], bool], candidates: int) -> AgreementTable:
        counts = pair_agreement(filter(keep, response.pairs), filter(keep, reference.pairs))
        return AgreementTable(counts.tp, counts.fp, counts.fn, candidates - (counts.tp + counts.fp + counts.fn))

    markables_of_type = Counter(semantic_classes.values())
    return AgreementReport(
        overall=table(lambda t: True, math.perm(n, 2) * n_types),
        by_relation={relation: table(_with_relation(relation), math.perm(n, 2)) for relation in relation_types},
        by_markable_type={
            kind: table(_with_anaphor_type(semantic_classes, kind), count * (n - 1) * n_types)
            for kind, count in sorted(markables_of_type.items())
        },
    )


def _with_relation(relation: str) -> Callable[[PairTriple], bool]:
    """Keep the triples of ``relation``."""

    def keep(triple: PairTriple) -> bool:
        return triple[2] == relation

    return keep


def _with_anaphor_type(semantic_classes: Mapping[Hashable, str], kind: str) -> Callable[[PairTriple], bool]:
    """Keep the triples whose anaphor has semantic class ``kind``."""

    def keep(triple: PairTriple) -> bool:
        return semantic_classes[triple[0]] == kind

    return keep


def sum_by_group(reports: Iterable[tuple[str, AgreementReport]]) -> dict[str, AgreementReport]:
    """Sum document reports per group (e.g. note type) and over all documents (key ``"all"``)."""
    totals: dict[str, AgreementReport] = {"all": AgreementReport()}
    for group, report in reports:
        if group == "all":
            raise ValueError('"all" is reserved for the sum over every group')
        totals["all"] = totals["all"] + report
        totals[group] = totals.get(group, AgreementReport()) + report
    return totals


def _check_pairs(
    pairs: frozenset[PairTriple],
    semantic_classes: Mapping[Hashable, str],
    relation_types: Sequence[str],
) -> None:
    for anaphor, antecedent, relation in pairs:
        if relation not in relation_types:
            raise ValueError(f"relation {relation!r} is not one of {list(relation_types)}")
        for markable in (anaphor, antecedent):
            if markable not in semantic_classes:
                raise ValueError(f"pair names markable {markable!r}, absent from both annotations")
        if anaphor == antecedent:
            raise ValueError(f"pair links markable {anaphor!r} to itself")


def _add_tables(left: Mapping[str, AgreementTable], right: Mapping[str, AgreementTable]) -> dict[str, AgreementTable]:
    return {key: left.get(key, EMPTY_TABLE) + right.get(key, EMPTY_TABLE) for key in {**left, **right}}
