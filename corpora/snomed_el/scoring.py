"""Score SNOMED CT entity-linking CSV files with the challenge's character IoU.

Reads the two ``note_id,start,end,concept_id`` files with the challenge reader and hands the
annotations to the pure metric in :mod:`clinical_corpora.validation.metrics.iou`. The gold may also be a
snomed_el release (or its ``data/snomed_el`` config), whose annotations are read from its records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clinical_corpora.builders.release_view import ReleaseView, release_corpus, release_location
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
    location = release_location(gold)
    if location is None:
        if split is not None:
            raise ClincorpError(f"--split applies to a release as gold; {gold} is not a release")
        return read_span_annotations(gold)
    release, config = location
    if release_corpus(release) != CONFIG or config not in (None, CONFIG):
        raise ClincorpError(f"{gold} is not a snomed_el release or its data/{CONFIG} config")
    view = ReleaseView(release)
    splits = view.splits(CONFIG)
    if split is not None and split not in splits:
        raise ClincorpError(f"{release} has no split {split!r}; its splits are {', '.join(splits)}")
    return [annotation for name in ([split] if split else splits) for annotation in split_annotations(view, name)]


__all__ = ["gold_annotations", "score_files"]
