"""CliCR scorer: the original evaluation's metrics, and Šuster & Daelemans 2018's simple baselines.

Reimplements ``dataset-code/evaluate.py`` of the CliCR release (Šuster & Daelemans 2018):

- **EM and F1** (percent) after SQuAD v1.1 normalisation (lower case, punctuation and the
  articles a/an/the removed, white space collapsed), each the maximum over all answers of a query,
  the UMLS-expanded ones included, averaged over all queries; a query without a prediction
  scores 0 (the reference counts it in the total too).
- **BLEU-2 and BLEU-4** (fractions) at corpus level with every answer as a reference, computed
  exactly as the coco-caption ``BleuScorer`` the reference calls (``option='closest'``): clipped
  n-gram counts summed over the corpus, the closest reference length per query (the shorter on a
  tie), and its smoothing quirk kept — each precision is ``(correct + 1e-15) / (guessed + 1e-9)``,
  so a corpus without any 4-gram gets a small non-zero BLEU-4 where NLTK or sacreBLEU return 0.
  The reference requires a prediction for every query; here a missing one is an empty answer.
- **Embedding average** (fraction): cosine between the mean word vectors of the prediction and of
  each answer, maximum over answers, averaged over queries; vectors in word2vec text format.
  Like the reference, a word missing from the vectors takes the file's first vector (``oov=
  "first_row"``); ``oov="skip"`` leaves it out instead. A missing prediction scores 0, and so
  does a zero vector (where the reference would produce NaN).
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np

from clinical_corpora.core.counts import PRFCounts
from clinical_corpora.core.errors import SourceError

_WITHOUT_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_TINY, _SMALL = 1e-15, 1e-9  # coco-caption BleuScorer's smoothing constants


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower().translate(_WITHOUT_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match_score(prediction: str, answer: str) -> float:
    """1.0 when prediction and answer are equal after normalisation, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(answer))


def f1_score(prediction: str, answer: str) -> float:
    """Bag-of-words F1 between the normalised prediction and answer."""
    return _normalized_f1(normalize_answer(prediction), normalize_answer(answer))


def _normalized_f1(prediction: str, answer: str) -> float:
    """:func:`f1_score` of texts already normalised."""
    predicted = prediction.split()
    return _best_f1(predicted, _sharing(predicted, [answer.split()]))


def _sharing(words: list[str], answers: Sequence[list[str]]) -> list[list[str]]:
    """The ``answers`` (as words) with a word of ``words``: against the others F1 is 0.0, and BLEU clips every
    n-gram of ``words`` to 0."""
    vocabulary = set(words)
    return [answer for answer in answers if not vocabulary.isdisjoint(answer)]


def _best_f1(predicted: list[str], sharing: Sequence[list[str]]) -> float:
    """The best bag-of-words F1 of tokens ``predicted`` against any of the answers; 0.0 without one in
    ``sharing`` (those with a token of ``predicted``, :func:`_sharing`)."""
    if not sharing:
        return 0.0
    counts = Counter(predicted)
    return max(
        PRFCounts(
            sum(min(count, expected.count(word)) for word, count in counts.items()), len(predicted), len(expected)
        ).f1
        for expected in sharing
    )


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]], max_order: int = 4) -> list[float]:
    """Cumulative BLEU-1 … BLEU-``max_order`` of white-space tokenised texts, coco-caption style."""
    counts = _BleuCounts(max_order)
    for hypothesis, refs in zip(hypotheses, references, strict=True):
        words = hypothesis.split()
        reference_words = [reference.split() for reference in refs]
        counts.add(words, reference_words, _sharing(words, reference_words))
    return counts.scores()


