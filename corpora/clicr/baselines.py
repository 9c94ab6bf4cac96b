"""CliCR's entity baselines (Šuster & Daelemans 2018, §5.1 and Table 4): rand-entity and maxfreq-entity.

Both read a case as the authors' ``baselines.py`` reads the CliCR JSON ``clincorp export clicr-json`` writes:
the title, a newline, then the passage with each entity marked ``BEG__…__END``, split on whitespace; an entity
is the words between its marks joined by a space (their code's token rules, quirks included: a one-word
entity is the text between its first two double underscores). maxfreq-entity answers every query of a case
with its most frequent entity string (case kept), a tie going to the entity seen first, as
``Counter.most_common`` breaks it; rand-entity draws one entity occurrence per query from
``random.Random(seed)``, queries in release order. A case with no entity gets no prediction (its queries
score 0), and the command says how many.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from clinical_corpora.builders.contract.baseline import BaselineRequest, held_splits, write_json
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.corpora.clicr.clicr_json import ENTITY_CLOSE, ENTITY_OPEN, marked_context
from clinical_corpora.corpora.clicr.released_rows import query_rows
from clinical_corpora.validation.metrics.clicr import AnswerKey

QUERIES, DOCUMENTS = "clicr", "clicr_documents"
Choose = Callable[[list[str]], str]


def read_entities(text: str) -> list[str]:
    """The entity strings of a marked text, in order, as the authors' ``read_concepts`` reads them."""
    entities: list[str] = []
    words: list[str] = []
    inside = False
    for word in text.split():
        if word.startswith(ENTITY_OPEN) and word.endswith(ENTITY_CLOSE):
            entities.append(word.split("_")[2])
        elif word.startswith(ENTITY_OPEN):
            inside, words = True, [word.split("_", 2)[-1]]
        elif word.endswith(ENTITY_CLOSE):
            words.append(word.rsplit("_", 2)[0])
            entities.append(" ".join(words))
            inside = False
        elif inside:
            words.append(word)
    return entities


def most_frequent(entities: list[str]) -> str:
    """The most frequent entity string; among equals, the first seen."""
    return Counter(entities).most_common(1)[0][0]


def case_entities(view: ReleaseView) -> dict[str, list[str]]:
    """Case id → its entity strings (title and marked passage, as the authors' code reads a case)."""
    return {
        row["id"]: read_entities(
            row["title"] + "\n" + marked_context(row["passage"], [(e["start"], e["end"]) for e in row["entities"]])
        )
        for _, row in view.rows(DOCUMENTS)
    }


def split_predictions(
    queries: Iterable[dict[str, Any]], entities: Mapping[str, list[str]], choose: Choose
) -> tuple[dict[str, str], int]:
    """``{query id: answer}`` for the queries of one split, and how many were left unanswered (their case has no
    entity)."""
    predictions: dict[str, str] = {}
    unanswered = 0
    for query in queries:
        found = entities.get(query["document_id"], [])
        if found:
            predictions[query["id"]] = choose(found)
        else:
            unanswered += 1
    return predictions, unanswered


def _predict(request: BaselineRequest, choose: Callable[[], Choose]) -> list[str]:
    """One ``<split>.json`` ``{query id: answer}`` per split; each split's choices begin afresh."""
    request.release.of("clicr", QUERIES)
    entities = case_entities(request.release.view)
    written = []
    for split in request.splits(QUERIES):
        queries = (row for _, row in query_rows(request.release.view, ["id", "document_id"], split))
        predictions, unanswered = split_predictions(queries, entities, choose())
        note = f" ({unanswered} queries of cases without entities left unanswered)" if unanswered else ""
        written.append(write_json(request.out / f"{split}.json", predictions) + note)
    return written


def maxfreq_entity(request: BaselineRequest) -> list[str]:
    """maxfreq-entity: every query of a case answered with the case's most frequent entity."""
    return _predict(request, lambda: most_frequent)


def rand_entity(request: BaselineRequest) -> list[str]:
    """rand-entity: a random entity occurrence of the case per query, drawn from ``random.Random(seed)``."""
    return _predict(request, lambda: random.Random(request.seed).choice)


CARD_SEED = 1234
"""rand-entity's seed on the card (the authors' code's)."""
CARD_METRICS = ("exact_match", "f1", "bleu_2", "bleu_4")


def card_scores(view: ReleaseView) -> list[BaselineScore]:
    """maxfreq-entity and rand-entity (seed :data:`CARD_SEED`) on each split holding queries, scored as
    ``clincorp score clicr`` scores their predictions."""
    entities = case_entities(view)
    scores = []
    for split in held_splits(view, QUERIES):
        queries = [row for _, row in query_rows(view, ["id", "document_id", "answers"], split)]
        key = AnswerKey({query["id"]: [answer["text"] for answer in query["answers"]] for query in queries})
        for name, choose, seed in (
            ("maxfreq-entity", most_frequent, None),
            ("rand-entity", random.Random(CARD_SEED).choice, CARD_SEED),
        ):
            scored = key.score(split_predictions(queries, entities, choose)[0])
            metrics = {metric: float(scored[metric]) for metric in CARD_METRICS}
            scores.append(BaselineScore(baseline=name, split=split, scorer="clicr", metrics=metrics, seed=seed))
    return scores
