"""What ``clincorp view`` shows of a ``rad_coref`` patient: the reports on a timeline (CHARTTIME order, modality),
mentions coloured by chain, and each chain's members across reports."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from clinical_corpora.builders.contract.base import BuildContext
from clinical_corpora.builders.contract.display import DocumentDisplay, Group, Mark, Member, Passage, RowReader
from clinical_corpora.builders.sources.annotators import annotator_folders
from clinical_corpora.builders.sources.brat.folder import ANN_SUFFIX
from clinical_corpora.corpora.rad_coref.reports import (
    GOLD_FOLDER,
    AnnotatedMention,
    list_annotation_folder,
    read_annotator,
)


def rad_coref_displays(rows: RowReader) -> Iterator[DocumentDisplay]:
    for split, patient in rows("rad_coref", None):
        yield patient_display(split, patient)


def patient_display(split: str, patient: dict[str, Any]) -> DocumentDisplay:
    chain_of = {mention: chain["id"] for chain in patient["chains"] for mention in chain["mention_ids"]}
    marks: list[list[Mark]] = [[] for _ in patient["reports"]]
    for mention in patient["mentions"]:
        facts = [("id", mention["id"]), ("type", mention["type"]), ("chain", chain_of.get(mention["id"], "none"))]
        mark = Mark(mention["id"], "mention", mention["type"], [(mention["start"], mention["end"])], facts)
        mark.group = chain_of.get(mention["id"])
        if 0 <= mention["report_index"] < len(marks):
            marks[mention["report_index"]].append(mark)
    passages = []
    for number, report in enumerate(patient["reports"]):
        when = report["charttime"] if report["charttime"] is not None else "CHARTTIME withheld"
        facts = [("ROW_ID", str(report["row_id"])), ("CHARTTIME", when), ("modality", report["modality"])]
        if report["description"] is not None:
            facts.append(("description", report["description"]))
        title = f"Report {number + 1} · {report['modality']} · {when}"
        passages.append(Passage(f"r{number}", title, report["text"], marks[number], facts))
    report_of = {mention["id"]: mention["report_index"] for mention in patient["mentions"]}
    groups = []
    for chain in patient["chains"]:
        reports = {report_of[mention] for mention in chain["mention_ids"] if mention in report_of}
        label = f"{len(chain['mention_ids'])} mention(s) in {len(reports)} report(s)"
        groups.append(Group(chain["id"], "chain", label, [Member(mention) for mention in chain["mention_ids"]]))
    labels = sorted({report["modality"] for report in patient["reports"]} | {m["type"] for m in patient["mentions"]})
    return DocumentDisplay(
        id=patient["patient_id"],
        split=split,
        labels=labels,
        passages=passages,
        groups=groups,
        facts=[("reports", str(len(patient["reports"]))), ("chains", str(len(patient["chains"])))],
        records=[("rad_coref", patient["patient_id"])],
    )


def annotator_displays(ctx: BuildContext, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
    """Each annotator's mentions and chains of the released patients (the folders beside ``gold/`` in the
    ``annotations`` source, read as the agreement reads them); none for a text-free release, whose report
    texts the annotators' mentions cannot be checked against."""
    if not ctx.has_source("annotations"):
        return {}
    annotations = ctx.source("annotations")
    folders = annotator_folders(annotations, ANN_SUFFIX, exclude={GOLD_FOLDER})
    reports = {patient["patient_id"]: patient["reports"] for _, patient in rows("rad_coref", ["patient_id", "reports"])}
    texts = {report["row_id"]: report["text"] for patient in reports.values() for report in patient}
    if len(folders) < 2 or None in texts.values():
        return {}
    released = {int(p) for p in reports if p.isascii() and p.isdigit()}  # a patient folder is a SUBJECT_ID
    quarantined = set(list_annotation_folder(annotations / GOLD_FOLDER, quiet=True)) - released
    displays: dict[str, dict[str, DocumentDisplay]] = {}
    for name, folder in folders.items():
        annotated = read_annotator(folder, texts, quarantined)
        displays[name] = {
            patient: _annotator_patient(patient, [r["row_id"] for r in reports[patient]], by_report)
            for patient, by_report in annotated.items()
            if patient in reports
        }
    return displays


def _annotator_patient(
    patient: str, row_ids: list[int], by_report: dict[int, list[AnnotatedMention]]
) -> DocumentDisplay:
    passages = []
    chains: dict[str, list[Member]] = {}
    for index, row_id in enumerate(row_ids):
        marks = []
        for mention in by_report.get(row_id, []):
            key = f"{row_id}-{mention.textbound}"
            marks.append(Mark(key, "mention", mention.type, [(mention.start, mention.end)], group=mention.chain))
            chains.setdefault(mention.chain, []).append(Member(key))
        passages.append(Passage(f"r{index}", f"Report {index + 1}", None, marks))
    groups = [Group(chain, "chain", f"{len(members)} mention(s)", members) for chain, members in chains.items()]
    return DocumentDisplay(patient, "", [], passages, groups)