class _BleuCounts:
    """The corpus counts of coco-caption's BLEU: clipped n-gram matches and n-grams per order, the hypotheses'
    length and their closest references' length."""

    def __init__(self, max_order: int) -> None:
        self.max_order = max_order
        self.correct, self.guessed = [0] * max_order, [0] * max_order
        self.hypothesis_length = self.reference_length = 0

    def add(self, words: list[str], references: Sequence[list[str]], sharing: Sequence[list[str]]) -> None:
        """Count one hypothesis against its references, all and those with one of its words (:func:`_sharing`),
        as words."""
        self.hypothesis_length += len(words)
        self.reference_length += min((abs(len(ref) - len(words)), len(ref)) for ref in references)[1]
        for order in range(1, min(self.max_order, len(words)) + 1):  # a hypothesis has no n-gram longer than itself
            if sharing:
                self.correct[order - 1] += sum(
                    min(count, max(_occurrences(ref, gram) for ref in sharing))
                    for gram, count in _ngrams(words, order).items()
                )
            self.guessed[order - 1] += len(words) - order + 1

    def scores(self) -> list[float]:
        """Cumulative BLEU-1 … BLEU-``max_order``."""
        ratio = (self.hypothesis_length + _TINY) / (self.reference_length + _SMALL)
        brevity = math.exp(1 - 1 / ratio) if ratio < 1 else 1.0
        scores, product = [], 1.0
        for order in range(self.max_order):
            product *= (self.correct[order] + _TINY) / (self.guessed[order] + _SMALL)
            scores.append(product ** (1 / (order + 1)) * brevity)
        return scores


def _ngrams(words: Sequence[str], order: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(words[i : i + order]) for i in range(len(words) - order + 1))


def _occurrences(words: list[str], gram: tuple[str, ...]) -> int:
    """How often ``gram`` occurs in ``words``: a reference's clipping count, without counting all its n-grams."""
    if len(gram) == 1:
        return words.count(gram[0])
    span = len(gram)
    return sum(1 for i in range(len(words) - span + 1) if words[i] == gram[0] and tuple(words[i : i + span]) == gram)


@dataclass(frozen=True)
class WordVectors:
    """Word vectors: ``index`` maps a word to its row of ``matrix``."""

    index: dict[str, int]
    matrix: np.ndarray


def read_word_vectors(path: str | Path) -> WordVectors:
    """Read vectors in word2vec text format (header ``<count> <dimension>``, then ``word v1 … vd``)."""
    path = Path(path)
    with open(path, encoding="utf-8") as lines:
        header = lines.readline().split()
        if len(header) != 2 or not all(part.isdigit() for part in header):
            raise SourceError(path, "expected a header '<count> <dimension>'", line=1)
        count, dimension = map(int, header)
        index: dict[str, int] = {}
        matrix = np.zeros((count, dimension))
        rows = 0
        for line_number, line in enumerate(lines, 2):
            word, *values = line.rstrip("\r\n").rstrip(" ").split(" ")
            if len(values) != dimension or rows == count:
                raise SourceError(
                    path, f"expected a word and {dimension} numbers, {count} rows in all", line=line_number
                )
            try:
                matrix[rows] = [float(value) for value in values]
            except ValueError as error:
                raise SourceError(path, f"not a number: {error}", line=line_number) from None
            index.setdefault(word, rows)
            rows += 1
    if rows != count:
        raise SourceError(path, f"the header announces {count} vectors, the file has {rows}")
    return WordVectors(index, matrix)


def embedding_average_score(
    vectors: WordVectors,
    prediction: str,
    answers: Sequence[str],
    oov: Literal["first_row", "skip"] = "first_row",
) -> float:
    """Best cosine between the mean vector of the normalised prediction and of any answer."""
    return _normalized_embedding_average(
        vectors, normalize_answer(prediction), [normalize_answer(answer) for answer in answers], oov
    )


def _normalized_embedding_average(
    vectors: WordVectors, prediction: str, answers: Sequence[str], oov: Literal["first_row", "skip"]
) -> float:
    """:func:`embedding_average_score` of texts already normalised."""
    predicted = _mean_vector(vectors, prediction, oov)
    if predicted is None:
        return 0.0
    scores = [
        _cosine(expected, predicted)
        for expected in (_mean_vector(vectors, answer, oov) for answer in answers)
        if expected is not None
    ]
    return max(scores, default=0.0)


def _mean_vector(vectors: WordVectors, text: str, oov: Literal["first_row", "skip"]) -> np.ndarray | None:
    rows = [vectors.index.get(word, 0 if oov == "first_row" else -1) for word in text.split(" ")]
    rows = [row for row in rows if row >= 0]
    return vectors.matrix[rows].mean(axis=0) if rows else None


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b)) / norms if norms else 0.0


