"""Score predicted BRAT events against gold with the n2c2 2022 SDOH criteria; write the scores CSV.

Documents are paired by relative path (a document in one folder only is an error). Defaults are
the challenge's: triggers overlap, span-only arguments exact, span-with-value arguments label. The gold
may be an sdoh release folder (or its ``data/sdoh`` config) instead of a BRAT folder: it is scored as its
``clincorp export brat`` folder, so predictions are BRAT files at the same ``{split}/{source}/<doc>``
paths (with ``--split S``: the ``{source}/<doc>`` paths of that split's folder).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import get_args

from clinical_corpora.builders.contract.scored import report_scores
from clinical_corpora.corpora.sdoh.scoring import Reading, file_limit, gold_folder, score_folders_to_csv
from clinical_corpora.validation.metrics.sdoh import (
    LabeledCriterion,
    ScoringCriteria,
    SpanCriterion,
    TriggerCriterion,
    detailed_csv_path,
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "gold_dir",
        type=Path,
        help="folder of gold <doc>.txt/<doc>.ann files, or an sdoh release (or its data/sdoh config folder)",
    )
    parser.add_argument("pred_dir", type=Path, help="folder of predicted files at the same relative paths")
    parser.add_argument("--out", type=Path, required=True, help="scores CSV (event,argument,subtype,NT,NP,TP,P,R,F1)")
    parser.add_argument("--score-trig", choices=get_args(TriggerCriterion), default="overlap")
    parser.add_argument("--score-span", choices=get_args(SpanCriterion), default="exact")
    parser.add_argument("--score-labeled", choices=get_args(LabeledCriterion), default="label")
    parser.add_argument(
        "--detailed", action="store_true", help="also write per-document rows to <out stem>_detailed.csv"
    )
    parser.add_argument(
        "--split", help="with a release as gold: score this split only (PRED is the folder of that split)"
    )
    parser.add_argument("--workers", type=_positive_int, default=1, help="processes scoring chunks of documents")


def _positive_int(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {value!r}")
    return int(value)


def run(args: argparse.Namespace) -> int:
    with gold_folder(args.gold_dir, args.split) as gold:
        rows = score_folders_to_csv(
            gold,
            args.pred_dir,
            args.out,
            ScoringCriteria(args.score_trig, args.score_span, args.score_labeled),
            detailed=args.detailed,
            reading=Reading(args.workers, file_limit(args.gold_dir)),
        )
    overall = rows[0]
    report_scores(
        args,
        {
            "precision": overall.precision,
            "recall": overall.recall,
            "f1": overall.f1,
            "tp": overall.tp,
            "nt": overall.nt,
            "np": overall.np,
        },
        None,
    )
    print(
        f"OVERALL NT={overall.nt} NP={overall.np} TP={overall.tp} "
        f"P={overall.precision:.4f} R={overall.recall:.4f} F1={overall.f1:.4f}; scores: {args.out}"
        + (f", per document: {detailed_csv_path(args.out)}" if args.detailed else "")
    )
    return 0
