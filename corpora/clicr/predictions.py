"""A system's cloze answers drawn against the gold in ``clincorp view --predictions``: the JSON
``{"<query id>": "<answer>"}`` ``clincorp score clicr`` reads. Each query is compared by its answer (alike when
SQuAD's normalisation makes them equal, as the exact match of Šuster & Daelemans 2018 counts), and where each
answer occurs in the passage is marked, so an answer found elsewhere in the case shows where."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.display import DocumentDisplay, Group, Mark, Passage, RowReader
from clinical_corpora.core.errors import SourceError
from clinical_corpora.corpora.clicr.commands import load_predictions
from clinical_corpora.validation.metrics.clicr import normalize_answer

NO_ANSWER = "(no answer)"


def prediction_displays(predictions: Path, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
    """The gold and predicted answer of every released query, case by case; a query id the release does not
    hold is an error naming it."""
    predicted = load_predictions(predictions)
    queries: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for _, query in rows("clicr", ["id", "document_id", "answers"]):
        queries[query["document_id"]].append(query)
    unknown = sorted(set(predicted) - {query["id"] for found in queries.values() for query in found})
    if unknown:
        raise SourceError(predictions, f"answers query id(s) the release does not hold: {', '.join(unknown[:5])}")
    gold: dict[str, DocumentDisplay] = {}
    system: dict[str, DocumentDisplay] = {}
    for split, case in rows("clicr_documents", ["id", "title", "passage"]):
        answers = {query["id"]: _gold_answer(query) for query in queries.get(case["id"], [])}
        given = {query: _as_gold(predicted.get(query, NO_ANSWER), answer) for query, answer in answers.items()}
        gold[case["id"]] = _answers_display(split, case, answers)
        system[case["id"]] = _answers_display(split, case, given)
    return {"gold": gold, "system": system}


def _gold_answer(query: dict[str, Any]) -> str:
    dataset = [answer["text"] for answer in query["answers"] if answer["origin"] == "dataset"]
    return next((text for text in dataset if text is not None), "(text withheld)")


def _as_gold(prediction: str, answer: str) -> str:
    """The prediction, or the gold answer when they normalise alike (SQuAD's exact match)."""
    return answer if normalize_answer(prediction) == normalize_answer(answer) else prediction


def _answers_display(split: str, case: dict[str, Any], answers: dict[str, str]) -> DocumentDisplay:
    """A query per answer (``<n>. <query id>: <answer>``, numbered in the case) and a mark ``answer <n>``
    wherever the answer occurs in the passage."""
    marks = []
    for number, answer in enumerate(answers.values(), start=1):
        found = [] if case["passage"] is None or answer == NO_ANSWER else _occurrences(case["passage"], answer)
        marks += [Mark(f"{number}/{n}", "answer", f"answer {number}", [span]) for n, span in enumerate(found)]
    groups = [
        Group(query, "query", f"{number}. {query}: {answer}", [])
        for number, (query, answer) in enumerate(answers.items(), start=1)
    ]
    passage = Passage("passage", case["title"] or "Passage", case["passage"], marks)
    return DocumentDisplay(case["id"], split, [], [passage], groups)


def _occurrences(passage: str, answer: str) -> list[tuple[int, int]]:
    pattern = re.compile(rf"(?<!\w){re.escape(answer)}(?!\w)", re.IGNORECASE)
    return [match.span() for match in pattern.finditer(passage)]
