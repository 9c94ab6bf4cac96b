"""Pair-wise F and kappa (Savova et al. 2011): worked example, seed tables, the sample."""

from __future__ import annotations

import math
from pathlib import Path
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clinical_corpora.builders.sources.knowtator.document import KnowtatorDocument
from clinical_corpora.builders.sources.knowtator.xml import iter_knowtator_dir
from clinical_corpora.core.labels import RelationType
from clinical_corpora.validation.agreement.pairwise import (
    AgreementReport,
    AgreementTable,
    AnnotatedPairs,
    PairCounts,
    cohen_kappa,
    document_agreement,
    pair_agreement,
    pairwise_kappa,
    sum_by_group,
)

SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "odie_anaphora" / "sample"
RELATIONS = get_args(RelationType)


def test_seed_worked_example() -> None:
    """10 markables, TP 2, FP 3, FN 1: TN 354, P(a) 0.989, P(e) 0.978, kappa 0.495, F 0.5."""
    p_observed, p_expected, kappa = pairwise_kappa(2, 3, 1, n_markables=10)
    assert round(p_observed * 360) - 2 == 354  # P(a) = (TP + TN) / 360
    assert round(p_observed, 3) == 0.989
    assert round(p_expected, 3) == 0.978
    assert round(kappa, 3) == 0.495
    counts = PairCounts(2, 3, 1)
    assert (round(counts.precision, 2), round(counts.recall, 3), counts.f_score) == (
        0.4,
        0.667,
        0.5,
    )
    assert AgreementTable(2, 3, 1, 354).kappa == kappa


def test_hand_derived_tables() -> None:
    # 2 markables, 1 relation type: 2 candidate triples.
    assert pairwise_kappa(1, 0, 0, n_markables=2, n_relation_types=1) == (1.0, 0.5, 1.0)
    assert pairwise_kappa(0, 1, 1, n_markables=2, n_relation_types=1) == (0.0, 0.5, -1.0)
    # TP 1, FP 1, FN 0, TN 2: P(a) = 3/4, P(e) = 2/4 * 1/4 + 2/4 * 3/4 = 1/2, kappa = 1/2.
    assert cohen_kappa(1, 1, 0, 2) == (0.75, 0.5, 0.5)


def test_kappa_is_undefined_without_any_pair() -> None:
    p_observed, p_expected, kappa = pairwise_kappa(0, 0, 0, n_markables=5)
    assert (p_observed, p_expected) == (1.0, 1.0)
    assert math.isnan(kappa)


def test_more_pairs_than_candidates_is_an_error() -> None:
    with pytest.raises(ValueError, match="candidate triples"):
        pairwise_kappa(5, 3, 1, n_markables=2, n_relation_types=4)


@pytest.mark.parametrize(
    ("tp", "fp", "fn", "precision", "recall", "f_score"),
    [
        (846, 393, 476, 0.6828, 0.6399, 0.6607),  # table 1, Mayo, all
        (12, 19, 28, 0.3871, 0.3000, 0.3380),  # table 2, p6
        (2134, 1526, 526, 0.5831, 0.8023, 0.6753),  # table 7, A1 and gold
        (0, 9, 1, 0.0, 0.0, 0.0),  # table 9, None
    ],
)
def test_precision_recall_f_of_the_seed_tables(tp, fp, fn, precision, recall, f_score) -> None:
    counts = PairCounts(tp, fp, fn)
    assert (round(counts.precision, 4), round(counts.recall, 4), round(counts.f_score, 4)) == (
        precision,
        recall,
        f_score,
    )


@given(tp=st.integers(0, 500), fp=st.integers(0, 500), fn=st.integers(0, 500))
def test_kappa_approaches_f_when_true_negatives_dominate(tp: int, fp: int, fn: int) -> None:
    """Hripcsak and Rothschild: with many TNs kappa tends to F (the seed's kappa ~ F columns)."""
    table = AgreementTable(tp, fp, fn, 10**12)
    if tp + fp + fn == 0:
        assert math.isnan(table.kappa)
    else:
        assert table.kappa == pytest.approx(table.f_score, abs=1e-6)


def test_pair_agreement_counts_triples() -> None:
    response = {("b", "a", "identity"), ("c", "a", "identity"), ("d", "c", "part/whole")}
    reference = {("b", "a", "identity"), ("c", "a", "set/subset"), ("e", "d", "identity")}
    assert pair_agreement(response, reference) == PairCounts(tp=1, fp=2, fn=2)
    assert pair_agreement(reference, response) == PairCounts(tp=1, fp=2, fn=2)
    assert pair_agreement([], reference) == PairCounts(0, 0, 3)


def test_document_tables_by_relation_and_markable_type() -> None:
    """Five markables (3 people, 2 anatomy): 5 * 4 = 20 ordered pairs, 80 candidate triples."""
    reference = AnnotatedPairs(
        {"he": "people", "she": "people", "pt": "people", "arm": "anatomical_site"},
        frozenset({("she", "pt", "identity"), ("he", "pt", "identity"), ("hand", "arm", "part/whole")}),
    )
    response = AnnotatedPairs(
        {"she": "people", "pt": "people", "arm": "anatomical_site", "hand": "anatomical_site"},
        frozenset({("she", "pt", "identity"), ("hand", "arm", "set/subset")}),
    )
    report = document_agreement(response, reference, RELATIONS)
    assert report.overall == AgreementTable(tp=1, fp=1, fn=2, tn=80 - 4)
    assert report.by_relation["identity"] == AgreementTable(1, 0, 1, 20 - 2)
    assert report.by_relation["part/whole"] == AgreementTable(0, 0, 1, 20 - 1)
    assert report.by_relation["set/subset"] == AgreementTable(0, 1, 0, 20 - 1)
    assert report.by_relation["other"] == AgreementTable(0, 0, 0, 20)
    # Anaphor of type t: n_t * (n - 1) * 4 candidates.
    assert report.by_markable_type["people"] == AgreementTable(1, 0, 1, 3 * 4 * 4 - 2)
    assert report.by_markable_type["anatomical_site"] == AgreementTable(0, 1, 1, 2 * 4 * 4 - 2)


