"""Scoring from a release: ``clincorp score`` takes a release (or its config) as gold and gives the numbers the raw
gold gives, for sdoh (BRAT), snomed (challenge CSV) and coref (CoNLL-2012)."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from tests.conftest import SampleRelease


def _export(format_name: str, release: Path, out: Path) -> Path:
    assert main(["export", format_name, str(release), "--out", str(out)]) == 0
    return out


def _perturb_brat(folder: Path, out: Path) -> Path:
    """A copy with the first event of every third .ann removed and every ``current`` value made ``past``."""
    shutil.copytree(folder, out)
    for number, ann in enumerate(sorted(out.rglob("*.ann"))):
        lines = ann.read_text(encoding="utf-8").splitlines(keepends=True)
        if number % 3 == 0:
            first_event = next((line for line in lines if line.startswith("E")), None)
            lines = [line for line in lines if line is not first_event]
        ann.write_text("".join(re.sub(r" current$", " past", line) for line in lines), encoding="utf-8")
    return out


def test_sdoh_brat_export_scores_itself_perfectly(sample_release: SampleRelease, tmp_path: Path) -> None:
    exported = _export("brat", sample_release("sdoh").folder, tmp_path / "brat")
    assert main(["score", "sdoh", str(exported), str(exported), "--out", str(tmp_path / "scores.csv")]) == 0
    with open(tmp_path / "scores.csv", encoding="utf-8") as handle:
        overall = next(csv.DictReader(handle))
    assert overall["event"] == "OVERALL" and float(overall["F1"]) == 1.0 and int(overall["NT"]) > 0


@pytest.mark.parametrize("gold", ["release", "config"])
def test_sdoh_release_as_gold_scores_as_the_raw_sample(
    gold: str, sample_release: SampleRelease, tmp_path: Path
) -> None:
    release = sample_release("sdoh").folder
    exported = _export("brat", release, tmp_path / "brat")
    perturbed = _perturb_brat(exported, tmp_path / "perturbed")
    raw = find_corpus("sdoh").folder / "sample" / "shac"
    gold_path = release if gold == "release" else release / "data" / "sdoh"
    assert main(["score", "sdoh", str(gold_path), str(perturbed), "--out", str(tmp_path / "release.csv")]) == 0
    assert main(["score", "sdoh", str(raw), str(perturbed), "--out", str(tmp_path / "raw.csv")]) == 0
    scores = (tmp_path / "release.csv").read_text(encoding="utf-8")
    assert scores == (tmp_path / "raw.csv").read_text(encoding="utf-8")
    assert "1.0,1.0,1.0" not in scores.splitlines()[1]  # the perturbation costs something


def test_sdoh_one_split_of_a_release(sample_release: SampleRelease, tmp_path: Path) -> None:
    release = sample_release("sdoh").folder
    perturbed = _perturb_brat(_export("brat", release, tmp_path / "brat"), tmp_path / "perturbed")
    raw = find_corpus("sdoh").folder / "sample" / "shac" / "test"
    arguments = [str(perturbed / "test"), "--out"]
    assert main(["score", "sdoh", str(release), "--split", "test", *arguments, str(tmp_path / "a.csv")]) == 0
    assert main(["score", "sdoh", str(raw), *arguments, str(tmp_path / "b.csv")]) == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_sdoh_release_of_another_corpus_is_refused(
    sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_release("snomed_el").folder
    assert main(["score", "sdoh", str(release), str(tmp_path), "--out", str(tmp_path / "s.csv")]) == 1
    assert "is not a sdoh release" in capsys.readouterr().err


def _perturb_csv(path: Path, out: Path) -> Path:
    """Every fourth annotation dropped and every third one's end moved one character left."""
    with open(path, encoding="utf-8", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    kept = [row for number, row in enumerate(rows) if number % 4 != 0]
    for number, row in enumerate(kept):
        if number % 3 == 0 and int(row[2]) - int(row[1]) > 1:
            row[2] = str(int(row[2]) - 1)
    with open(out, "w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([header, *kept])
    return out


def test_snomed_release_as_gold_scores_as_the_raw_sample(sample_release: SampleRelease, tmp_path: Path) -> None:
    release = sample_release("snomed_el").folder
    raw = find_corpus("snomed_el").folder / "sample" / "train_annotations.csv"
    perturbed = _perturb_csv(raw, tmp_path / "perturbed.csv")
    options = ["--replicates", "50"]
    assert main(["score", "snomed", str(release), str(perturbed), "--out", str(tmp_path / "a.json"), *options]) == 0
    assert main(["score", "snomed", str(raw), str(perturbed), "--out", str(tmp_path / "b.json"), *options]) == 0
    scores = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert scores == json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    assert 0 < scores["macro_char_iou"] < 1


def test_snomed_challenge_csv_export_scores_itself_perfectly(sample_release: SampleRelease, tmp_path: Path) -> None:
    release = sample_release("snomed_el").folder
    exported = _export("challenge-csv", release, tmp_path / "csv")
    test = exported / "test_annotations.csv"
    out = tmp_path / "s.json"
    assert main(["score", "snomed", str(release), "--split", "test", str(test), "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["macro_char_iou"] == 1.0


def _perturb_conll(path: Path, out: Path) -> Path:
    """Every second one-token mention (``(N)`` alone in the last column) dropped."""
    lines, marked = [], 0
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        columns = line.rstrip("\n").split("\t")
        if len(columns) > 1 and re.fullmatch(r"\(\d+\)", columns[-1]):
            marked += 1
            if marked % 2 == 0:
                line = "\t".join([*columns[:-1], "-"]) + "\n"
        lines.append(line)
    out.write_text("".join(lines), encoding="utf-8")
    return out


@pytest.mark.parametrize("corpus", ["rad_coref", "odie_anaphora"])
def test_coref_release_as_key_scores_as_its_conll_export(
    corpus: str, sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_release(corpus).folder
    key = _export("conll2012", release, tmp_path / "conll") / "train.conll"
    response = _perturb_conll(key, tmp_path / "response.conll")
    capsys.readouterr()
    assert main(["score", "coref", str(release), str(response), "--json"]) == 0
    from_release = json.loads(capsys.readouterr().out)
    assert main(["score", "coref", str(key), str(response), "--json"]) == 0
    assert from_release == json.loads(capsys.readouterr().out)
    assert 0 < from_release["conll_f1"] < 1


@pytest.mark.parametrize(("task", "corpus"), [("sdoh", "sdoh"), ("snomed", "snomed_el"), ("coref", "rad_coref")])
def test_a_split_the_gold_release_lacks_or_a_split_of_no_release_is_an_error(
    task: str, corpus: str, sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_release(corpus).folder
    out = [] if task == "coref" else ["--out", str(tmp_path / "scores")]
    assert main(["score", task, str(release), str(tmp_path / "pred"), "--split", "nosuch", *out]) != 0
    assert "has no split 'nosuch'; its splits are" in capsys.readouterr().err
    assert main(["score", task, str(tmp_path), str(tmp_path / "pred"), "--split", "train", *out]) != 0
    assert f"--split applies to a release as {'KEY' if task == 'coref' else 'gold'}" in capsys.readouterr().err


def test_sdoh_scoring_reads_files_up_to_the_releases_own_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A release built with ``--option max_file_bytes=N`` is scored with the same limit: a predicted file over it
    is an error naming the file (the default limit would have read it)."""
    raw = find_corpus("sdoh").folder / "sample" / "shac"
    limit = max(path.stat().st_size for path in raw.rglob("*.*") if path.suffix in {".txt", ".ann"})
    released = run(ReleaseRequest(find_corpus("sdoh"), tmp_path / "out", options={"max_file_bytes": limit}))
    exported = _export("brat", released.folder, tmp_path / "brat")
    oversized = sorted(exported.rglob("*.ann"))[0]
    with oversized.open("a", encoding="utf-8") as handle:
        handle.write("#9\tAnnotatorNotes T1\t" + "x" * limit + "\n")
    capsys.readouterr()
    assert main(["score", "sdoh", str(released.folder), str(exported), "--out", str(tmp_path / "s.csv")]) == 1
    error = capsys.readouterr().err
    assert oversized.name in error and f"{limit:,}-byte limit" in error and "Traceback" not in error
