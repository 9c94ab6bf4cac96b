"""What ``clincorp view`` shows of an ODIE note: markables with their attributes, anaphoric pairs (relation and
Bagga class) and identity chains (Savova et al. 2011)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from clinical_corpora.builders.contract.display import DocumentDisplay, Group, Mark, Member, Passage, RowReader


def odie_displays(rows: RowReader) -> Iterator[DocumentDisplay]:
    for split, note in rows("odie_anaphora", None):
        yield note_display(split, note)


def note_display(split: str, note: dict[str, Any]) -> DocumentDisplay:
    chain_of = {markable: chain["id"] for chain in note["chains"] for markable in chain["markable_ids"]}
    marks = []
    for markable in note["markables"]:
        facts = [
            ("id", markable["id"]),
            ("semantic class", markable["semantic_class"]),
            ("grammatical category", markable["grammatical_category"] or "not assigned"),
            ("sentence function", markable["sentence_function"] or "not assigned"),
        ]
        fragments = [(piece["start"], piece["end"]) for piece in markable["fragments"]]
        if len(fragments) > 1:
            facts.append(("shape", "discontinuous"))
        marks.append(
            Mark(markable["id"], "markable", markable["semantic_class"], fragments, facts, chain_of.get(markable["id"]))
        )
    groups = [
        Group(
            pair["id"],
            "pair",
            f"{pair['relation']} · Bagga class {pair['bagga_class'] or 'not assigned'}",
            [Member(pair["anaphor_id"], "anaphor"), Member(pair["antecedent_id"], "antecedent")],
        )
        for pair in note["pairs"]
    ]
    groups += [
        Group(
            chain["id"],
            "chain",
            f"identity chain of {len(chain['markable_ids'])}",
            [Member(m) for m in chain["markable_ids"]],
        )
        for chain in note["chains"]
    ]
    labels = sorted(
        {m["semantic_class"] for m in note["markables"]} | {p["bagga_class"] or "" for p in note["pairs"]} - {""}
    )
    return DocumentDisplay(
        id=note["id"],
        split=split,
        labels=sorted(labels),
        passages=[Passage("note", "Note", note["text"], marks)],
        groups=groups,
        facts=[("institution", note["institution"]), ("note type", note["note_type"])],
        records=[("odie_anaphora", note["id"])],
    )
