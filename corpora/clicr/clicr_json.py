"""Write a clicr release as the original CliCR JSON, one file per split (``<split>1.0.json``).

``{"version": "1.0", "data": [{"document": {"context", "title", "qas": [{"id", "query", "answers":
[{"text", "origin", "cui", "sem_type"}]}]}, "source"}]}`` as the CliCR release has it, so its
readers and ``evaluate.py`` work on our releases: the context is the passage tokenized
(``builders.contract.text_units``, tokens joined by a space, one passage block a line) with every recognised
entity marked ``BEG__<tokens>__END``; the query is tokenized around ``@placeholder``; an answer's
``sem_type`` is its i2b2 category (as in CliCR), its text as in the release; ``source`` is the case
id. Only cases with queries are written, in release order. No builder reads CliCR JSON: the round trip reads
the files back and compares queries, answers, titles and the passages' tokens with the release.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.contract.text_units import token_strings, tokenize
from clinical_corpora.builders.exporters.base import Exporter
from clinical_corpora.corpora.clicr.records import PLACEHOLDER
from clinical_corpora.corpora.clicr.released_rows import query_rows

CLICR_VERSION = "1.0"
ENTITY_OPEN, ENTITY_CLOSE = "BEG__", "__END"
BLOCK_SEPARATOR = "\n\n"


def _left_out(without: dict[str, int]) -> str:
    """What a split's file leaves out: the queries of cases whose passage a re-anchoring lost (none: nothing)."""
    if not without:
        return ""
    cases = ", ".join(without)
    return f" (left out {sum(without.values())} queries of {len(without)} case(s) whose passage was lost: {cases})"


class ClicrJson(Exporter):
    """Write a clicr release as the original CliCR JSON, one ``<split>1.0.json`` per split (CliCR's readers and
    ``evaluate.py`` read it; so does ``clincorp score clicr``)."""

    configs = ("clicr", "clicr_documents")
    lost = (
        "the passage's whitespace and character offsets: the context is its tokens joined by a space (one "
        "passage block a line), an entity its tokens marked BEG__…__END (its UMLS CUI and type are not kept)",
        "the query's whitespace (tokenized around @placeholder), answers' UMLS semantic type names (sem_type "
        "holds the i2b2 category, as in CliCR), answer_in_passage, and the case reports' sections, learning "
        "points and metadata other than the title",
        "cases without queries",
    )
    exact = False

    def write(self, view: ReleaseView, out: Path, options: argparse.Namespace | None = None) -> Iterator[str]:
        documents = {row["id"]: row for _, row in view.rows("clicr_documents")}
        out.mkdir(parents=True, exist_ok=True)
        for split in view.splits("clicr"):
            queries_by_case: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
            for _, query in query_rows(view, ["id", "document_id", "query", "answers"], split):
                queries_by_case[query["document_id"]].append(query)
            without = {case: len(queries) for case, queries in queries_by_case.items() if case not in documents}
            data = [
                _datum(documents[case], queries) for case, queries in queries_by_case.items() if case not in without
            ]
            path = out / f"{split}{CLICR_VERSION}.json"
            path.write_text(
                json.dumps({"version": CLICR_VERSION, "data": data}, ensure_ascii=False, indent=1), encoding="utf-8"
            )
            yield str(path) + _left_out(without)

    def read_back(self, out: Path) -> dict[str, Any]:
        """``<split>/<query id>`` → (case id, title, query, answers, the context's words without entity marks)."""
        read = {}
        for path in sorted(out.glob(f"*{CLICR_VERSION}.json")):
            split = path.name.removesuffix(f"{CLICR_VERSION}.json")
            for datum in json.loads(path.read_text(encoding="utf-8"))["data"]:
                document = datum["document"]
                words = document["context"].replace(ENTITY_OPEN, "").replace(ENTITY_CLOSE, "").split()
                for qa in document["qas"]:
                    answers = [(a["text"], a["origin"], a["cui"], a["sem_type"]) for a in qa["answers"]]
                    read[f"{split}/{qa['id']}"] = (datum["source"], document["title"], qa["query"], answers, words)
        return read

    def expected(self, view: ReleaseView) -> dict[str, Any]:
        documents = {row["id"]: row for _, row in view.rows("clicr_documents")}
        words = {case: " ".join(token_strings(row["passage"])).split() for case, row in documents.items()}
        return {
            f"{split}/{query['id']}": (
                query["document_id"],
                documents[query["document_id"]]["title"],
                tokenized_query(query["query"]),
                [(a["text"], a["origin"], a["cui"], a["category"]) for a in query["answers"]],
                words[query["document_id"]],
            )
            for split, query in query_rows(view, ["id", "document_id", "query", "answers"])
        }


clicr_json = ClicrJson()


def _datum(document: Mapping[str, Any], queries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    qas = [
        {
            "id": query["id"],
            "query": tokenized_query(query["query"]),
            "answers": [
                {
                    "text": answer["text"],
                    "origin": answer["origin"],
                    "cui": answer["cui"],
                    "sem_type": answer["category"],
                }
                for answer in query["answers"]
            ],
        }
        for query in queries
    ]
    context = marked_context(document["passage"], [(e["start"], e["end"]) for e in document["entities"]])
    return {"document": {"context": context, "title": document["title"], "qas": qas}, "source": document["id"]}


def marked_case(document: Mapping[str, Any]) -> str:
    """A case as the authors' baselines read it: its title, a newline, then its marked passage."""
    return (
        document["title"]
        + "\n"
        + marked_context(document["passage"], [(e["start"], e["end"]) for e in document["entities"]])
    )


def marked_context(passage: str, entities: Sequence[tuple[int, int]]) -> str:
    """The passage tokenized, one block a line, each entity's tokens wrapped in ``BEG__…__END``.

    An entity is a sorted, non-overlapping (start, end) span; its tokens are those starting inside it.
    """
    lines, position, entity_index = [], 0, 0
    for block in passage.split(BLOCK_SEPARATOR):
        block_end = position + len(block)
        words: list[str] = []
        inside: list[str] | None = None
        for start, end in tokenize(passage, position, block_end):
            while entity_index < len(entities) and entities[entity_index][1] <= start:
                if inside is not None:
                    words.append(f"{ENTITY_OPEN}{' '.join(inside)}{ENTITY_CLOSE}")
                    inside = None
                entity_index += 1
            token = passage[start:end]
            if entity_index < len(entities) and entities[entity_index][0] <= start:
                inside = (inside or []) + [token]
            else:
                words.append(token)
        if inside is not None:
            words.append(f"{ENTITY_OPEN}{' '.join(inside)}{ENTITY_CLOSE}")
            entity_index += 1
        lines.append(" ".join(words))
        position = block_end + len(BLOCK_SEPARATOR)
    return "\n".join(lines)


def tokenized_query(query: str) -> str:
    """The query's tokens joined by a space, ``@placeholder`` kept as one token."""
    left, _, right = query.partition(PLACEHOLDER)
    return " ".join([*token_strings(left), PLACEHOLDER, *token_strings(right)])
