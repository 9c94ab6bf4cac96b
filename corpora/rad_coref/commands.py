"""Score coreference chains: ``clincorp score coref KEY RESPONSE``.

KEY and RESPONSE are both simple JSON (``{"document": [[mention id, ...], ...]}``, ``.json``) or
both CoNLL-2012 files (any other suffix; mentions are token spans, documents ``(name); part NNN``).
Prints MUC, B³, CEAF-m, CEAF-e, BLANC and LEA recall, precision and F1 and the CoNLL F1, summed
over documents as the CoNLL-2012 reference scorer sums them; ``--json`` prints them as JSON.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Hashable, Sequence
from pathlib import Path

from clinical_corpora.builders.sources.conll2012 import read_conll2012_chains
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.validation.metrics.coref import (
    CONLL_METRICS,
    METRIC_NAMES,
    Score,
    load_chains_json,
    score_documents_all,
)

Documents = dict[str, list[Sequence[Hashable]]]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("key", type=Path, help="gold chains: .json (document → chains) or a CoNLL-2012 file")
    parser.add_argument("response", type=Path, help="system chains, in the key's format")
    parser.add_argument(
        "--metrics",
        nargs="+",
        choices=METRIC_NAMES,
        default=list(METRIC_NAMES),
        help="metrics to report (default: all six)",
    )
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")


def read_chains(path: Path) -> Documents:
    """Documents and their chains from a simple JSON or a CoNLL-2012 file (chosen by suffix)."""
    if not path.is_file():
        raise ClincorpError(f"{path}: no such file")
    if path.suffix.lower() == ".json":
        return {doc: [list(chain) for chain in chains] for doc, chains in load_chains_json(path).items()}
    return {doc: [sorted(chain) for chain in chains] for doc, chains in read_conll2012_chains(path).items()}


def score(key: Documents, response: Documents, metrics: list[str]) -> dict[str, Score]:
    """Scores by metric; malformed chains (a mention twice in the key, unknown documents) are errors."""
    try:
        return score_documents_all(key, response, dict.fromkeys([*metrics, *CONLL_METRICS]))
    except ValueError as error:
        raise ClincorpError(f"cannot score: {error}") from error


def run(args: argparse.Namespace) -> int:
    if (args.key.suffix.lower() == ".json") != (args.response.suffix.lower() == ".json"):
        raise ClincorpError("KEY and RESPONSE must have the same format (both .json or both CoNLL-2012)")
    key, response = read_chains(args.key), read_chains(args.response)
    scores = score(key, response, args.metrics)
    conll = sum(scores[name].f1 for name in CONLL_METRICS) / len(CONLL_METRICS)
    if args.json:
        print(json.dumps({**{name: scores[name]._asdict() for name in args.metrics}, "conll_f1": conll}, indent=2))
        return 0
    print(f"{'metric':<8} {'recall':>8} {'precision':>9} {'f1':>8}")
    for name in args.metrics:
        recall, precision, f1 = (100 * value for value in scores[name])
        print(f"{name:<8} {recall:8.2f} {precision:9.2f} {f1:8.2f}")
    print(f"{'conll':<8} {'':>8} {'':>9} {100 * conll:8.2f}")
    return 0
