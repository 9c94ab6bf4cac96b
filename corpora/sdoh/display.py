"""What ``clincorp view`` shows of an SDOH note: its events (trigger and arguments), loose text-bounds, annotator
notes and normalisations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from clinical_corpora.builders.contract.display import DocumentDisplay, Group, Listing, Mark, Member, Passage, RowReader


def sdoh_displays(rows: RowReader) -> Iterator[DocumentDisplay]:
    for split, note in rows("sdoh", None):
        yield note_display(split, note)


def note_display(split: str, note: dict[str, Any]) -> DocumentDisplay:
    marks: list[Mark] = []
    groups: list[Group] = []
    for event in note["events"]:
        trigger = event["trigger"]
        marks.append(_mark(trigger, "trigger", event["type"], event["id"], []))
        members = [Member(f"{event['id']}/{trigger['id']}", "trigger")]
        for argument in event["arguments"]:
            facts = [("role", argument["role"]), ("type", argument["type"]), ("subtype", argument["subtype"])]
            label = argument["role"] if argument["subtype"] == "N/A" else f"{argument['role']}: {argument['subtype']}"
            marks.append(_mark(argument, "argument", label, event["id"], facts))
            members.append(Member(f"{event['id']}/{argument['id']}", f"{argument['role']} ({argument['subtype']})"))
        groups.append(Group(event["id"], "event", event["type"], members))
    for bound in note["unused_textbounds"]:
        marks.append(_mark(bound, "textbound", bound["type"], None, [("subtype", bound["subtype"])]))
    listings = [
        Listing("Annotator notes", [f"{n['id']} on {n['target']}: {_text(n['text'])}" for n in note["notes"]]),
        Listing(
            "Normalisations",
            [
                f"{n['id']} {n['target']} → {n['resource']}:{n['entry']} {_text(n['text'])}"
                for n in note["normalizations"]
            ],
        ),
        Listing(
            "Relations",
            [
                f"{r['id']} {r['type']}: " + ", ".join(f"{a['role']}={a['target']}" for a in r["arguments"])
                for r in note["relations"]
            ],
        ),
        Listing("Equivalences", [f"{e['type']}: {' = '.join(e['members'])}" for e in note["equivalences"]]),
    ]
    facts = [("source", note["source"]), ("annotation file", "yes" if note["has_ann_file"] else "none (.txt only)")]
    return DocumentDisplay(
        id=note["id"],
        split=split,
        labels=sorted({event["type"] for event in note["events"]}),
        passages=[Passage("note", "Note", note["text"], marks)],
        groups=groups,
        listings=[listing for listing in listings if listing.lines],
        facts=facts,
        records=[("sdoh", note["id"])],
    )


def _mark(bound: dict[str, Any], kind: Any, label: str, event: str | None, facts: list[tuple[str, str]]) -> Mark:
    fragments = [(piece["start"], piece["end"]) for piece in bound["fragments"]] or [(bound["start"], bound["end"])]
    shape = "discontinuous" if len(fragments) > 1 else "zero-length" if bound["start"] == bound["end"] else ""
    extra = [("shape", shape)] if shape else []
    key = f"{event}/{bound['id']}" if event else bound["id"]  # a text-bound may serve two events
    return Mark(key, kind, label, fragments, [("id", bound["id"]), *facts, *extra], group=event)


def _normalisation(normalisation: dict[str, Any]) -> str:
    n = normalisation
    return f"{n['id']} {n['target']} → {n['resource']}:{n['entry']} {_text(n['text'])}"


def _relation(relation: dict[str, Any]) -> str:
    arguments = ", ".join(f"{argument['role']}={argument['target']}" for argument in relation["arguments"])
    return f"{relation['id']} {relation['type']}: {arguments}"


def _text(text: str | None) -> str:
    return repr(text) if text is not None else "(text withheld)"
