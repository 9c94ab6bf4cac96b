"""Score SNOMED CT entity-linking CSV files with the challenge's character IoU.

Reads the two ``note_id,start,end,concept_id`` files with the challenge reader and hands the
annotations to the pure metric in :mod:`clinical_corpora.validation.metrics.iou`. The gold may also be a
snomed_el release (or its ``data/snomed_el`` config), whose annotations are read from its records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.release_view import ReleaseView, chosen_splits, release_corpus, scored_release
from clinical_corpora.builders.sources.mimic_notes import read_span_annotations
from clinical_corpora.core.annotations import SpanAnnotation
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.corpora.snomed_el.exports import CONFIG, split_annotations
from clinical_corpora.validation.metrics.iou import DEFAULT_BOOTSTRAP_REPLICATES, DEFAULT_SEED, score


def score_files(
    gold_csv: str | Path,
    pred_csv: str | Path,
    *,
    replicates: int = DEFAULT_BOOTSTRAP_REPLICATES,
    seed: int = DEFAULT_SEED,
    split: str | None = None,
) -> dict[str, Any]:
    """:func:`~clinical_corpora.validation.metrics.iou.score` of two CSV files (gold first); the gold may be
    a release (``split``: one split of it)."""
    gold = gold_annotations(Path(gold_csv), split)
    return score(gold, read_span_annotations(pred_csv), replicates=replicates, seed=seed)


def gold_annotations(gold: Path, split: str | None = None) -> list[SpanAnnotation]:
    """The annotations of a gold CSV, or of a snomed_el release or its ``data/snomed_el`` config (all splits,
    or ``split``), as ``clincorp export challenge-csv`` writes them."""
    location = scored_release(gold, split)
    if location is None:
        return read_span_annotations(gold)
    release, config = location
    if release_corpus(release) != CONFIG or config not in (None, CONFIG):
        raise ClincorpError(f"{gold} is not a snomed_el release or its data/{CONFIG} config")
    view = ReleaseView(release)
    return [annotation for name in chosen_splits(view, CONFIG, split) for annotation in split_annotations(view, name)]


__all__ = ["gold_annotations", "score_files"]
