"""Score SNOMED CT entity-linking CSV files with the challenge's character IoU.

Reads the two ``note_id,start,end,concept_id`` files with the challenge reader and hands the
annotations to the pure metric in :mod:`clinical_corpora.validation.metrics.iou`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clinical_corpora.builders.sources.mimic_notes import read_span_annotations
from clinical_corpora.validation.metrics.iou import DEFAULT_BOOTSTRAP_REPLICATES, DEFAULT_SEED, score


def score_files(
    gold_csv: str | Path,
    pred_csv: str | Path,
    *,
    replicates: int = DEFAULT_BOOTSTRAP_REPLICATES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """:func:`~clinical_corpora.validation.metrics.iou.score` of two CSV files (gold first)."""
    return score(read_span_annotations(gold_csv), read_span_annotations(pred_csv), replicates=replicates, seed=seed)


__all__ = ["score_files"]
