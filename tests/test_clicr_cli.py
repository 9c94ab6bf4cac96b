"""``clincorp export clicr-json`` and ``clincorp score clicr`` on the released sample.

The sample's test split is case bcr-2019-228214 (5 queries; answers read off the mini UMLS):
.1 ADHD | Attention deficit hyperactivity disorder | …, .2 enuresis | Bedwetting | Bed wetting,
.3 constipation | Costiveness, .4 desmopressin | DDAVP | Desmopressin acetate,
.5 enuresis alarm | Bedwetting alarm | Bell and pad alarm.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.corpora.clicr.clicr_json import marked_context, tokenized_query
from tests.conftest import SampleRelease

PREDICTIONS = {
    "bcr-2019-228214.1": "attention deficit hyperactivity disorder",  # a synonym, other case: EM 1
    "bcr-2019-228214.2": "the enuresis",  # article dropped: EM 1
    "bcr-2019-228214.3": "severe constipation",  # F1 2/3 (precision 1/2, recall 1)
    "bcr-2019-228214.5": "alarm",  # F1 2/3 against "enuresis alarm"; .4 unanswered: 0
}
EXPECTED_EM = 100 * 2 / 5
EXPECTED_F1 = 100 * (1 + 1 + 2 / 3 + 2 / 3) / 5


@pytest.fixture(scope="module")
def release(sample_release: SampleRelease) -> Path:
    return sample_release("clicr").folder


@pytest.fixture(scope="module")
def exported(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("clicr-json")
    assert main(["export", "clicr-json", str(release), "--out", str(out)]) == 0
    return out


def test_export_writes_one_clicr_json_per_split(exported: Path) -> None:
    assert sorted(path.name for path in exported.iterdir()) == ["dev1.0.json", "test1.0.json", "train1.0.json"]
    test = json.loads((exported / "test1.0.json").read_text(encoding="utf-8"))
    assert test["version"] == "1.0"
    (datum,) = test["data"]
    assert datum["source"] == "bcr-2019-228214"
    document = datum["document"]
    assert document["title"].startswith("Persistent bedwetting in a 9-year-old boy")
    assert [qa["id"] for qa in document["qas"]] == [f"bcr-2019-228214.{n}" for n in range(1, 6)]
    first = document["qas"][0]
    assert first["query"] == "Patients with @placeholder have higher incidence of enuresis ."
    assert first["answers"][0] == {"text": "ADHD", "origin": "dataset", "cui": "C9000013", "sem_type": "problem"}
    assert document["context"].startswith(
        "Summary\nA 9 - year - old boy with BEG__attention deficit hyperactivity disorder__END was referred "
        "with persistent BEG__bedwetting__END on most nights ."
    )


def test_marked_context_by_hand() -> None:
    passage = "Summary\n\nHe had chest pain (angina).\n\nAspirin helped."
    entities = [(16, 26), (28, 34), (38, 45)]
    assert [passage[start:end] for start, end in entities] == ["chest pain", "angina", "Aspirin"]
    assert marked_context(passage, entities) == (
        "Summary\nHe had BEG__chest pain__END ( BEG__angina__END ) .\nBEG__Aspirin__END helped ."
    )


def test_tokenized_query_keeps_the_placeholder() -> None:
    assert tokenized_query("Treat @placeholder, then re-test.") == "Treat @placeholder , then re - test ."


@pytest.mark.parametrize("data", ["release", "json"])
def test_score_by_hand(data: str, release: Path, exported: Path, tmp_path: Path) -> None:
    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps(PREDICTIONS), encoding="utf-8")
    source = release if data == "release" else exported / "test1.0.json"
    out = tmp_path / "scores.json"
    assert main(["score", "clicr", str(source), str(predictions), "--out", str(out)]) == 0
    scores = json.loads(out.read_text(encoding="utf-8"))
    assert scores["exact_match"] == pytest.approx(EXPECTED_EM)
    assert scores["f1"] == pytest.approx(EXPECTED_F1)
    assert scores["queries"] == 5 and scores["unanswered"] == 1
    # BLEU (coco-caption): hypotheses of 4+1+2+0+1 = 8 words, closest reference lengths 4+1+1+1+2 = 9,
    # brevity exp(1 - 9/8); clipped precisions 1-gram 7/8, 2-gram 3/4, 3-gram 2/2, 4-gram 1/1.
    brevity = math.exp(1 - 9 / 8)
    assert scores["bleu_2"] == pytest.approx((7 / 8 * 3 / 4) ** (1 / 2) * brevity)
    assert scores["bleu_4"] == pytest.approx((7 / 8 * 3 / 4) ** (1 / 4) * brevity)


def test_score_with_word_vectors(release: Path, tmp_path: Path) -> None:
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("2 2\nalarm 1 0\nenuresis 0 1\n", encoding="utf-8")
    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps({"bcr-2019-228214.2": "enuresis"}), encoding="utf-8")
    out = tmp_path / "scores.json"
    assert (
        main(["score", "clicr", str(release), str(predictions), "--out", str(out), "--word-vectors", str(vectors)]) == 0
    )
    assert json.loads(out.read_text(encoding="utf-8"))["embedding_average"] == pytest.approx(1 / 5)


def test_bad_predictions_and_split_are_clear_errors(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    predictions = tmp_path / "predictions.json"
    predictions.write_text('["not", "an", "object"]', encoding="utf-8")
    assert main(["score", "clicr", str(release), str(predictions), "--out", str(tmp_path / "s.json")]) == 1
    assert "predictions.json: expected a JSON object" in capsys.readouterr().err
    predictions.write_text("{}", encoding="utf-8")
    assert (
        main(
            [
                "score",
                "clicr",
                str(release),
                str(predictions),
                "--out",
                str(tmp_path / "s.json"),
                "--split",
                "validation",
            ]
        )
        == 1
    )
    assert "has no split 'validation'" in capsys.readouterr().err


def test_a_query_without_answers_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "test1.0.json"
    qas = [{"id": "q1", "answers": [{"text": "fever"}]}, {"id": "q2", "answers": []}]
    data.write_text(json.dumps({"data": [{"document": {"qas": qas}}]}), encoding="utf-8")
    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps({"q1": "fever", "q2": "cough"}), encoding="utf-8")
    assert main(["score", "clicr", str(data), str(predictions), "--out", str(tmp_path / "s.json")]) == 1
    assert "test1.0.json [q2]: the query has no answers: expected at least one" in capsys.readouterr().err
    assert not (tmp_path / "s.json").exists()


def test_export_refuses_a_folder_that_is_not_a_clicr_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "clicr-json", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    assert "is not a release: it has no manifest.json" in capsys.readouterr().err
