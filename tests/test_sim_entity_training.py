"""clicr sim-entity without ``--word-vectors``: word2vec trained on the release's own train split with gensim."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from tests.conftest import SampleVariant

CLINCORP = "import sys; from clinical_corpora.builders.commands.main import entry; sys.exit(entry())"
SPLITS = ("train", "dev", "test")


def _trained_in_a_process(release: Path, out: Path, hash_seed: str) -> None:
    """sim-entity trained on the sample (every word kept, 50 dimensions) in a process with this PYTHONHASHSEED."""
    argv = ["baseline", "clicr", str(release), "--name", "sim-entity", "--embedding-min-count", "1"]
    argv += ["--embedding-dimension", "50", "--save-word-vectors", "--out", str(out)]
    root = Path(__file__).resolve().parents[1]
    environment = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(root)}
    subprocess.run([sys.executable, "-c", CLINCORP, *argv], env=environment, capture_output=True, check=True)


def test_trained_sim_entity_is_the_same_in_two_processes_and_scored_by_clincorp_score(
    sample_variant: SampleVariant, tmp_path: Path
) -> None:
    release = sample_variant("clicr", "full")
    _trained_in_a_process(release, tmp_path / "a", "1")
    _trained_in_a_process(release, tmp_path / "b", "2")
    for name in (*(f"{split}.json" for split in SPLITS), "word_vectors.txt", "embeddings.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    used = json.loads((tmp_path / "a" / "embeddings.json").read_text())
    assert used["embeddings"] == "trained" and used["split"] == "train" and used["library"].startswith("gensim ")
    assert used["settings"] | {"dimension": 750, "min_count": 200} == {
        "model": "cbow",
        **{"dimension": 750, "window": 5, "min_count": 200, "negative": 5, "epochs": 5},
        **{"learning_rate": 0.05, "downsampling": 0.001, "seed": 0},
    }
    vectors = (tmp_path / "a" / "word_vectors.txt").read_text().splitlines()
    assert vectors[0] == f"{used['words']} 50" and vectors[1] == "</s> " + " ".join(["0"] * 50)
    predictions = json.loads((tmp_path / "a" / "test.json").read_text())
    assert set(predictions) == {f"bcr-2019-228214.{n}" for n in range(1, 6)}
    scores = tmp_path / "scores.json"
    assert main(["score", "clicr", str(release), str(tmp_path / "a" / "test.json"), "--out", str(scores)]) == 0
    assert 0 <= json.loads(scores.read_text())["f1"] <= 100


def test_saved_vectors_given_back_give_the_trained_answers(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = str(sample_variant("clicr", "full"))
    argv = ["baseline", "clicr", release, "--name", "sim-entity", "--embedding-dimension", "20", "--seed", "3"]
    assert main([*argv, "--embedding-min-count", "2", "--save-word-vectors", "--out", str(tmp_path / "t")]) == 0
    assert "trained with gensim on this release's train split" in capsys.readouterr().out
    saved = tmp_path / "t" / "word_vectors.txt"
    assert main([*argv, "--word-vectors", str(saved), "--out", str(tmp_path / "f")]) == 0
    assert f"embeddings: the file {saved}" in capsys.readouterr().out
    for split in SPLITS:
        assert (tmp_path / "t" / f"{split}.json").read_text() == (tmp_path / "f" / f"{split}.json").read_text()
    assert json.loads((tmp_path / "f" / "embeddings.json").read_text())["embeddings"] == "file"


def test_training_errors_name_the_extra_and_the_option(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["baseline", "clicr", str(sample_variant("clicr", "full")), "--name", "sim-entity", "--out", str(tmp_path)]
    assert main(argv) == 1  # the paper's min count, 200: no word of the sample's train split is that frequent
    err = capsys.readouterr().err
    assert "occurs 200 times or more: give a lower --embedding-min-count" in err and "Traceback" not in err
    monkeypatch.setitem(sys.modules, "gensim", None)  # as if gensim were not installed
    monkeypatch.setitem(sys.modules, "gensim.models", None)
    assert main([*argv, "--embedding-min-count", "1"]) == 1
    err = capsys.readouterr().err
    assert "pip install 'clinical-corpora[embeddings]'" in err and "Traceback" not in err
    with pytest.raises(SystemExit, match="2"):
        main([*argv, "--embedding-dimension", "0"])
    assert "expected a whole number of at least 1, got '0'" in capsys.readouterr().err
