"""Coreference metrics against the CoNLL-2012 reference scorer's own test cases, plus properties.

Cases and expected values are transcribed from the reference scorer's test suite
(reference-coreference-scorers, test/CorefMetricTestConfig.pm for MUC, B³, CEAF and BLANC;
test/TestCases.README for LEA and the chains of each case). Mentions are single characters;
a capital ``B`` is a mention distinct from ``b`` (an overlapping span), a repeated letter is
a repeated mention.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clinical_corpora.core.errors import SourceError
from clinical_corpora.validation.metrics import coref
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
    assert coref.align(chains("a bc def"), chains("a bcx dy bbbz")).repeated_response_mentions == 3


def test_counts_expose_numerators_and_denominators() -> None:
    overlap = coref.align(chains("a bc def"), chains("a bcx dy z"))
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
    counts = coref.blanc_counts(coref.align(key, response))
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
    assert coref.align([["T1", "T4"], ["T2"]], loaded["patient-1"]).repeated_response_mentions == 1


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