def test_unknown_relation_or_markable_is_an_error() -> None:
    markables = {"a": "people", "b": "people"}
    with pytest.raises(ValueError, match="relation"):
        document_agreement(
            AnnotatedPairs(markables, frozenset({("a", "b", "coreference")})),
            AnnotatedPairs(markables, frozenset()),
            RELATIONS,
        )
    with pytest.raises(ValueError, match="absent"):
        document_agreement(
            AnnotatedPairs(markables, frozenset({("a", "z", "identity")})),
            AnnotatedPairs(markables, frozenset()),
            RELATIONS,
        )


# --- the embedded sample ----------------------------------------------------------------------


def annotated(document: KnowtatorDocument) -> AnnotatedPairs:
    return AnnotatedPairs(document.semantic_classes_by_key(), document.pair_keys())


def sample_reports(response: str, reference: str) -> dict[str, AgreementReport]:
    responses = iter_knowtator_dir(SAMPLE / response, SAMPLE / "text")
    references = iter_knowtator_dir(SAMPLE / reference, SAMPLE / "text")
    return {
        a.doc_id: document_agreement(annotated(a), annotated(b), RELATIONS)
        for a, b in zip(responses, references, strict=True)
    }


# (TP, FP, FN, markables in the union) of annotator A against annotator B, derived by hand from
# the disagreements written into the sample (see corpora/odie_anaphora/README.md):
#   mayo_cc_01  A misses dysphagia pair; B misses deltoid part/whole and adds a set/subset pair
#   mayo_p_01   mucosa identity (A) / part/whole (B); muscularis part/whole (A) / other (B)
#   upmc_er_01  A misses greatest-elevation pair and adds he->He; B misses Mr. Smith and Lead III
#   upmc_ds_01  B adds pneumonia = infiltrate
#   upmc_sp_01  A misses axilla part/whole; B links "tumor" to the first carcinoma mention
#   upmc_rad_01 left kidney part/whole (A) / set/subset (B); B's discontinuous "CT ... pelvis"
A_AGAINST_B = {
    "mayo_cc_01": (8, 1, 2, 19),
    "mayo_p_01": (4, 2, 2, 12),
    "upmc_er_01": (9, 3, 1, 21),
    "upmc_ds_01": (7, 0, 1, 14),
    "upmc_sp_01": (4, 1, 2, 11),
    "upmc_rad_01": (6, 1, 1, 13),
}


def test_sample_agreement_per_document() -> None:
    reports = sample_reports("annotator_a", "annotator_b")
    for doc_id, (tp, fp, fn, n) in A_AGAINST_B.items():
        assert reports[doc_id].overall == AgreementTable(tp, fp, fn, n * (n - 1) * 4 - (tp + fp + fn))


def test_sample_agreement_per_note_type_and_relation() -> None:
    reports = sample_reports("annotator_a", "annotator_b")
    tables = sum_by_group((doc_id.split("_")[0], report) for doc_id, report in reports.items())
    assert (tables["mayo"].overall.tp, tables["mayo"].overall.fp, tables["mayo"].overall.fn) == (
        12,
        3,
        4,
    )
    assert (tables["upmc"].overall.tp, tables["upmc"].overall.fp, tables["upmc"].overall.fn) == (
        26,
        5,
        5,
    )
    total = tables["all"]
    assert total.overall == tables["mayo"].overall + tables["upmc"].overall
    assert total.overall.tn == 5313
    by_relation = {r: (t.tp, t.fp, t.fn) for r, t in total.by_relation.items()}
    assert by_relation == {
        "identity": (34, 4, 3),
        "set/subset": (3, 1, 3),
        "part/whole": (1, 3, 2),
        "other": (0, 0, 1),
    }
    assert 0 < total.overall.kappa < total.overall.f_score < 1


def test_relation_and_markable_type_tables_partition_the_overall_table() -> None:
    for report in sample_reports("annotator_b", "gold").values():
        for breakdown in (report.by_relation, report.by_markable_type):
            summed = AgreementTable(0, 0, 0, 0)
            for table in breakdown.values():
                summed = summed + table
            assert summed == report.overall


def test_each_annotator_against_the_gold() -> None:
    annotator_a = sum_by_group(("odie", r) for r in sample_reports("annotator_a", "gold").values())
    assert (
        annotator_a["all"].overall.tp,
        annotator_a["all"].overall.fp,
        annotator_a["all"].overall.fn,
    ) == (43, 3, 5)
    gold = sum_by_group(("odie", r) for r in sample_reports("gold", "gold").values())
    assert gold["all"].overall.kappa == 1.0
    assert gold["all"].overall.as_dict()["f_score"] == 1.0
