"""Coreference metrics against the CoNLL-2012 reference scorer's own test cases, plus properties.

Cases and expected values are transcribed from the reference scorer's test suite
(reference-coreference-scorers, test/CorefMetricTestConfig.pm for MUC, B³, CEAF and BLANC;
test/TestCases.README for LEA and the chains of each case). Mentions are single characters;
a capital ``B`` is a mention distinct from ``b`` (an overlapping span), a repeated letter is
a repeated mention.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clinical_corpora.core.errors import SourceError
from clinical_corpora.validation.metrics import coref, coref_align
from clinical_corpora.validation.metrics.coref import (
    b_cubed,
    blanc,
    ceaf_e,
    ceaf_m,
    conll_f1,
    conll_f1_documents,
    lea,
    load_chains_json,
    muc,
    score_documents,
    score_documents_all,
)

SINGLE_DOCUMENT = {
    "muc": muc,
    "b_cubed": b_cubed,
    "ceaf_m": ceaf_m,
    "ceaf_e": ceaf_e,
    "blanc": blanc,
    "lea": lea,
}


def chains(text: str) -> list[list[str]]:
    """``"a bc def"`` → ``[["a"], ["b", "c"], ["d", "e", "f"]]`` (repeats kept)."""
    return [list(group) for group in text.split()]


def f1(recall: float, precision: float) -> float:
    return 2 * recall * precision / (recall + precision) if recall + precision else 0.0


def rp(recall: float, precision: float) -> tuple[float, float, float]:
    """Expected values given as recall and precision only (the F1 is their harmonic mean)."""
    return (recall, precision, f1(recall, precision))


Expected = tuple[float, float, float]
ONE = (1, 1, 1)
ZERO = (0, 0, 0)
A7_VALUES: dict[str, Expected] = {
    "muc": (1 / 3, 1 / 3, 1 / 3),
    "b_cubed": rp((10 / 3) / 6, (1 + 4 / 3 + 1 / 2) / 7),
    "ceaf_m": (0.66667, 0.57143, 0.61538),
    "ceaf_e": (0.73333, 0.55, 0.62857),
    "blanc": (0.35227, 0.27206, 0.30357),
    "lea": rp((1 + 2) / 6, (1 + 3 / 3) / 7),
}

# (case id, key, response, {metric: (recall, precision, F)})
REFERENCE_CASES: list[tuple[str, str, str, dict[str, Expected]]] = [
    ("A1", "a bc def", "a bc def", {m: ONE for m in SINGLE_DOCUMENT}),
    (
        "A2",
        "a bc def",
        "a de",
        {
            "muc": (1 / 3, 1, 0.5),
            "b_cubed": ((7 / 3) / 6, 3 / 3, 14 / 25),
            "ceaf_m": (0.5, 1, 0.66667),
            "ceaf_e": (0.6, 0.9, 0.72),
            "blanc": (0.21591, 1, 0.35385),
            "lea": rp((1 + 3 * (1 / 3)) / 6, (1 + 2) / 3),
        },
    ),
    (
        "A3",
        "a bc def",
        "a bcx defy z",
        {
            "muc": (3 / 3, 3 / 5, 0.75),
            "b_cubed": (6 / 6, (4 + 7 / 12) / 9, 110 / 163),
            "ceaf_m": (1, 0.66667, 0.8),
            "ceaf_e": (0.88571, 0.66429, 0.75918),
            "blanc": (1, 0.42593, 0.59717),
            "lea": rp((1 + 2 + 3) / 6, (1 + 3 * (1 / 3) + 4 * (3 / 6)) / 9),
        },
    ),
    (
        "A4",
        "a bc def",
        "a bcx dy z",
        {
            "muc": (1 / 3, 1 / 3, 1 / 3),
            "b_cubed": rp((3 + 1 / 3) / 6, (1 + 4 / 3 + 1 / 2) / 7),
            "ceaf_m": (0.66667, 0.57143, 0.61538),
            "ceaf_e": (0.73333, 0.55, 0.62857),
            "blanc": (0.35227, 0.27206, 0.30357),
            "lea": rp((1 + 2 + 0) / 6, (1 + 3 * (1 / 3)) / 7),
        },
    ),
    (
        "A5",
        "a bc def",
        "a bcxB dy z",
        {
            "muc": (1 / 3, 1 / 4, 2 / 7),
            "b_cubed": rp((3 + 1 / 3) / 6, 2.5 / 8),
            "ceaf_m": (0.66667, 0.5, 0.57143),
            "ceaf_e": (0.68889, 0.51667, 0.59048),
            "blanc": (0.35227, 0.19048, 0.24716),
            "lea": rp((1 + 2) / 6, (1 + 4 * (1 / 6)) / 8),
        },
    ),
    (
        "A6",
        "a bc def",
        "a bcx dy Bz",
        {
            "muc": (1 / 3, 1 / 4, 2 / 7),
            "b_cubed": rp((10 / 3) / 6, (1 + 4 / 3 + 1 / 2) / 8),
            "ceaf_m": (0.66667, 0.5, 0.57143),
            "ceaf_e": (0.73333, 0.55, 0.62857),
            "blanc": (0.35227, 0.20870, 0.25817),
            "lea": rp((1 + 2) / 6, (1 + 3 / 3) / 8),
        },
    ),
    # A7-A9: a repeated response mention is scored once (the reference de-duplicates).
    ("A7", "a bc def", "a bcxb dy z", A7_VALUES),
    ("A8", "a bc def", "a bcx dy bz", A7_VALUES),
    ("A9", "a bc def", "a bcx dy bbbbbbbbbbz", A7_VALUES),
    (
        "A10",
        "a bc def",
        "a b c d e f",
        {
            "muc": ZERO,
            "b_cubed": (3 / 6, 6 / 6, 2 / 3),
            "blanc": (0.5, 0.36667, 0.42308),
            "lea": rp(1 / 6, 1 / 6),
        },
    ),
    (
        "A11",
        "a bc def",
        "abcdef",
        {
            "muc": (3 / 3, 3 / 5, 6 / 8),
            "b_cubed": (6 / 6, (1 / 6 + 2 * 2 / 6 + 3 * 3 / 6) / 6, 14 / 25),
            "blanc": (0.5, 0.13333, 0.21053),
            "lea": rp((0 + 2 + 3) / 6, 6 * (4 / 15) / 6),
        },
    ),
    (
        "A12",
        "a bc def",
        "a x y c d e z",
        {
            "muc": ZERO,
            "b_cubed": rp((1 + 1 / 2 + 2 / 3) / 6, 4 / 7),
            "blanc": (0.22727, 0.11905, 0.15625),
            "lea": rp(1 / 6, 1 / 7),
        },
    ),
    (
        "A13",
        "a bc def",
        "axycdez",
        {
            "muc": (1 / 3, 1 / 6, 2 / 9),
            "b_cubed": rp((1 + 1 / 2 + 2 * 2 / 3) / 6, (1 / 7 + 1 / 7 + 2 * 2 / 7) / 7),
            "blanc": (0.125, 0.02381, 0.04),
            "lea": rp((3 / 3) / 6, 7 * (1 / 21) / 7),
        },
    ),
    (
        "B1",
        "ab cde",
        "bcx de",
        {"blanc": (7 / 24, 7 / 24, 7 / 24), "lea": rp((2 * 0 + 3 / 3) / 5, (3 * 0 + 2) / 5)},
    ),
    (
        "C1",
        "ab cde fg",
        "bcx de fg",
        {
            "blanc": ((2 / 5 + 10 / 16) / 2,) * 3,
            "lea": rp((2 * 0 + 3 / 3 + 2) / 7, (3 * 0 + 2 + 2) / 7),
        },
    ),
    (
        "D1",
        "12345 67 89ABC",
        "12345 6789ABC",
        {
            "muc": rp(9 / 9, 9 / 10),
            "b_cubed": rp(12 / 12, 16 / 21),
            "lea": rp((5 + 2 + 5) / 12, (5 + 7 * (11 / 21)) / 12),
        },
    ),
    (
        "E1",
        "12345 67 89ABC",
        "1234589ABC 67",
        {
            "muc": rp(9 / 9, 9 / 10),
            "b_cubed": rp(1, 7 / 12),
            "lea": rp((5 + 2 + 5) / 12, (10 * (20 / 45) + 2) / 12),
        },
    ),
    ("F1", "ABCD", "AB CD", {"muc": rp(2 / 3, 2 / 2), "lea": rp(4 * (2 / 6) / 4, (2 + 2) / 4)}),
    ("G1", "AB CD", "ABCD", {"muc": rp(2 / 2, 2 / 3), "lea": rp(1, (4 * 2 / 6) / 4)}),
    ("H1", "ABCD", "ABCD", {"muc": ONE, "lea": ONE}),
    ("I1", "ABCD", "AB CD", {"muc": rp(2 / 3, 2 / 2), "lea": rp(4 * (2 / 6) / 4, (2 + 2) / 4)}),
    ("J1", "ABC", "AC", {"muc": rp(1 / 2, 1 / 1), "lea": rp((3 * 1 / 3) / 3, 1)}),
    (
        "K1",
        "BCDEGHJ",
        "ABC DEF GHI",
        {"muc": (3 / 6, 3 / 6, 3 / 6), "lea": rp((7 * (1 + 1 + 1) / 21) / 7, (3 / 3 + 3 / 3 + 3 / 3) / 9)},
    ),
    (
        "L1",
        "ABC DEFG",
        "AB CD FGH",
        {"muc": rp(2 / 5, 2 / 4), "lea": rp((3 * 1 / 3 + 4 * 1 / 6) / 7, (2 + 2 * 0 + 3 / 3) / 7)},
    ),
    ("M1", "abcdef", "abcdef", {m: ONE for m in SINGLE_DOCUMENT}),
    ("M2", "abcdef", "a b c d e f", {"muc": ZERO, "blanc": ZERO, "lea": ZERO}),
    (
        "M3",
        "abcdef",
        "ab cde f",
        {"blanc": (0.26667, 1, 0.42105), "lea": rp(6 * (4 / 15) / 6, (2 + 3 + 0) / 6)},
    ),
    ("M4", "abcdef", "abcxyz", {"blanc": (0.2, 0.2, 0.2), "lea": rp(6 * (3 / 15) / 6, 6 * (3 / 15) / 6)}),
    ("M5", "abcdef", "a b c x y z", {"muc": ZERO, "blanc": ZERO, "lea": ZERO}),
    (
        "M6",
        "abcdef",
        "ab cxy z",
        {"blanc": (0.06667, 0.25, 0.10526), "lea": rp(6 * (1 / 15) / 6, (2 + 3 * 0 + 1 * 0) / 6)},
    ),
    (
        "N1",
        "a b c d e f",
        "a b c d e f",
        {"muc": ZERO, "b_cubed": ONE, "ceaf_m": ONE, "ceaf_e": ONE, "blanc": ONE, "lea": ONE},
    ),
    ("N2", "a b c d e f", "abcdef", {"muc": ZERO, "blanc": ZERO, "lea": ZERO}),
    ("N3", "a b c d e f", "ab cde f", {"blanc": (0.73333, 1, 0.84615), "lea": rp(1 / 6, 1 / 6)}),
    ("N4", "a b c d e f", "a b c x y z", {"muc": ZERO, "blanc": (0.2, 0.2, 0.2), "lea": rp(3 / 6, 3 / 6)}),
    ("N5", "a b c d e f", "abcxyz", {"blanc": ZERO, "lea": ZERO}),
    ("N6", "a b c d e f", "ab cxy z", {"blanc": (0.13333, 0.18182, 0.15385), "lea": ZERO}),
]

CASE_PARAMS = [
    pytest.param(key, response, metric, expected, id=f"{case}-{metric}")
    for case, key, response, values in REFERENCE_CASES
    for metric, expected in values.items()
]


@pytest.mark.parametrize(("key", "response", "metric", "expected"), CASE_PARAMS)
def test_reference_scorer_case(key: str, response: str, metric: str, expected: tuple[float, ...]) -> None:
    score = SINGLE_DOCUMENT[metric](chains(key), chains(response))
    assert score == pytest.approx(expected, abs=1e-5)


def test_conll_f1_is_the_mean_of_muc_b_cubed_and_ceaf_e_f1() -> None:
    # TC-A-4: MUC F 1/3, B³ F from (5/9, 17/42), CEAF-e F 0.62857.
    expected = (1 / 3 + f1(5 / 9, 17 / 42) + 0.62857) / 3
    assert conll_f1(chains("a bc def"), chains("a bcx dy z")) == pytest.approx(expected, abs=1e-5)


def test_many_documents_sum_counts_rather_than_average_scores() -> None:
    key = {"A2": chains("a bc def"), "A3": chains("a bc def")}
    response = {"A2": chains("a de"), "A3": chains("a bcx defy z")}
    # MUC counts: A2 1/3 recall, 1/1 precision; A3 3/3, 3/5.
    assert score_documents(key, response, "muc") == pytest.approx(rp(4 / 6, 4 / 6))
    # B³: A2 (7/3)/6 and 3/3; A3 6/6 and (4 + 7/12)/9.
    assert score_documents(key, response, "b_cubed") == pytest.approx(rp((7 / 3 + 6) / 12, (3 + 4 + 7 / 12) / 12))
    # CEAF-e: A2 1.8 over 3 key / 2 response entities; A3 1 + 4/5 + 6/7 over 3 / 4.
    aligned = 1.8 + 1 + 4 / 5 + 6 / 7
    assert score_documents(key, response, "ceaf_e") == pytest.approx(rp(aligned / 6, aligned / 6))


def test_blanc_over_many_documents_sums_link_counts() -> None:
    key = {"A2": chains("a bc def"), "A3": chains("a bc def")}
    response = {"A2": chains("a de"), "A3": chains("a bcx defy z")}
    # Links from TestCases.README. Coreference: A2 1/4 recall, 1/1 precision; A3 4/4, 4/9.
    # Non-coreference: A2 2/11, 2/2; A3 11/11, 11/27.
    coref_r, coref_p = 5 / 8, 5 / 10
    non_r, non_p = 13 / 22, 13 / 29
    expected = ((coref_r + non_r) / 2, (coref_p + non_p) / 2, (f1(coref_r, coref_p) + f1(non_r, non_p)) / 2)
    assert score_documents(key, response, "blanc") == pytest.approx(expected)


def test_key_document_missing_from_response_is_scored_as_empty() -> None:
    key = {"d1": chains("ab"), "d2": chains("cd")}
    scores = score_documents_all(key, {"d1": chains("ab")})
    assert scores["muc"] == pytest.approx(rp(1 / 2, 1))
    assert scores["b_cubed"] == pytest.approx(rp(2 / 4, 1))


def test_response_document_missing_from_key_is_an_error() -> None:
    with pytest.raises(ValueError, match="not in the key"):
        score_documents({"d1": chains("ab")}, {"d1": chains("ab"), "typo": chains("cd")}, "muc")


def test_unknown_metric_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown metrics"):
        score_documents({"d1": chains("ab")}, {"d1": chains("ab")}, "ceaf")


def test_repeated_key_mention_is_an_error() -> None:
    with pytest.raises(ValueError, match="more than once in the key"):
        muc(chains("ab bc"), chains("abc"))


@pytest.mark.parametrize(("key", "response"), [([["a"], []], [["a"]]), ([["a"]], [[], ["a"]])])
def test_empty_chain_is_an_error(key: list[list[str]], response: list[list[str]]) -> None:
    with pytest.raises(ValueError, match="empty"):
        b_cubed(key, response)


def test_ceaf_alignment_is_optimal_not_greedy() -> None:
    # Greedy (first key chain takes its best response chain) aligns {abx}-{ac} and leaves {c}
    # unmatched (1 shared mention); the optimum {abx}-{b} plus {c}-{ac} shares 2.
    key, response = chains("abx c"), chains("ac b")
    assert ceaf_m(key, response) == pytest.approx(rp(2 / 4, 2 / 3))
    assert ceaf_e(key, response) == pytest.approx(rp((2 / 4 + 2 / 3) / 2, (2 / 4 + 2 / 3) / 2))


def test_repeated_response_mentions_are_counted() -> None:
    assert coref_align.align(chains("a bc def"), chains("a bcx dy bbbz")).repeated_response_mentions == 3


def test_counts_expose_numerators_and_denominators() -> None:
    overlap = coref_align.align(chains("a bc def"), chains("a bcx dy z"))
    assert coref.muc_counts(overlap) == coref.Counts(1, 3, 1, 3)
    assert coref.ceaf_m_counts(overlap) == coref.Counts(4, 6, 4, 7)
    assert coref.blanc_counts(overlap) == coref.BlancCounts(1, 4, 4, 5, 11, 17)


# --- properties -------------------------------------------------------------------------


@st.composite
def partitions(draw: st.DrawFn, min_size: int = 0) -> list[set[int]]:
    mentions = draw(st.lists(st.integers(0, 25), unique=True, min_size=min_size, max_size=12))
    labels = draw(st.lists(st.integers(0, 5), min_size=len(mentions), max_size=len(mentions)))
    grouped: dict[int, set[int]] = defaultdict(set)
    for mention, label in zip(mentions, labels, strict=True):
        grouped[label].add(mention)
    return list(grouped.values())


@given(partitions(min_size=1))
def test_identical_key_and_response_score_one(partition: list[set[int]]) -> None:
    for metric in ("b_cubed", "ceaf_m", "ceaf_e", "lea"):
        assert SINGLE_DOCUMENT[metric](partition, partition) == pytest.approx(ONE)
    if any(len(chain) > 1 for chain in partition):
        assert muc(partition, partition) == pytest.approx(ONE)
    if sum(len(chain) for chain in partition) > 1:
        assert blanc(partition, partition) == pytest.approx(ONE)


@given(partitions(), partitions())
def test_swapping_key_and_response_swaps_recall_and_precision(key: list[set[int]], response: list[set[int]]) -> None:
    # Not BLANC: which link kinds count depends on the key alone.
    for metric in ("muc", "b_cubed", "ceaf_m", "ceaf_e", "lea"):
        recall, precision, f = SINGLE_DOCUMENT[metric](key, response)
        swapped = SINGLE_DOCUMENT[metric](response, key)
        assert swapped == pytest.approx((precision, recall, f)), metric


def _brute_force_ceaf(key: list[set[int]], response: list[set[int]], entity_based: bool) -> float:
    def similarity(k: set[int], r: set[int]) -> Fraction:
        shared = len(k & r)
        return Fraction(2 * shared, len(k) + len(r)) if entity_based else Fraction(shared)

    if not key or not response:
        return 0.0
    small, large = (key, response) if len(key) <= len(response) else (response, key)
    best = max(
        sum(similarity(a, b) for a, b in zip(small, chosen, strict=False))
        for chosen in itertools.permutations(large, len(small))
    )
    return float(best)


def _links(partition: list[set[int]]) -> tuple[set[frozenset[int]], set[frozenset[int]]]:
    chain_of = {m: n for n, chain in enumerate(partition) for m in chain}
    pairs = {frozenset(p) for p in itertools.combinations(chain_of, 2)}
    coref_links = {p for p in pairs if len({chain_of[m] for m in p}) == 1}
    return coref_links, pairs - coref_links


@settings(max_examples=150)
@given(partitions(), partitions())
def test_scores_agree_with_brute_force_definitions(key: list[set[int]], response: list[set[int]]) -> None:
    key_mentions = sum(len(c) for c in key)
    response_mentions = sum(len(c) for c in response)

    aligned_m = _brute_force_ceaf(key, response, entity_based=False)
    assert ceaf_m(key, response)[:2] == pytest.approx(
        (aligned_m / key_mentions if key else 0, aligned_m / response_mentions if response else 0)
    )
    aligned_e = _brute_force_ceaf(key, response, entity_based=True)
    assert ceaf_e(key, response)[:2] == pytest.approx(
        (aligned_e / len(key) if key else 0, aligned_e / len(response) if response else 0)
    )

    # MUC (Vilain et al.): recall = sum(|K| - |partition of K by the response|) / sum(|K| - 1).
    def muc_side(gold: list[set[int]], other: list[set[int]]) -> tuple[int, int]:
        found = 0
        for chain in gold:
            pieces = sum(1 for o in other if o & chain) + len(chain - set().union(*other))
            found += len(chain) - pieces
        return found, sum(len(c) - 1 for c in gold)

    recall_found, recall_links = muc_side(key, response)
    precision_found, precision_links = muc_side(response, key)
    assert muc(key, response)[:2] == pytest.approx(
        (
            recall_found / recall_links if recall_links else 0,
            precision_found / precision_links if precision_links else 0,
        )
    )

    key_coref, key_non = _links(key)
    response_coref, response_non = _links(response)
    counts = coref.blanc_counts(coref_align.align(key, response))
    assert counts == coref.BlancCounts(
        len(key_coref & response_coref),
        len(key_coref),
        len(response_coref),
        len(key_non & response_non),
        len(key_non),
        len(response_non),
    )


@given(st.lists(st.tuples(partitions(), partitions()), min_size=1, max_size=4))
def test_many_documents_equal_their_disjoint_union(
    documents: list[tuple[list[set[int]], list[set[int]]]],
) -> None:
    key_docs = {f"d{n}": key for n, (key, _) in enumerate(documents)}
    response_docs = {f"d{n}": response for n, (_, response) in enumerate(documents)}
    union_key = [{(n, m) for m in chain} for n, (key, _) in enumerate(documents) for chain in key]
    union_response = [{(n, m) for m in chain} for n, (_, response) in enumerate(documents) for chain in response]
    # BLANC is left out: in one document, mentions of different documents form non-coreference links.
    for metric in ("muc", "b_cubed", "ceaf_m", "ceaf_e", "lea"):
        assert score_documents(key_docs, response_docs, metric) == pytest.approx(
            SINGLE_DOCUMENT[metric](union_key, union_response)
        ), metric
    assert conll_f1_documents(key_docs, response_docs) == pytest.approx(conll_f1(union_key, union_response))


# --- JSON chains ------------------------------------------------------------------------


def test_load_chains_json(tmp_path: Path) -> None:
    path = tmp_path / "key.json"
    data = {"patient-1": [["T1", "T4"], ["T2", "T1"]], "patient-2": [[3, 5]]}
    path.write_text(json.dumps(data))
    loaded = load_chains_json(path)
    assert loaded == data
    # The repeated T1 reaches the metrics, which score it once (as the reference does).
    assert coref_align.align([["T1", "T4"], ["T2"]], loaded["patient-1"]).repeated_response_mentions == 1


@pytest.mark.parametrize(
    ("text", "message", "line", "record"),
    [
        ('{"p1": [["T1"],\n ["T2"', "invalid JSON", 2, None),
        ('[["T1"]]', "expected an object", None, None),
        ('{"p1": ["T1", "T2"]}', "expected a list of chains", None, "p1"),
        ('{"p1": [[true]]}', "not a string or an integer", None, "p1"),
        ('{"p1": [[["T1"]]]}', "not a string or an integer", None, "p1"),
    ],
)
def test_load_chains_json_errors_name_the_place(
    tmp_path: Path, text: str, message: str, line: int | None, record: str | None
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(SourceError, match=message) as raised:
        load_chains_json(path)
    assert raised.value.path == str(path)
    assert raised.value.line == line
    assert raised.value.record == record


# --- The reference scorer's test suite, read from CoNLL files and scored by `clincorp score coref`.
#
# tests/reference_scorer/DataFiles/ transcribes the cases of the reference scorer's
# test/DataFiles (TC-A … TC-N) in the same layouts: five tab-separated columns for TC-A, TC-M and
# TC-N, two (document, coreference) for TC-B … TC-L. Tokens are invented; the chains are those
# of test/TestCases.README. Expected values: test/CorefMetricTestConfig.pm (v8.01, cases A1–N6,
# metric names as there), then the LEA values of test/TestCases.README, which the configuration
# does not list.

DATA_FILES = Path(__file__).parent / "reference_scorer" / "DataFiles"
A4_BCUB = (10 / 3 / 6, (1 + 4 / 3 + 1 / 2) / 7, 2 * (5 / 9) * (17 / 42) / ((5 / 9) + (17 / 42)))
A4_VALUES: dict[str, Expected] = {
    "muc": (1 / 3, 1 / 3, 1 / 3),
    "bcub": A4_BCUB,
    "ceafm": (0.66667, 0.57143, 0.61538),
    "ceafe": (0.73333, 0.55, 0.62857),
    "blanc": (0.35227, 0.27206, 0.30357),
}
# (id, key file, response file, {metric: (recall, precision, F1)}) as in CorefMetricTestConfig.pm
REFERENCE_CONFIG: list[tuple[str, str, str, dict[str, Expected]]] = [
    (
        "A1",
        "TC-A.key",
        "TC-A-1.response",
        {"muc": ONE, "bcub": (6 / 6, 6 / 6, 1), "ceafm": ONE, "ceafe": ONE, "blanc": ONE},
    ),
    (
        "A2",
        "TC-A.key",
        "TC-A-2.response",
        {
            "muc": (1 / 3, 1 / 1, 0.5),
            "bcub": ((7 / 3) / 6, 3 / 3, 14 / 25),
            "ceafm": (0.5, 1, 0.66667),
            "ceafe": (0.6, 0.9, 0.72),
            "blanc": (0.21591, 1, 0.35385),
        },
    ),
    (
        "A3",
        "TC-A.key",
        "TC-A-3.response",
        {
            "muc": (3 / 3, 3 / 5, 0.75),
            "bcub": (6 / 6, (4 + 7 / 12) / 9, 110 / 163),
            "ceafm": (1, 0.66667, 0.8),
            "ceafe": (0.88571, 0.66429, 0.75918),
            "blanc": (1, 0.42593, 0.59717),
        },
    ),
    (
        "A4",
        "TC-A.key",
        "TC-A-4.response",
        {**A4_VALUES, "bcub": ((3 + 1 / 3) / 6, (1 + 4 / 3 + 1 / 2) / 7, A4_BCUB[2])},
    ),
    (
        "A5",
        "TC-A.key",
        "TC-A-5.response",
        {
            "muc": (1 / 3, 1 / 4, 2 / 7),
            "bcub": ((3 + 1 / 3) / 6, 2.5 / 8, 2 * (5 / 9) * (5 / 16) / ((5 / 9) + (5 / 16))),
            "ceafm": (0.66667, 0.5, 0.57143),
            "ceafe": (0.68889, 0.51667, 0.59048),
            "blanc": (0.35227, 0.19048, 0.24716),
        },
    ),
    (
        "A6",
        "TC-A.key",
        "TC-A-6.response",
        {
            "muc": (1 / 3, 1 / 4, 2 / 7),
            "bcub": ((10 / 3) / 6, (1 + 4 / 3 + 1 / 2) / 8, 2 * (5 / 9) * (17 / 48) / ((5 / 9) + (17 / 48))),
            "ceafm": (0.66667, 0.5, 0.57143),
            "ceafe": (0.73333, 0.55, 0.62857),
            "blanc": (0.35227, 0.20870, 0.25817),
        },
    ),
    ("A7", "TC-A.key", "TC-A-7.response", A4_VALUES),
    ("A8", "TC-A.key", "TC-A-8.response", A4_VALUES),
    ("A9", "TC-A.key", "TC-A-9.response", A4_VALUES),
    (
        "A10",
        "TC-A.key",
        "TC-A-10.response",
        {"muc": ZERO, "bcub": (3 / 6, 6 / 6, 2 / 3), "blanc": (0.5, 0.36667, 0.42308)},
    ),
    (
        "A11",
        "TC-A.key",
        "TC-A-11.response",
        {
            "muc": (3 / 3, 3 / 5, 6 / 8),
            "bcub": (6 / 6, (1 / 6 + 2 * 2 / 6 + 3 * 3 / 6) / 6, 14 / 25),
            "blanc": (0.5, 0.13333, 0.21053),
        },
    ),
    (
        "A12",
        "TC-A.key",
        "TC-A-12.response",
        {
            "muc": ZERO,
            "bcub": ((1 + 1 / 2 + 2 / 3) / 6, 4 / 7, 2 * (13 / 36) * (4 / 7) / ((13 / 36) + (4 / 7))),
            "blanc": (0.22727, 0.11905, 0.15625),
        },
    ),
    (
        "A13",
        "TC-A.key",
        "TC-A-13.response",
        {
            "muc": (1 / 3, 1 / 6, 2 / 9),
            "bcub": (
                (1 + 1 / 2 + 2 * 2 / 3) / 6,
                (1 / 7 + 1 / 7 + 2 * 2 / 7) / 7,
                2 * (17 / 36) * (6 / 49) / ((17 / 36) + (6 / 49)),
            ),
            "blanc": (0.125, 0.02381, 0.04),
        },
    ),
    ("B1", "TC-B.key", "TC-B-1.response", {"blanc": (1 / 2 * (1 / 4 + 1 / 3),) * 3}),
    ("C1", "TC-C.key", "TC-C-1.response", {"blanc": (1 / 2 * (2 / 5 + 10 / 16),) * 3}),
    ("D1", "TC-D.key", "TC-D-1.response", {"muc": rp(9 / 9, 9 / 10), "bcub": rp(12 / 12, 16 / 21)}),
    ("E1", "TC-E.key", "TC-E-1.response", {"muc": rp(9 / 9, 9 / 10), "bcub": rp(1, 7 / 12)}),
    ("F1", "TC-F.key", "TC-F-1.response", {"muc": rp(2 / 3, 2 / 2)}),
    ("G1", "TC-G.key", "TC-G-1.response", {"muc": rp(2 / 2, 2 / 3)}),
    ("H1", "TC-H.key", "TC-H-1.response", {"muc": ONE}),
    ("I1", "TC-I.key", "TC-I-1.response", {"muc": rp(2 / 3, 2 / 2)}),
    ("J1", "TC-J.key", "TC-J-1.response", {"muc": rp(1 / 2, 1 / 1)}),
    ("K1", "TC-K.key", "TC-K-1.response", {"muc": (3 / 6, 3 / 6, 3 / 6)}),
    ("L1", "TC-L.key", "TC-L-1.response", {"muc": rp(2 / 5, 2 / 4)}),
    ("M1", "TC-M.key", "TC-M-1.response", {"muc": ONE, "bcub": ONE, "ceafm": ONE, "ceafe": ONE, "blanc": ONE}),
    ("M2", "TC-M.key", "TC-M-2.response", {"muc": ZERO, "blanc": ZERO}),
    ("M3", "TC-M.key", "TC-M-3.response", {"blanc": (0.26667, 1, 0.42105)}),
    ("M4", "TC-M.key", "TC-M-4.response", {"blanc": (0.2, 0.2, 0.2)}),
    ("M5", "TC-M.key", "TC-M-5.response", {"muc": ZERO, "blanc": ZERO}),
    ("M6", "TC-M.key", "TC-M-6.response", {"blanc": (0.06667, 0.25, 0.10526)}),
    ("N1", "TC-N.key", "TC-N-1.response", {"muc": ZERO, "blanc": ONE}),
    ("N2", "TC-N.key", "TC-N-2.response", {"muc": ZERO, "blanc": ZERO}),
    ("N3", "TC-N.key", "TC-N-3.response", {"blanc": (0.73333, 1, 0.84615)}),
    ("N4", "TC-N.key", "TC-N-4.response", {"muc": ZERO, "blanc": (0.2, 0.2, 0.2)}),
    ("N5", "TC-N.key", "TC-N-5.response", {"blanc": ZERO}),
    ("N6", "TC-N.key", "TC-N-6.response", {"blanc": (0.13333, 0.18182, 0.15385)}),
]
CONFIG_METRIC = {"muc": "muc", "bcub": "b_cubed", "ceafm": "ceaf_m", "ceafe": "ceaf_e", "blanc": "blanc"}
LEA_FROM_README = {case: values["lea"] for case, _, _, values in REFERENCE_CASES if "lea" in values}
FILE_CASES = [
    pytest.param(key, response, {CONFIG_METRIC[m]: v for m, v in values.items()}, id=f"{case}-config")
    for case, key, response, values in REFERENCE_CONFIG
] + [
    pytest.param(key, response, {"lea": LEA_FROM_README[case]}, id=f"{case}-lea-readme")
    for case, key, response, _ in REFERENCE_CONFIG
    if case in LEA_FROM_README
]


def reference_file_scores(key: str, response: str, *options: str) -> dict[str, dict[str, float]]:
    from clinical_corpora.builders.commands.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["score", "coref", str(DATA_FILES / key), str(DATA_FILES / response), "--json", *options])
    assert status == 0
    return json.loads(out.getvalue())


@pytest.mark.parametrize(("key", "response", "expected"), FILE_CASES)
def test_reference_scorer_data_files_through_the_cli(key: str, response: str, expected: dict[str, Expected]) -> None:
    scores = reference_file_scores(key, response)
    for metric, values in expected.items():
        actual = (scores[metric]["recall"], scores[metric]["precision"], scores[metric]["f1"])
        assert actual == pytest.approx(values, abs=1e-4), metric


def test_every_expected_value_of_the_configuration_is_checked() -> None:
    # 36 cases (A1–A13, B1–L1, M1–M6, N1–N6); recall, precision and F1 of each metric listed:
    # 273 values from the configuration (muc 28, bcub 16, ceafm 10, ceafe 10, blanc 27 triples)
    # and 108 LEA values from the README, 381 in all.
    config_values = sum(3 * len(values) for _, _, _, values in REFERENCE_CONFIG)
    readme_values = sum(3 for case, _, _, _ in REFERENCE_CONFIG if case in LEA_FROM_README)
    assert (len(REFERENCE_CONFIG), config_values, readme_values) == (36, 273, 108)
    assert {path.name for path in DATA_FILES.iterdir()} == {
        name for _, key, response, _ in REFERENCE_CONFIG for name in (key, response)
    }


# TC-A's tokens; response {a} {bcx} {dex}: x (token 2, "junk") is in no key chain and in two
# response chains. scorer.pl keeps both occurrences (its repeat check only sees mentions it
# already matched to the key), so x counts twice in the precision of every metric.
TWINLESS_TWICE = """\
#begin document (LuoTestCase);
test1\t0\t0\ta1\t(1
test1\t0\t1\ta2\t1)
test1\t0\t2\tjunk\t(2)|(3)
test1\t0\t3\tb1\t(2
test1\t0\t4\tb2\t-
test1\t0\t5\tb3\t-
test1\t0\t6\tb4\t2)
test1\t0\t7\tjnk\t-
test1\t0\t8\t.\t-

