"""What ``clincorp view`` shows of an ODIE note: markables with their attributes, anaphoric pairs (relation and
Bagga class) and identity chains (Savova et al. 2011)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from clinical_corpora.builders.contract.base import BuildContext
from clinical_corpora.builders.contract.display import DocumentDisplay, Group, Mark, Member, Passage, RowReader
from clinical_corpora.builders.sources.annotators import annotator_folders
from clinical_corpora.builders.sources.knowtator.folder import KNOWTATOR_SUFFIX, knowtator_files
from clinical_corpora.builders.sources.knowtator.xml import read_knowtator_file
from clinical_corpora.corpora.odie_anaphora.agreement import ANNOTATOR_SOURCES
from clinical_corpora.corpora.odie_anaphora.notes import knowtator_record


def odie_displays(rows: RowReader) -> Iterator[DocumentDisplay]:
    for split, note in rows("odie_anaphora", None):
        yield note_display(split, note)


def annotator_displays(ctx: BuildContext) -> dict[str, dict[str, DocumentDisplay]]:
    """The two annotators' notes (the Knowtator input's ``annotator_a`` and ``annotator_b``), as the gold's."""
    if ctx.has_source("i2b2") or not all(ctx.has_source(name) for name in ANNOTATOR_SOURCES):
        return {}
    folders = annotator_folders({name: ctx.source(name) for name in ANNOTATOR_SOURCES}, KNOWTATOR_SUFFIX)
    displays: dict[str, dict[str, DocumentDisplay]] = {}
    for name, folder in folders.items():
        displays[name] = {}
        for xml_path in knowtator_files(folder, quiet=True).values():
            document = read_knowtator_file(xml_path, ctx.source("text"))
            displays[name][document.doc_id] = note_display("", knowtator_record(document, xml_path).model_dump())
    return displays


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
