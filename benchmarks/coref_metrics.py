"""Benchmark: all six coreference metrics on one synthetic patient, against a naive baseline.

The patient has the shape of the radiology tracking corpus (seed 000): about half the chains
are singletons, chains reach dozens of mentions. The response splits, merges, drops and
invents mentions. The naive baseline scores the same way the reference scorer's code does:
pairwise loops for MUC, B³ and LEA, every mention pair enumerated for BLANC, and the
Hungarian algorithm on the full key × response similarity matrix for CEAF.

Prints JSON. Target (issue 5): all six metrics on a 500-mention patient in ≤ 1 s.

    python benchmarks/coref_metrics.py [--sizes 500 2000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import time
from collections.abc import Callable

import numpy as np
from scipy.optimize import linear_sum_assignment

from clinical_corpora.validation.metrics.coref import METRIC_NAMES, Score, score_documents_all

Chain = set[str]
TARGET_SECONDS = 1.0


def synthetic_patient(mentions: int, seed: int) -> tuple[list[Chain], list[Chain]]:
    """Key chains over ``mentions`` mention ids, and a response that gets some of them wrong."""
    rng = random.Random(seed)
    ids = [f"r{n // 40}_m{n % 40}" for n in range(mentions)]
    key: list[Chain] = []
    position = 0
    while position < mentions:
        size = 1 if rng.random() < 0.5 else min(int(rng.paretovariate(1.2)) + 1, 53)
        key.append(set(ids[position : position + size]))
        position += size

    response: list[Chain] = []
    for chain in key:
        kept = {mention for mention in chain if rng.random() > 0.05}
        if len(kept) > 3 and rng.random() < 0.3:
            ordered = sorted(kept)
            cut = rng.randrange(1, len(ordered))
            response += [set(ordered[:cut]), set(ordered[cut:])]
        elif kept:
            response.append(kept)
    for _ in range(len(response) // 10):
        first, second = rng.sample(range(len(response)), 2)
        response[first] |= response[second]
        response[second] = set()
    response = [chain for chain in response if chain]
    for n in range(mentions // 20):
        invented = f"spurious_{n}"
        if rng.random() < 0.5:
            response.append({invented})
        else:
            rng.choice(response).add(invented)
    return key, response


def _f(recall_num: float, recall_den: float, precision_num: float, precision_den: float) -> Score:
    recall = recall_num / recall_den if recall_den else 0.0
    precision = precision_num / precision_den if precision_den else 0.0
    total = recall + precision
    return Score(recall, precision, 2 * recall * precision / total if total else 0.0)


def _chain_index(chains: list[Chain]) -> dict[str, int]:
    return {mention: n for n, chain in enumerate(chains) for mention in chain}


def naive_muc(key: list[Chain], response: list[Chain]) -> Score:
    gold_of = _chain_index(key)
    correct = 0
    for chain in response:
        ordered = list(chain)
        for i, first in enumerate(ordered):
            if any(first in gold_of and gold_of[first] == gold_of.get(second) for second in ordered[i + 1 :]):
                correct += 1
    return _f(correct, sum(len(c) - 1 for c in key), correct, sum(len(c) - 1 for c in response))


def naive_b_cubed(key: list[Chain], response: list[Chain]) -> Score:
    gold_of = _chain_index(key)
    recall = precision = 0.0
    for chain in response:
        for mention in chain:
            gold = key[gold_of[mention]] if mention in gold_of else set()
            common = sum(1 for other in chain if other in gold)
            precision += common / len(chain)
            recall += common / len(gold) if gold else 0.0
    return _f(recall, sum(map(len, key)), precision, sum(map(len, response)))


def naive_ceaf(key: list[Chain], response: list[Chain], entity_based: bool) -> Score:
    similarity = np.zeros((len(key), len(response)))
    for i, gold in enumerate(key):
        for j, chain in enumerate(response):
            shared = len(gold & chain)
            similarity[i, j] = 2 * shared / (len(gold) + len(chain)) if entity_based else shared
    rows, cols = linear_sum_assignment(similarity, maximize=True)
    aligned = float(similarity[rows, cols].sum())
    if entity_based:
        return _f(aligned, len(key), aligned, len(response))
    return _f(aligned, sum(map(len, key)), aligned, sum(map(len, response)))


def naive_blanc(key: list[Chain], response: list[Chain]) -> Score:
    def links(chains: list[Chain]) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
        chain_of = _chain_index(chains)
        coref: set[tuple[str, str]] = set()
        non_coref: set[tuple[str, str]] = set()
        for first, second in itertools.combinations(sorted(chain_of), 2):
            (coref if chain_of[first] == chain_of[second] else non_coref).add((first, second))
        return coref, non_coref

    key_coref, key_non = links(key)
    response_coref, response_non = links(response)
    coref = _f(len(key_coref & response_coref), len(key_coref), len(key_coref & response_coref), len(response_coref))
    non = _f(len(key_non & response_non), len(key_non), len(key_non & response_non), len(response_non))
    if not key_coref:
        return non
    if not key_non:
        return coref
    return Score((coref[0] + non[0]) / 2, (coref[1] + non[1]) / 2, (coref[2] + non[2]) / 2)


def naive_lea(key: list[Chain], response: list[Chain]) -> Score:
    def side(chains: list[Chain], other: list[Chain]) -> float:
        other_of = _chain_index(other)
        total = 0.0
        for chain in chains:
            if len(chain) == 1:
                (mention,) = chain
                total += 1.0 if mention in other_of and len(other[other_of[mention]]) == 1 else 0.0
                continue
            pairs = list(itertools.combinations(chain, 2))
            found = sum(1 for a, b in pairs if a in other_of and other_of[a] == other_of.get(b))
            total += len(chain) * found / len(pairs)
        return total

    return _f(side(key, response), sum(map(len, key)), side(response, key), sum(map(len, response)))


NAIVE: dict[str, Callable[[list[Chain], list[Chain]], Score]] = {
    "muc": naive_muc,
    "b_cubed": naive_b_cubed,
    "ceaf_m": lambda key, response: naive_ceaf(key, response, entity_based=False),
    "ceaf_e": lambda key, response: naive_ceaf(key, response, entity_based=True),
    "blanc": naive_blanc,
    "lea": naive_lea,
}


def _timed(function: Callable[[], dict[str, Score]], repeats: int) -> tuple[float, dict[str, Score]]:
    """Median wall seconds over ``repeats`` runs, and the last result."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def run(mentions: int, repeats: int) -> dict[str, object]:
    key, response = synthetic_patient(mentions, seed=mentions)
    fast_seconds, fast = _timed(lambda: score_documents_all({"patient": key}, {"patient": response}), repeats)
    naive_seconds, naive = _timed(
        lambda: {name: NAIVE[name](key, response) for name in METRIC_NAMES}, max(1, repeats // 2)
    )
    agree = all(np.allclose(fast[name], naive[name], atol=1e-9) for name in METRIC_NAMES)
    return {
        "mentions": mentions,
        "key_chains": len(key),
        "response_chains": len(response),
        "response_mentions": sum(map(len, response)),
        "fast_seconds": round(fast_seconds, 5),
        "naive_seconds": round(naive_seconds, 5),
        "speedup": round(naive_seconds / fast_seconds, 1),
        "scores_agree": agree,
        "meets_target": fast_seconds <= TARGET_SECONDS,
        "f1": {name: round(fast[name].f1, 4) for name in METRIC_NAMES},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--repeats", type=int, default=5)
    arguments = parser.parse_args()
    if arguments.repeats < 1:
        parser.error("--repeats must be at least 1")
    results = [run(size, arguments.repeats) for size in arguments.sizes]
    print(json.dumps({"benchmark": "coref_metrics", "target_seconds": TARGET_SECONDS, "runs": results}, indent=2))


if __name__ == "__main__":
    main()
