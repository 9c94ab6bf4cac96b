"""CliCR scorer: SQuAD EM/F1, coco-caption BLEU, embedding average, baselines (hand-computed values)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from clinical_corpora.core.errors import SourceError
from clinical_corpora.validation.metrics.clicr import (
    AnswerKey,
    answers_from_clicr_json,
    corpus_bleu,
    embedding_average_score,
    exact_match_score,
    f1_score,
    normalize_answer,
    read_word_vectors,
    score_clicr,
)


def test_normalize_answer() -> None:
    assert normalize_answer("The  Acute, renal-failure!") == "acute renalfailure"
    assert normalize_answer("an X-ray of a thorax") == "xray of thorax"
    assert normalize_answer("Theophylline") == "theophylline"  # "the" only as a word


def test_exact_match_and_f1() -> None:
    assert exact_match_score("The relapse.", "relapse") == 1.0
    assert exact_match_score("relapses", "relapse") == 0.0
    # common {failure}: precision 1/3, recall 1/2
    assert f1_score("acute renal failure", "kidney failure") == pytest.approx(0.4)
    assert f1_score("fever", "chest pain") == 0.0


def test_score_takes_the_best_answer_and_counts_unanswered_as_zero() -> None:
    answers = {
        "q.1": ["enuresis", "bedwetting"],
        "q.2": ["acute kidney injury", "kidney failure"],
        "q.3": ["relapse"],
    }
    predictions = {"q.1": "Bedwetting", "q.2": "acute renal failure", "other": "ignored"}
    scores = score_clicr(answers, predictions)
    assert scores["exact_match"] == pytest.approx(100 / 3)
    assert scores["f1"] == pytest.approx(100 * (1 + 0.4 + 0) / 3)
    assert (scores["queries"], scores["unanswered"]) == (3, 1)
    assert "embedding_average" not in scores


def test_corpus_bleu_matches_coco_caption_with_its_smoothing() -> None:
    hypotheses = ["acute renal failure", "fever"]
    references = [["acute kidney failure", "acute renal failure"], ["high fever"]]
    # n-gram counts: correct = guessed = (4, 2, 1, 0); hypothesis length 4, closest reference lengths 3 + 2 = 5
    brevity = math.exp(1 - 5 / 4)
    bleu = corpus_bleu(hypotheses, references)
    assert bleu[1] == pytest.approx(brevity, rel=1e-6)
    assert bleu[3] == pytest.approx(brevity * (1e-15 / 1e-9) ** 0.25, rel=1e-6)  # no 4-gram: tiny, not 0


def test_corpus_bleu_clips_counts_and_takes_the_shorter_closest_reference() -> None:
    # "pain pain pain": unigram "pain" clipped to 1; references of length 2 and 4 are equally close to 3
    bleu = corpus_bleu(["pain pain pain"], [["chest pain", "pain in the chest"]], max_order=1)
    assert bleu[0] == pytest.approx(1 / 3, rel=1e-6)  # length 3 >= 2: no brevity penalty


def test_missing_prediction_is_an_empty_answer_in_bleu() -> None:
    scores = score_clicr({"q.1": ["fever"], "q.2": ["chest pain"]}, {"q.1": "fever"})
    # hypothesis length 1, reference length 1 + 2 = 3 → brevity exp(1 - 3); unigram precision 1
    assert scores["bleu_2"] == pytest.approx(math.exp(-2) * (1e-15 / 1e-9) ** 0.5, rel=1e-6)


def test_an_answer_key_scores_several_predictions_as_score_clicr() -> None:
    answers = {
        "q.1": ["acute kidney injury", "kidney failure"],
        "q.2": ["fever", "pyrexia"],
        "q.3": ["acute kidney injury", "kidney failure"],  # the same answers: prepared once
        "q.4": ["chest pain"],
    }
    key = AnswerKey(answers)
    for predictions in (
        {"q.1": "acute renal failure", "q.2": "The fever", "q.3": "injury", "q.4": "pain pain"},
        {"q.1": "kidney failure", "q.3": "", "q.4": "cough"},
    ):
        assert key.score(predictions) == score_clicr(answers, predictions)
    assert key.score({"q.2": "pyrexia"})["exact_match"] == 25.0
    with pytest.raises(ValueError, match="no queries"):
        AnswerKey({})
    with pytest.raises(ValueError, match="query q.2 has no answers"):
        AnswerKey({"q.1": ["fever"], "q.2": []})


def _vectors(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "vectors.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_embedding_average(tmp_path: Path) -> None:
    vectors = read_word_vectors(_vectors(tmp_path, "4 2\nthe 0 1 \nrenal 1 0\nkidney 1 1\nfailure 0 1\n"))
    # "renal failure" → (0.5, 0.5); "kidney failure" → (0.5, 1): cosine 0.75 / (0.7071 * 1.1180)
    expected = 0.75 / (math.sqrt(0.5) * math.sqrt(1.25))
    assert embedding_average_score(vectors, "renal failure", ["kidney failure", "fever"]) == pytest.approx(expected)
    # an unknown word takes the first vector ("the"), as in the reference; "skip" drops it
    assert embedding_average_score(vectors, "renal", ["fever"]) == pytest.approx(0.0)
    assert embedding_average_score(vectors, "failure", ["fever"]) == pytest.approx(1.0)
    assert embedding_average_score(vectors, "failure", ["fever"], oov="skip") == 0.0
    scores = score_clicr({"q.1": ["kidney failure"], "q.2": ["fever"]}, {"q.1": "renal failure"}, vectors)
    assert scores["embedding_average"] == pytest.approx(expected / 2)


@pytest.mark.parametrize(
    ("content", "line"),
    [
        ("2 2\nrenal 1 0\nkidney 1\n", 3),
        ("x 2\nrenal 1 0\n", 1),
        ("1 2\nrenal 1 0\nkidney 1 1\n", 3),
        ("1 2\nrenal 1 b\n", 2),
    ],
)
def test_malformed_word_vectors(tmp_path: Path, content: str, line: int) -> None:
    with pytest.raises(SourceError) as caught:
        read_word_vectors(_vectors(tmp_path, content))
    assert caught.value.line == line


def test_too_few_word_vectors(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="announces 3 vectors, the file has 1"):
        read_word_vectors(_vectors(tmp_path, "3 1\nrenal 1\n"))


def test_answers_from_clicr_json() -> None:
    dataset = {
        "version": "1.0",
        "data": [
            {
                "source": "bcr-1",
                "document": {
                    "title": "T",
                    "context": "BEG__fever__END",
                    "qas": [
                        {
                            "id": "bcr-1.1",
                            "query": "@placeholder was high",
                            "answers": [
                                {"text": "fever", "origin": "dataset", "cui": "C9000004", "sem_type": "problem"},
                                {"text": "pyrexia", "origin": "UMLS", "cui": "C9000004", "sem_type": "problem"},
                            ],
                        }
                    ],
                },
            }
        ],
    }
    assert answers_from_clicr_json(dataset) == {"bcr-1.1": ["fever", "pyrexia"]}
