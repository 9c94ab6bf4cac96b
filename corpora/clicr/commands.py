"""Score CliCR predictions: EM, F1 (percent), BLEU-2/4, and embedding average given word vectors.

DATA is a clicr release folder (its ``--split``, test by default) or a CliCR JSON file;
PREDICTIONS is a JSON object ``{"<query id>": "<answer>"}``. Each query scores its best match over
all its answers, UMLS synonyms included; a query without a prediction scores 0
(:func:`clinical_corpora.validation.metrics.clicr.score_clicr`). A prediction for a query the data does not
hold is ignored with a warning naming it, as the reference ignores it; when none names a query of the data,
it is an error (the wrong split or file).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.release_view import GivenRelease
from clinical_corpora.builders.contract.scored import report_scores
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.corpora.clicr.released_rows import query_rows
from clinical_corpora.validation.metrics.clicr import answers_from_clicr_json, read_word_vectors, score_clicr

logger = logging.getLogger(__name__)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", type=Path, help="a clicr release folder or a CliCR JSON file")
    parser.add_argument("predictions", type=Path, help='JSON object {"<query id>": "<answer>"}')
    parser.add_argument("--out", type=Path, required=True, help="where to write the scores (JSON)")
    parser.add_argument("--split", default="test", help="the release split to score (default: test)")
    parser.add_argument("--word-vectors", type=Path, help="word2vec text vectors for the embedding average")


def run(args: argparse.Namespace) -> int:
    answers = load_answers(args.data, args.split)
    predictions = load_predictions(args.predictions)
    check_query_ids(answers, predictions, args.predictions)
    vectors = read_word_vectors(args.word_vectors) if args.word_vectors else None
    scores = score_clicr(answers, predictions, vectors)
    report_scores(args, scores, "clicr")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(scores, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(scores, indent=2))
    return 0


def load_answers(data: Path | GivenRelease, split: str) -> dict[str, list[str]]:
    """Query id → all answer texts, from a release's split or a CliCR JSON file."""
    if isinstance(data, GivenRelease):
        release = data.of("clicr", "clicr")
        release.splits("clicr", split)
        return {
            row["id"]: [answer["text"] for answer in row["answers"]]
            for _, row in query_rows(release.view, ["id", "answers"], split)
        }
    if data.is_dir():
        raise ClincorpError(f"{data} is not a clicr release: it has no manifest.json")
    dataset = _read_json(data, "a CliCR JSON dataset")
    try:
        answers = answers_from_clicr_json(dataset)
    except (KeyError, TypeError) as error:
        raise SourceError(
            data, f'expected CliCR JSON {{"data": [{{"document": {{"qas": [{{"id", "answers"}}]}}}}]}}, missing {error}'
        ) from error
    unanswerable = next((query_id for query_id, texts in answers.items() if not texts), None)
    if unanswerable is not None:
        raise SourceError(data, "the query has no answers: expected at least one", record=unanswerable)
    return answers


LISTED_IDS = 5
"""Unknown query ids named in a message; the rest are counted."""


def check_query_ids(answers: dict[str, list[str]], predictions: dict[str, str], path: Path) -> None:
    """Predictions for query ids the data does not hold: a SourceError naming ``path`` when no prediction names
    a query of the data (the wrong split or file: every query would score 0), else a warning naming them (the
    reference evaluate.py ignores them, and so does the score)."""
    unknown = [query_id for query_id in predictions if query_id not in answers]
    if not unknown:
        return
    named = ", ".join(repr(query_id) for query_id in unknown[:LISTED_IDS])
    more = f" and {len(unknown) - LISTED_IDS} more" if len(unknown) > LISTED_IDS else ""
    if len(unknown) == len(predictions):
        raise SourceError(
            path,
            f"no prediction names a query of the data ({named}{more} are unknown): expected the query ids of the "
            "split scored (--split)",
        )
    logger.warning(
        "%s: %d prediction(s) name no query of the data and are ignored, as the reference evaluate.py ignores "
        "them: %s%s",
        path,
        len(unknown),
        named,
        more,
    )


def load_predictions(path: Path) -> dict[str, str]:
    """The predictions file: a JSON object mapping query ids to answer strings."""
    predictions = _read_json(path, 'a JSON object {"<query id>": "<answer>"}')
    if not isinstance(predictions, dict):
        raise SourceError(path, 'expected a JSON object {"<query id>": "<answer>"}')
    for query_id, answer in predictions.items():
        if not isinstance(answer, str):
            raise SourceError(path, f"expected a string answer, found {type(answer).__name__}", record=query_id)
    return predictions


def _read_json(path: Path, expected: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SourceError(path, f"cannot read: {error.strerror}") from error
    except json.JSONDecodeError as error:
        raise SourceError(path, f"not JSON ({error.msg}), expected {expected}", line=error.lineno) from error
