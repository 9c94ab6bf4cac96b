"""What ``clincorp view`` shows of a CliCR case: the passage with its sections and entities, the learning points,
and each cloze query with its placeholder, its answer and the answer's UMLS expansions highlighted where they
occur in the passage (Šuster & Daelemans 2018)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from clinical_corpora.builders.contract.base import BuildContext
from clinical_corpora.builders.contract.display import DocumentDisplay, Group, Listing, Mark, Member, Passage, RowReader
from clinical_corpora.builders.sources.brat.standoff import iter_brat_folder
from clinical_corpora.corpora.clicr.records import PLACEHOLDER

QUERY_COLUMNS = ["id", "document_id", "query", "answers", "answer_in_passage"]
"""The query columns shown (the passage each query row repeats is read once, from ``clicr_documents``)."""


def clicr_displays(rows: RowReader) -> Iterator[DocumentDisplay]:
    queries: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for _, query in rows("clicr", QUERY_COLUMNS):
        queries[query["document_id"]].append(query)
    for split, case in rows("clicr_documents", None):
        yield case_display(split, case, queries.pop(case["id"], []))


def case_display(split: str, case: dict[str, Any], queries: list[dict[str, Any]]) -> DocumentDisplay:
    marks = [
        Mark(f"e{number}", "entity", entity["category"], [(entity["start"], entity["end"])], _entity_facts(entity))
        for number, entity in enumerate(case["entities"])
    ]
    groups = []
    for query in queries:
        found = _answer_marks(case["passage"], query)
        marks += found
        facts = [
            (answer["origin"], f"{_text(answer['text'])} ({answer['cui']}, {answer['sem_type']}, {answer['category']})")
            for answer in query["answers"]
        ]
        facts.append(("answer in passage", "yes" if query["answer_in_passage"] else "no"))
        members = [Member(mark.key, mark.label) for mark in found]
        groups.append(Group(query["id"], "query", f"query {query['id']}", members, facts, query["query"], PLACEHOLDER))
    sections = [(section["start"], section["heading"] or f"at {section['start']}") for section in case["sections"]]
    categories = {answer["category"] for query in queries for answer in query["answers"]}
    return DocumentDisplay(
        id=case["id"],
        split=split,
        labels=sorted(categories),
        passages=[
            Passage("passage", case["title"] or "Passage (title withheld)", case["passage"], marks, sections=sections)
        ],
        groups=groups,
        listings=[Listing("Learning points", [_text(point) for point in case["learning_points"]])],
        facts=_metadata(case),
        records=[("clicr_documents", case["id"]), *(("clicr", query["id"]) for query in queries)],
    )


def _answer_marks(passage: str | None, query: dict[str, Any]) -> list[Mark]:
    """Where the query's answers (the original entity and its UMLS expansions) occur in the passage: whole
    tokens, any case."""
    if passage is None:
        return []
    marks = []
    for answer_number, answer in enumerate(query["answers"]):
        if not answer["text"]:
            continue
        pattern = re.compile(rf"(?<!\w){re.escape(answer['text'])}(?!\w)", re.IGNORECASE)
        for hit, match in enumerate(pattern.finditer(passage)):
            role = "answer" if answer["origin"] == "dataset" else "UMLS expansion"
            facts = [("query", query["id"]), ("answer", answer["text"]), ("origin", answer["origin"])]
            key = f"{query['id']}/a{answer_number}/{hit}"
            marks.append(Mark(key, "answer", role, [match.span()], facts, group=query["id"]))
    return marks


def _entity_facts(entity: dict[str, Any]) -> list[tuple[str, str]]:
    return [("CUI", entity["cui"]), ("semantic type", entity["sem_type"]), ("category", entity["category"])]


def _metadata(case: dict[str, Any]) -> list[tuple[str, str]]:
    metadata = case["metadata"]
    return [
        ("series", ", ".join(metadata["series"]) or "none"),
        ("specialties", ", ".join(metadata["specialties"]) or "none"),
        ("year", str(metadata["year"]) if metadata["year"] is not None else "unknown"),
        ("queries left out as repeated", str(case["repeated_queries_removed"])),
    ]


def _text(text: str | None) -> str:
    return text if text is not None else "(text withheld)"


def annotator_displays(ctx: BuildContext, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
    """The hand-marked entities of the ``entity_gold`` source (``gold``) beside the entities the recogniser
    found in the same passages (``recogniser``): what the release's entity scores count, span by span."""
    if not ctx.has_source("entity_gold"):
        return {}
    gold = {
        doc_id: [(t.start, t.end, t.type) for t in doc.textbounds]
        for doc_id, _, doc in iter_brat_folder(ctx.source("entity_gold"))
    }
    found = {
        case["id"]: [(e["start"], e["end"], e["category"]) for e in case["entities"]]
        for _, case in rows("clicr_documents", ["id", "entities"])
        if case["id"] in gold
    }
    return {
        name: {doc_id: _entities_display(doc_id, spans) for doc_id, spans in spans_by_case.items()}
        for name, spans_by_case in (("gold", gold), ("recogniser", found))
    }


def _entities_display(doc_id: str, spans: list[tuple[int, int, str]]) -> DocumentDisplay:
    marks = [Mark(f"e{n}", "entity", label, [(start, end)]) for n, (start, end, label) in enumerate(spans)]
    return DocumentDisplay(doc_id, "", [], [Passage("passage", "Passage", None, marks)])