test2\t0\t0\tc\t(2)
test2\t0\t1\tjnk\t-
test2\t0\t2\td1\t(3
test2\t0\t3\td2\t3)
test2\t0\t4\tjnk\t-
test2\t0\t5\te\t(3)
test2\t0\t6\tjnk\t-
test2\t0\t7\tf1\t-
test2\t0\t8\tf2\t-
test2\t0\t9\tf3\t-
test2\t0\t10\t.\t-
#end document
"""
# Worked by hand from lib/CorScorer.pm's definitions. Key {a} {bc} {def}; response chains of
# sizes 1, 3, 3 (7 mentions) as scorer.pl counts them, 1, 3, 2 (6) when x is deduplicated.
TWINLESS_AS_REFERENCE: dict[str, Expected] = {
    "muc": rp(2 / 3, 2 / 4),
    "b_cubed": rp(13 / 3 / 6, (1 + 2 / 3 + 2 / 3 + 2 / 3 + 2 / 3) / 7),
    "ceaf_m": rp(5 / 6, 5 / 7),
    "ceaf_e": rp((1 + 4 / 5 + 4 / 6) / 3, (1 + 4 / 5 + 4 / 6) / 3),
    # coreference links: 2 of 4 key, 2 of 6 distinct response pairs; non-coreference: 8 of 11
    # key, 8 of 14 distinct response pairs (x–x across the two chains is one of them).
    "blanc": ((1 / 2 + 8 / 11) / 2, (2 / 6 + 8 / 14) / 2, (f1(1 / 2, 2 / 6) + f1(8 / 11, 8 / 14)) / 2),
    "lea": rp((1 + 2 + 3 * (1 / 3)) / 6, (1 + 3 * (1 / 3) + 3 * (1 / 3)) / 7),
}
TWINLESS_DEDUPLICATED: dict[str, Expected] = {
    "muc": rp(2 / 3, 2 / 3),
    "b_cubed": rp(13 / 3 / 6, (1 + 2 / 3 + 2 / 3 + 1 + 1) / 6),
    "ceaf_m": rp(5 / 6, 5 / 6),
    "ceaf_e": rp((1 + 4 / 5 + 4 / 5) / 3, (1 + 4 / 5 + 4 / 5) / 3),
    "lea": rp((1 + 2 + 3 * (1 / 3)) / 6, (1 + 3 * (1 / 3) + 2) / 6),
}


@pytest.mark.parametrize(
    ("options", "expected"),
    [((), TWINLESS_AS_REFERENCE), (("--dedupe-twinless",), TWINLESS_DEDUPLICATED)],
    ids=["as-scorer.pl", "dedupe-twinless"],
)
def test_twinless_mention_in_two_response_chains(
    tmp_path: Path, options: tuple[str, ...], expected: dict[str, Expected]
) -> None:
    response = tmp_path / "twinless.response"
    response.write_text(TWINLESS_TWICE)
    scores = reference_file_scores("TC-A.key", str(response), *options)
    for metric, values in expected.items():
        actual = (scores[metric]["recall"], scores[metric]["precision"], scores[metric]["f1"])
        assert actual == pytest.approx(values, abs=1e-9), metric


def test_twinless_repeats_are_kept_unless_deduplicated() -> None:
    key, response = chains("a bc def"), chains("a bcx dex")
    kept = coref_align.align(key, response)
    assert (kept.response_sizes, kept.repeated_response_mentions, kept.response_links) == ((1, 3, 3), 0, (6, 14))
    deduped = coref_align.align(key, response, dedupe_twinless=True)
    assert (deduped.response_sizes, deduped.repeated_response_mentions, deduped.response_links) == ((1, 3, 2), 1, None)
    # A key mention repeated in the response is dropped either way (TC-A-8).
    assert coref_align.align(key, chains("a bcx dy bz")).response_sizes == (1, 3, 2, 1)
