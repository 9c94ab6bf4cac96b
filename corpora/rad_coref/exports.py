"""rad_coref's exports: each patient's chains as CoNLL-2012 (one document per patient, its reports one after the
other), and ``brat``: the annotation layout the corpus reads, with the NOTEEVENTS rows of its reports."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.exporters.base import Exporter, Record, ReleaseInputs
from clinical_corpora.builders.exporters.brat import write_brat_document
from clinical_corpora.builders.exporters.conll2012 import ChainLayout, Conll2012Export
from clinical_corpora.builders.exporters.mimic_notes import NoteEventRow, write_noteevents
from clinical_corpora.builders.sources.brat.annotations import BratDocument, Note, TextBound
from clinical_corpora.core.errors import ClincorpError

CONFIG = "rad_coref"
GOLD_FOLDER = "gold"
NOTEEVENTS_FILE = "NOTEEVENTS.csv.gz"
ANNOTATIONS_FOLDER = "annotations"
RADIOLOGY = "Radiology"


def report_texts(patient: Record) -> list[str]:
    return [report["text"] for report in patient["reports"]]


def report_index(mention: Record) -> int:
    return int(mention["report_index"])


PATIENT_CHAINS = ChainLayout(
    config=CONFIG,
    id_field="patient_id",
    mentions_field="mentions",
    members_field="mention_ids",
    texts=report_texts,
    text_index=report_index,
)
conll2012 = Conll2012Export(PATIENT_CHAINS)


def report_annotations(patient: Record, index: int) -> BratDocument:
    """The ``.ann`` of one report: its mentions (text-bound ids from the mention ids ``<ROW_ID>-T<n>``) and an
    ``AnnotatorNotes`` line ``chain=<id>`` on each, in mention order."""
    chain_of = {member: chain["id"] for chain in patient["chains"] for member in chain["mention_ids"]}
    text = patient["reports"][index]["text"]
    mentions = [mention for mention in patient["mentions"] if mention["report_index"] == index]
    row_id = str(patient["reports"][index]["row_id"])
    textbounds = []
    for mention in mentions:
        prefix, _, textbound_id = mention["id"].partition("-")
        if prefix != row_id or not textbound_id:
            raise ClincorpError(
                f"patient {patient['patient_id']}: mention id {mention['id']!r} is not <ROW_ID>-<text-bound id> "
                f"of its report {row_id}"
            )
        span = ((mention["start"], mention["end"]),)
        textbounds.append(TextBound.from_offsets(textbound_id, mention["type"], span, text))
    notes = [
        Note(f"#{number}", "AnnotatorNotes", textbound.id, f"chain={chain_of[mention['id']]}")
        for number, (textbound, mention) in enumerate(zip(textbounds, mentions, strict=True), start=1)
    ]
    return BratDocument(textbounds=tuple(textbounds), notes=tuple(notes))


def report_rows(view: ReleaseView) -> Iterator[NoteEventRow]:
    """The NOTEEVENTS rows of every released report, patient by patient (streamed)."""
    for _, patient in view.rows(CONFIG):
        subject_id = patient["patient_id"]
        if not (subject_id.isascii() and subject_id.isdigit()):
            raise ClincorpError(
                f"{view.folder}: patient {subject_id[:80]!r} is not a MIMIC-III SUBJECT_ID (a number), which "
                "NOTEEVENTS.csv needs"
            )
        for report in patient["reports"]:
            yield NoteEventRow(
                report["row_id"],
                int(subject_id),
                report["charttime"],
                RADIOLOGY,
                report["description"],
                report["text"],
            )


class RadCorefBrat(Exporter):
    """Write a rad_coref release as the corpus's own inputs: ``annotations/gold/<SUBJECT_ID>/<ROW_ID>.ann`` (Finding
    and Device text-bounds, each with an ``AnnotatorNotes`` line ``chain=<id>``) beside the report's ``.txt``, and
    ``NOTEEVENTS.csv.gz`` with the reports' rows (ROW_ID, SUBJECT_ID, CHARTDATE, CHARTTIME, CATEGORY Radiology,
    DESCRIPTION, TEXT). ``clincorp release rad_coref --source annotations=DIR/annotations --source
    noteevents=DIR/NOTEEVENTS.csv.gz`` releases the same records again."""

    configs = (CONFIG,)
    lost = (
        "the annotators' own folders (the agreement gate's inputs are not in a release, so a release from the "
        "export has no agreement gate)",
        "NOTEEVENTS columns the release does not keep (HADM_ID, STORETIME, CGID, ISERROR) are written empty",
    )

    def write(self, view: ReleaseView, out: Path, options: argparse.Namespace | None = None) -> Iterator[str]:
        gold = out / ANNOTATIONS_FOLDER / GOLD_FOLDER
        patients = 0
        for _, patient in view.rows(CONFIG):
            for index, report in enumerate(patient["reports"]):
                doc_id = f"{patient['patient_id']}/{report['row_id']}"
                write_brat_document(gold, doc_id, report["text"], report_annotations(patient, index))
            patients += 1
        yield f"{CONFIG}: {patients} patients' annotations written under {gold}"
        count = write_noteevents(out / NOTEEVENTS_FILE, report_rows(view))
        yield f"{CONFIG}: {count} reports written to {out / NOTEEVENTS_FILE}"

    def reread(self, out: Path) -> ReleaseInputs:
        return ReleaseInputs({"noteevents": out / NOTEEVENTS_FILE, "annotations": out / ANNOTATIONS_FOLDER})


brat = RadCorefBrat()
