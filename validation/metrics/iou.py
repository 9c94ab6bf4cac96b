"""Character-level IoU for span → concept linking (SNOMED CT Entity Linking Challenge).

Reimplements the challenge scorer (``iou_per_class`` in the DrivenData runtime): every character of
every note is labelled with at most one concept per side (a later row of the same file overwrites an
earlier overlapping one, as the scorer's character matrix does); per concept, characters are pooled
over all notes and IoU = |gold ∩ pred| / |gold ∪ pred|; the macro score averages over the union of
gold and predicted concepts, so a concept found on one side only scores 0.

Beyond the challenge: the support-weighted IoU (weights = gold span counts, the paper's
class-weighted IoU), bootstrap CIs resampling notes, and a per-concept table.

One documented difference: a concept whose every character was overwritten by a later overlapping
span has an empty union; the reference then returns NaN for the whole score, here it scores 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from clinical_corpora.core.annotations import SpanAnnotation

DEFAULT_BOOTSTRAP_REPLICATES = 1000
DEFAULT_SEED = 0
CONFIDENCE = 0.95


@dataclass(frozen=True)
class ConceptScore:
    """One row of the per-concept table."""

    concept_id: int
    iou: float
    intersection_chars: int
    union_chars: int
    gold_chars: int
    pred_chars: int
    gold_spans: int
    pred_spans: int


@dataclass(frozen=True)
class _Counts:
    """Character and span counts per (note, concept) pair, one array entry per pair."""

    note_ids: list[str]
    concept_ids: np.ndarray
    note_index: np.ndarray
    concept_index: np.ndarray
    intersection: np.ndarray
    gold_chars: np.ndarray
    pred_chars: np.ndarray
    gold_spans: np.ndarray
    pred_spans: np.ndarray

    def totals(self, note_weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Per-concept sums, each note counted ``note_weights[note]`` times (default once)."""
        weights = None if note_weights is None else note_weights[self.note_index]
        size = len(self.concept_ids)
        return {
            name: np.bincount(
                self.concept_index, weights=values if weights is None else values * weights, minlength=size
            )
            for name, values in (
                ("intersection", self.intersection),
                ("gold_chars", self.gold_chars),
                ("pred_chars", self.pred_chars),
                ("gold_spans", self.gold_spans),
                ("pred_spans", self.pred_spans),
            )
        }


def per_concept_char_iou(gold: Sequence[SpanAnnotation], pred: Sequence[SpanAnnotation]) -> list[ConceptScore]:
    """IoU of every concept in gold or predictions, ordered by concept id."""
    return _concept_table(_count(gold, pred))


def _concept_table(counts: _Counts) -> list[ConceptScore]:
    totals = counts.totals()
    union = totals["gold_chars"] + totals["pred_chars"] - totals["intersection"]
    iou = _iou(totals["intersection"], union)
    return [
        ConceptScore(
            concept_id=int(concept_id),
            iou=float(iou[index]),
            intersection_chars=int(totals["intersection"][index]),
            union_chars=int(union[index]),
            gold_chars=int(totals["gold_chars"][index]),
            pred_chars=int(totals["pred_chars"][index]),
            gold_spans=int(totals["gold_spans"][index]),
            pred_spans=int(totals["pred_spans"][index]),
        )
        for index, concept_id in enumerate(counts.concept_ids)
    ]


def macro_char_iou(gold: Sequence[SpanAnnotation], pred: Sequence[SpanAnnotation]) -> float:
    """The challenge metric: mean per-concept character IoU over gold ∪ predicted concepts."""
    macro, _ = _scores(_count(gold, pred).totals())
    return macro


def support_weighted_char_iou(gold: Sequence[SpanAnnotation], pred: Sequence[SpanAnnotation]) -> float:
    """Per-concept IoU averaged with weights = number of gold spans of the concept."""
    _, weighted = _scores(_count(gold, pred).totals())
    return weighted


def _interval(samples: np.ndarray, tails: list[float]) -> list[float]:
    """The percentiles ``tails`` of the samples that are numbers (NaN, NaN when none is: no note scores)."""
    scored = samples[~np.isnan(samples)]
    return np.percentile(scored, tails).tolist() if len(scored) else [math.nan, math.nan]


