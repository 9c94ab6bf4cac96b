"""Score SNOMED CT entity-linking predictions against gold with the challenge's character IoU.

Both files are ``note_id,start,end,concept_id`` CSVs (gold first); the gold may instead be a snomed_el
release folder or its ``data/snomed_el`` config (``--split`` scores one split of it). Writes the macro character IoU,
the support-weighted IoU, their bootstrap 95% CIs over notes and the per-concept table as JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from clinical_corpora.builders.contract.scored import report_scores
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.corpora.snomed_el.scoring import score_files
from clinical_corpora.validation.metrics.iou import DEFAULT_BOOTSTRAP_REPLICATES, DEFAULT_SEED


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "gold",
        type=Path,
        help="gold annotations CSV (note_id,start,end,concept_id), or a snomed_el release (or its data/snomed_el)",
    )
    parser.add_argument("pred", type=Path, help="predicted annotations CSV, same columns")
    parser.add_argument("--out", type=Path, required=True, help="where to write the scores as JSON")
    parser.add_argument(
        "--replicates",
        type=int,
        default=DEFAULT_BOOTSTRAP_REPLICATES,
        help=f"bootstrap replicates (default {DEFAULT_BOOTSTRAP_REPLICATES})",
    )
    parser.add_argument("--split", help="with a release as gold: score this split only")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"bootstrap seed (default {DEFAULT_SEED})")


def run(args: argparse.Namespace) -> int:
    if args.replicates < 1:
        raise ClincorpError(f"--replicates must be at least 1, got {args.replicates}")
    try:
        scores = score_files(args.gold, args.pred, replicates=args.replicates, seed=args.seed, split=args.split)
    except ValueError as error:
        raise ClincorpError(f"{args.gold}, {args.pred}: {error}") from None
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(scores, indent=2) + "\n", encoding="utf-8")
    report_scores(args, {k: v for k, v in scores.items() if isinstance(v, int | float)}, None)
    low, high = scores["macro_char_iou_ci95"]
    weighted_low, weighted_high = scores["support_weighted_char_iou_ci95"]
    print(
        f"macro character IoU {scores['macro_char_iou']:.4f} (95% CI {low:.4f}-{high:.4f}); "
        f"support-weighted {scores['support_weighted_char_iou']:.4f} "
        f"(95% CI {weighted_low:.4f}-{weighted_high:.4f}); {len(scores['per_concept'])} concepts; "
        f"written to {args.out}"
    )
    return 0
