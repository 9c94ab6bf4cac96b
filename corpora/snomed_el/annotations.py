"""Reading ``snomed_el``'s annotation files: each note's spans, and the split the note belongs to.

``annotations`` (``train_annotations.csv``) and the optional ``test_annotations`` (the challenge's
held-out test annotations, same columns) are ``note_id,start,end,concept_id`` CSVs. With both, the
challenge's split is kept; else the notes are split by a seeded shuffle (:data:`TEST_FRACTION` of the
notes to test, shuffled with :data:`SPLIT_SEED`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from clinical_corpora.builders.contract.base import BuildContext
from clinical_corpora.builders.sources.mimic.notes import read_span_annotations
from clinical_corpora.core.annotations import SpanAnnotation
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.splits import seeded_split
from clinical_corpora.corpora.snomed_el.records import Split

SPLIT_SEED = 20240301
TEST_FRACTION = 0.25
"""The challenge held out 68 of its 272 notes (25%) as the test set."""


@dataclass(frozen=True)
class NoteAnnotations:
    """The annotations of one note, the split they came with and the file they were read from."""

    split: Split
    path: Path
    spans: list[SpanAnnotation]


def read_annotations(
    ctx: BuildContext, split_seed: int = SPLIT_SEED, test_fraction: float = TEST_FRACTION
) -> dict[str, NoteAnnotations]:
    """Annotations by note with their split: the challenge's when test annotations are given, else seeded
    (``test_fraction`` of the notes to test, shuffled with ``split_seed``)."""
    by_file: dict[Split, Path] = {"train": ctx.source("annotations")}
    if ctx.has_source("test_annotations"):
        by_file["test"] = ctx.source("test_annotations")
    grouped: dict[str, NoteAnnotations] = {}
    for split, path in by_file.items():
        spans: dict[str, list[SpanAnnotation]] = defaultdict(list)
        for annotation in read_span_annotations(path):
            spans[annotation.note_id].append(annotation)
        for note_id, note_spans in spans.items():
            if note_id in grouped:
                raise SourceError(
                    path,
                    f"note {note_id} is also annotated in {grouped[note_id].path.name}; "
                    "expected the train and test notes to be disjoint",
                    line=note_spans[0].line,
                )
            grouped[note_id] = NoteAnnotations(split, path, note_spans)
    if "test" not in by_file:
        splits: dict[str, Split] = seeded_split(grouped, split_seed, [("test", test_fraction)], "train")
        grouped = {
            note_id: NoteAnnotations(splits[note_id], notes.path, notes.spans) for note_id, notes in grouped.items()
        }
    return grouped
