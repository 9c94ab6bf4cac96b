"""Score SNOMED CT entity-linking CSV files with the challenge's character IoU.

Reads the two ``note_id,start,end,concept_id`` files with the challenge reader and hands the
annotations to the pure metric in :mod:`clinical_corpora.validation.metrics.iou`. The gold may also be a
snomed_el release (or its ``data/snomed_el`` config), whose annotations are read from its records.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.release_view import GivenRelease, given_release
from clinical_corpora.builders.sources.mimic.notes import read_span_annotations
from clinical_corpora.core.annotations import SpanAnnotation
from clinical_corpora.corpora.snomed_el.exports import CONFIG, split_annotations
from clinical_corpora.validation.metrics.iou import DEFAULT_BOOTSTRAP_REPLICATES, DEFAULT_SEED, score

logger = logging.getLogger(__name__)


def score_files(
    gold_csv: Path | GivenRelease,
    pred_csv: str | Path,
    *,
    replicates: int = DEFAULT_BOOTSTRAP_REPLICATES,
    seed: int = DEFAULT_SEED,
    split: str | None = None,
) -> dict[str, Any]:
    """:func:`~clinical_corpora.validation.metrics.iou.score` of two CSV files (gold first); the gold may be
    a release (``split``: one split of it)."""
    gold = gold_annotations(gold_csv, split)
    predicted = read_span_annotations(pred_csv)
    warn_overlaps(pred_csv, predicted)
    return score(gold, predicted, replicates=replicates, seed=seed)


LISTED_OVERLAPS = 5
"""Overlapping pairs named in the warning; the rest are counted."""


def overlapping_spans(annotations: Sequence[SpanAnnotation]) -> list[tuple[SpanAnnotation, SpanAnnotation]]:
    """Pairs of annotations of one note whose spans share characters, each with the earlier-ending one it
    overlaps (file order within a note kept by the stable sort)."""
    pairs = []
    ordered = sorted(annotations, key=lambda a: (a.note_id, a.start))
    reach: SpanAnnotation | None = None  # the annotation reaching furthest so far in the note
    for annotation in ordered:
        if reach is not None and reach.note_id == annotation.note_id and annotation.start < reach.end:
            pairs.append((reach, annotation))
        if reach is None or reach.note_id != annotation.note_id or annotation.end > reach.end:
            reach = annotation
    return pairs


def warn_overlaps(path: str | Path, annotations: Sequence[SpanAnnotation]) -> None:
    """A warning naming the lines of overlapping predicted spans: the challenge's scorer accepts them and the
    row later in the file takes the shared characters (its character matrix is written row by row), as
    :func:`~clinical_corpora.validation.metrics.iou.score` does, but its annotation guidelines allow no overlap
    (Davidson et al. 2025), so a submission holding them is worth a look."""
    pairs = overlapping_spans(annotations)
    if not pairs:
        return
    named = "; ".join(
        f"note {a.note_id}: line {a.line} ({a.start}-{a.end}) and line {b.line} ({b.start}-{b.end})"
        for a, b in pairs[:LISTED_OVERLAPS]
    )
    more = f" and {len(pairs) - LISTED_OVERLAPS} more" if len(pairs) > LISTED_OVERLAPS else ""
    logger.warning(
        "%s: %d pair(s) of overlapping spans (%s%s); scored as the challenge's scorer scores them: the later row "
        "takes the characters both cover",
        path,
        len(pairs),
        named,
        more,
    )


def gold_annotations(gold: Path | GivenRelease, split: str | None = None) -> list[SpanAnnotation]:
    """The annotations of a gold CSV, or of a snomed_el release or its ``data/snomed_el`` config (all splits,
    or ``split``), as ``clincorp export challenge-csv`` writes them."""
    release = given_release(gold, split)
    if release is None:
        assert isinstance(gold, Path)
        return read_span_annotations(gold)
    release = release.of(CONFIG, CONFIG)
    view = release.view
    return [annotation for name in release.splits(CONFIG, split) for annotation in split_annotations(view, name)]


__all__ = ["gold_annotations", "overlapping_spans", "score_files", "warn_overlaps"]
