"""What ``clincorp view`` shows of a ``rad_coref`` patient: the reports on a timeline (CHARTTIME order, modality),
mentions coloured by chain, and each chain's members across reports."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from clinical_corpora.builders.contract.display import DocumentDisplay, Group, Mark, Member, Passage, RowReader


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
