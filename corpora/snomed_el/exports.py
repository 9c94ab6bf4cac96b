"""snomed_el's exports: ``challenge-csv``, the SNOMED CT Entity Linking Challenge's notes CSV and annotation CSVs."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.exporters.base import Exporter, ReleaseInputs
from clinical_corpora.builders.exporters.challenge_csv import write_challenge_notes, write_span_annotations
from clinical_corpora.core.annotations import SpanAnnotation

CONFIG = "snomed_el"
NOTES_FILE = "mimic-iv_notes_training_set.csv"
ANNOTATION_FILES = {"train": "train_annotations.csv", "test": "test_annotations.csv"}


def split_annotations(view: ReleaseView, split: str) -> Iterator[SpanAnnotation]:
    """A split's notes' spans as challenge annotations, note by note in offset order."""
    for _, note in view.rows(CONFIG, split):
        for span in note["annotations"]:
            yield SpanAnnotation(note["note_id"], span["start"], span["end"], span["concept_id"])


class ChallengeCsv(Exporter):
    """Write a snomed_el release as the challenge's files: ``mimic-iv_notes_training_set.csv`` (``note_id,text``,
    train notes then test notes) and ``train_annotations.csv`` / ``test_annotations.csv`` (``note_id,start,end,
    concept_id``), which the challenge's scorer (and ``clincorp score snomed``) reads; ``clincorp release
    snomed_el`` with these as the notes, annotations and test_annotations sources (and an RF2 snapshot)
    releases the same records again."""

    configs = (CONFIG,)
    lost = (
        "the concepts' names, semantic tags, hierarchies and depths, and the concepts and concept_stats configs: "
        "the challenge's files carry concept ids only (releasing the files again with the same RF2 snapshot "
        "restores them byte for byte)",
        "the MIMIC-IV-Note columns other than note_id and text (the release does not keep them either)",
    )

    def write(self, view: ReleaseView, out: Path, options: argparse.Namespace | None = None) -> Iterator[str]:
        splits = view.splits(CONFIG)
        notes = ((note["note_id"], note["text"]) for split in splits for _, note in view.rows(CONFIG, split))
        count = write_challenge_notes(out / NOTES_FILE, notes)
        yield f"{CONFIG}: {count} notes written to {out / NOTES_FILE}"
        for split in splits:
            path = out / ANNOTATION_FILES[split]
            count = write_span_annotations(path, split_annotations(view, split))
            yield f"{CONFIG}/{split}: {count} annotations written to {path}"

    def reread(self, out: Path) -> ReleaseInputs:
        sources = {"notes": out / NOTES_FILE, "annotations": out / ANNOTATION_FILES["train"]}
        if (out / ANNOTATION_FILES["test"]).is_file():
            sources["test_annotations"] = out / ANNOTATION_FILES["test"]
        return ReleaseInputs(sources, not_carried=("terminology",))


challenge_csv = ChallengeCsv()