def score(
    gold: Sequence[SpanAnnotation],
    pred: Sequence[SpanAnnotation],
    *,
    replicates: int = DEFAULT_BOOTSTRAP_REPLICATES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Both scores, their bootstrap 95% CIs (notes resampled with replacement) and the table."""
    counts = _count(gold, pred)
    macro, weighted = _scores(counts.totals())
    rng = np.random.default_rng(seed)
    n_notes = len(counts.note_ids)
    samples = np.array(
        [
            _scores(counts.totals(np.bincount(rng.integers(0, n_notes, n_notes), minlength=n_notes)))
            for _ in range(replicates)
        ]
    )
    tails = [100 * (1 - CONFIDENCE) / 2, 100 * (1 + CONFIDENCE) / 2]
    macro_ci, weighted_ci = (_interval(samples[:, column], tails) for column in (0, 1))
    return {
        "macro_char_iou": macro,
        "support_weighted_char_iou": weighted,
        "macro_char_iou_ci95": macro_ci,
        "support_weighted_char_iou_ci95": weighted_ci,
        "bootstrap": {"replicates": replicates, "seed": seed, "unit": "note", "notes": n_notes},
        "gold_annotations": len(gold),
        "pred_annotations": len(pred),
        "per_concept": [asdict(row) for row in _concept_table(counts)],
    }


def _iou(intersection: np.ndarray, union: np.ndarray) -> np.ndarray:
    return np.divide(intersection, union, out=np.zeros_like(intersection, dtype=float), where=union > 0)


def _scores(totals: dict[str, np.ndarray]) -> tuple[float, float]:
    """(macro IoU over the concepts present, gold-span-weighted IoU); NaN when undefined."""
    union = totals["gold_chars"] + totals["pred_chars"] - totals["intersection"]
    iou = _iou(totals["intersection"], union)
    present = (totals["gold_spans"] + totals["pred_spans"]) > 0
    support = totals["gold_spans"]
    macro = float(iou[present].mean()) if present.any() else float("nan")
    weighted = float((iou * support).sum() / support.sum()) if support.sum() > 0 else float("nan")
    return macro, weighted


def _count(gold: Sequence[SpanAnnotation], pred: Sequence[SpanAnnotation]) -> _Counts:
    if not gold and not pred:
        raise ValueError("nothing to score: no gold and no predicted annotations")
    concept_ids = np.array(sorted({a.concept_id for a in gold} | {a.concept_id for a in pred}), dtype=np.int64)
    concept_index = {int(concept_id): index for index, concept_id in enumerate(concept_ids)}
    gold_by_note, pred_by_note = _by_note(gold), _by_note(pred)
    note_ids = sorted(gold_by_note.keys() | pred_by_note.keys())
    rows: list[tuple[int, int, int, int, int, int, int]] = []
    for note_index, note_id in enumerate(note_ids):
        note_gold, note_pred = gold_by_note.get(note_id, []), pred_by_note.get(note_id, [])
        length = max(a.end for a in [*note_gold, *note_pred])
        gold_chars = _paint(note_gold, length, concept_index)
        pred_chars = _paint(note_pred, length, concept_index)
        labelled = {
            "gold_chars": gold_chars[gold_chars >= 0],
            "pred_chars": pred_chars[pred_chars >= 0],
            "intersection": gold_chars[(gold_chars == pred_chars) & (gold_chars >= 0)],
        }
        per_concept = {name: _value_counts(values) for name, values in labelled.items()}
        gold_spans = _value_counts(np.array([concept_index[a.concept_id] for a in note_gold], dtype=np.int64))
        pred_spans = _value_counts(np.array([concept_index[a.concept_id] for a in note_pred], dtype=np.int64))
        for concept in sorted(gold_spans.keys() | pred_spans.keys()):
            rows.append(
                (
                    note_index,
                    concept,
                    per_concept["intersection"].get(concept, 0),
                    per_concept["gold_chars"].get(concept, 0),
                    per_concept["pred_chars"].get(concept, 0),
                    gold_spans.get(concept, 0),
                    pred_spans.get(concept, 0),
                )
            )
    columns = np.array(rows, dtype=np.int64).reshape(-1, 7).T
    note_indices, concept_indices = np.ascontiguousarray(columns[0]), np.ascontiguousarray(columns[1])
    sums = (np.ascontiguousarray(column, dtype=np.float64) for column in columns[2:])
    return _Counts(note_ids, concept_ids, note_indices, concept_indices, *sums)


def _by_note(annotations: Iterable[SpanAnnotation]) -> dict[str, list[SpanAnnotation]]:
    by_note: dict[str, list[SpanAnnotation]] = {}
    for annotation in annotations:
        by_note.setdefault(annotation.note_id, []).append(annotation)
    return by_note


def _paint(annotations: Sequence[SpanAnnotation], length: int, concept_index: dict[int, int]) -> np.ndarray:
    """Concept index of each character (-1: none); later spans overwrite earlier ones."""
    chars = np.full(length, -1, dtype=np.int64)
    for annotation in annotations:
        chars[annotation.start : annotation.end] = concept_index[annotation.concept_id]
    return chars


def _value_counts(values: np.ndarray) -> dict[int, int]:
    unique, counts = np.unique(values, return_counts=True)
    return dict(zip(unique.tolist(), counts.tolist(), strict=True))


__all__ = [
    "ConceptScore",
    "macro_char_iou",
    "per_concept_char_iou",
    "score",
    "support_weighted_char_iou",
]