def score_clicr(
    answers: Mapping[str, Sequence[str]],
    predictions: Mapping[str, str],
    word_vectors: WordVectors | None = None,
    oov: Literal["first_row", "skip"] = "first_row",
) -> dict[str, float]:
    """Score ``predictions`` (query id → answer text) against ``answers`` (query id → all answers).

    Keys: ``exact_match`` and ``f1`` (percent), ``bleu_2`` and ``bleu_4`` (fractions),
    ``embedding_average`` when ``word_vectors`` are given, and the counts ``queries`` and
    ``unanswered``. Predictions for unknown query ids are ignored.
    """
    return AnswerKey(answers).score(predictions, word_vectors, oov)


class _Answers(NamedTuple):
    """A query's answers, normalised, and as words."""

    texts: list[str]
    words: list[list[str]]


class AnswerKey:
    """The answers of some queries (query id → all answers) normalised and split once, to score several
    predictions against (:meth:`score`, as :func:`score_clicr`)."""

    def __init__(self, answers: Mapping[str, Sequence[str]]) -> None:
        if not answers:
            raise ValueError("no queries to score")
        unanswerable = next((query_id for query_id, texts in answers.items() if not texts), None)
        if unanswerable is not None:
            raise ValueError(f"query {unanswerable} has no answers")
        self._normalized: dict[str, str] = {}  # entity texts and UMLS answer sets repeat across queries
        prepared: dict[tuple[str, ...], _Answers] = {}
        self._queries = [(query_id, self._prepared(tuple(texts), prepared)) for query_id, texts in answers.items()]

    def _prepared(self, texts: tuple[str, ...], prepared: dict[tuple[str, ...], _Answers]) -> _Answers:
        """A query's :class:`_Answers`, one object for all queries with these answers."""
        found = prepared.get(texts)
        if found is None:
            normalized = [_normalized(text, self._normalized) for text in texts]
            found = prepared[texts] = _Answers(normalized, [text.split() for text in normalized])
        return found

    def score(
        self,
        predictions: Mapping[str, str],
        word_vectors: WordVectors | None = None,
        oov: Literal["first_row", "skip"] = "first_row",
    ) -> dict[str, float]:
        """:func:`score_clicr` of ``predictions`` against these answers."""
        exact = f1 = embedding = 0.0
        bleu = _BleuCounts(4)
        for query_id, expected in self._queries:
            prediction = predictions.get(query_id)
            hypothesis = _normalized(prediction or "", self._normalized)
            words = hypothesis.split()
            sharing = _sharing(words, expected.words)
            bleu.add(words, expected.words, sharing)
            if prediction is None:
                continue
            # exact_match_score, f1_score and embedding_average_score, each text normalised once for all metrics
            exact += float(hypothesis in expected.texts)
            f1 += _best_f1(words, sharing)
            if word_vectors is not None:
                embedding += _normalized_embedding_average(word_vectors, hypothesis, expected.texts, oov)
        total = len(self._queries)
        bleu_scores = bleu.scores()
        scores = {
            "exact_match": 100.0 * exact / total,
            "f1": 100.0 * f1 / total,
            "bleu_2": bleu_scores[1],
            "bleu_4": bleu_scores[3],
        }
        if word_vectors is not None:
            scores["embedding_average"] = embedding / total
        scores["queries"] = total
        scores["unanswered"] = sum(query_id not in predictions for query_id, _ in self._queries)
        return scores


def _normalized(text: str, known: dict[str, str]) -> str:
    """:func:`normalize_answer`, looked up in ``known`` first and added to it."""
    result = known.get(text)
    if result is None:
        result = known[text] = normalize_answer(text)
    return result


def answers_from_clicr_json(dataset: Mapping) -> dict[str, list[str]]:
    """Query id → answer texts from a CliCR JSON dataset (``{"data": [{"document": {"qas"…}}]}``)."""
    return {
        qa["id"]: [answer["text"] for answer in qa["answers"]]
        for datum in dataset["data"]
        for qa in datum["document"]["qas"]
    }
