"""The card's baselines table: every sample release runs its corpus's baselines, records their scores in
validation.json, and its card (and its text-free variant's) shows them beside the papers' numbers; the scores are
those ``clincorp score`` gives the predictions ``clincorp baseline`` writes."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.release.card.baselines import baselines_section
from clinical_corpora.builders.validate.run import check_release
from clinical_corpora.core.manifest import load_manifest
from clinical_corpora.core.registry import corpora
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.validation.published import ReleaseScope
from tests.conftest import SampleVariant
from tests.test_validate_forgeries import edit_json

CORPORA = ["clicr", "odie_anaphora", "rad_coref", "sdoh", "snomed_el"]


def card_rows(card: str) -> dict[tuple[str, str, str], dict[str, str]]:
    """The baselines table of a card: (system, split, scores of) → metric → the printed value."""
    section = card.split("## Baselines\n")[1].split("\n## ")[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]  # the header and the rows
    columns = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[1:]:
        cells = dict(zip(columns, (cell.strip() for cell in line.strip("|").split("|")), strict=True))
        rows[(cells.pop("system"), cells.pop("split"), cells.pop("scores of"))] = cells
    return rows


@pytest.mark.parametrize("corpus", CORPORA)
def test_a_sample_card_shows_its_baselines_as_invented_data_and_the_text_free_card_the_same(
    corpus: str, sample_variant: SampleVariant
) -> None:
    full = sample_variant(corpus, "full")
    card = (full / "README.md").read_text(encoding="utf-8")
    recorded = json.loads((full / "validation.json").read_text(encoding="utf-8"))["baselines"]
    assert recorded and "its scores describe invented data" in card
    rows = card_rows(card)
    for score in recorded:
        shown = rows[(score["baseline"], score["split"], "this release")]
        assert {name: float(shown[name]) for name in score["metrics"]} == pytest.approx(score["metrics"], abs=1e-4)
    text_free = (sample_variant(corpus, "text-free") / "README.md").read_text(encoding="utf-8")
    assert card_rows(text_free) == rows
    assert "measured on the full release's rows, before their licensed text was removed" in text_free


def test_the_papers_numbers_stand_under_their_baseline_with_their_table(sample_variant: SampleVariant) -> None:
    rows = card_rows((sample_variant("rad_coref", "full") / "README.md").read_text(encoding="utf-8"))
    paper = rows[("string-match", "train", "Datta et al. 2022, Table 7")]
    assert paper["muc.f1"] == "0.7495" and paper["conll_f1"] == "0.7332"
    assert paper["note"] == "a sample release holds invented data, not the corpus its paper describes"
    clicr = card_rows((sample_variant("clicr", "full") / "README.md").read_text(encoding="utf-8"))
    assert clicr[("maxfreq-entity", "test", "Šuster & Daelemans 2018, Table 4")]["exact_match"] == "8.5"
    assert clicr[("rand-entity", "test", "this release")]["note"] == "seed 1234"


def test_a_real_release_says_why_a_papers_number_is_not_compared() -> None:
    corpus = load_manifest(corpora.get("rad_coref") / "corpus.yaml")
    table_7 = {"muc.f1": 0.7495, "b_cubed.f1": 0.766, "ceaf_e.f1": 0.684, "blanc.f1": 0.7444, "conll_f1": 0.7332}
    score = BaselineScore(baseline="string-match", split="train", scorer="coref", metrics=table_7)
    section = baselines_section(corpus, [score], ["noteevents"], ReleaseScope("patients", 59, ("train", "test")), False)
    assert section is not None and section.table is not None
    note = section.table.rows[1][-1]
    assert str(note).startswith("not compared: another release: this release holds 59 rows of its patients config")
    same = baselines_section(corpus, [score], ["noteevents"], ReleaseScope("patients", 60, ("train",)), False)
    assert same is not None and same.table is not None and same.table.rows[1][-1] == "match"


def test_the_card_scores_are_those_clincorp_score_gives_the_baseline_predictions(
    sample_variant: SampleVariant, tmp_path: Path
) -> None:
    release = sample_variant("clicr", "full")
    rows = card_rows((release / "README.md").read_text(encoding="utf-8"))
    out = str(tmp_path / "rand")
    assert main(["baseline", "clicr", str(release), "--name", "rand-entity", "--seed", "1234", "--out", out]) == 0
    for split in ("train", "dev", "test"):
        scored = tmp_path / f"{split}.scores.json"
        argv = ["score", "clicr", str(release), f"{out}/{split}.json", "--split", split, "--out", str(scored)]
        assert main(argv) == 0
        scores = json.loads(scored.read_text(encoding="utf-8"))
        shown = rows[("rand-entity", split, "this release")]
        assert float(shown["exact_match"]) == pytest.approx(scores["exact_match"], abs=1e-4)
        assert float(shown["f1"]) == pytest.approx(scores["f1"], abs=1e-4)


def test_the_card_scores_of_snomed_and_sdoh_are_those_of_clincorp_score(
    sample_variant: SampleVariant, tmp_path: Path
) -> None:
    snomed = sample_variant("snomed_el", "full")
    assert main(["baseline", "snomed_el", str(snomed), "--out", str(tmp_path / "snomed")]) == 0
    scored = tmp_path / "snomed.json"
    argv = ["score", "snomed", str(snomed), str(tmp_path / "snomed" / "test.csv"), "--split", "test"]
    assert main([*argv, "--replicates", "1", "--out", str(scored)]) == 0
    scores = json.loads(scored.read_text(encoding="utf-8"))
    shown = card_rows((snomed / "README.md").read_text(encoding="utf-8"))[("dictionary", "test", "this release")]
    assert float(shown["macro_char_iou"]) == pytest.approx(scores["macro_char_iou"], abs=1e-4)
    sdoh = sample_variant("sdoh", "full")
    assert main(["baseline", "sdoh", str(sdoh), "--split", "train", "--out", str(tmp_path / "sdoh")]) == 0
    out = tmp_path / "sdoh.csv"
    assert (
        main(["score", "sdoh", str(sdoh), str(tmp_path / "sdoh" / "train"), "--split", "train", "--out", str(out)]) == 0
    )
    overall = next(csv.DictReader(out.open(encoding="utf-8")))
    shown = card_rows((sdoh / "README.md").read_text(encoding="utf-8"))[("rules", "train", "this release")]
    assert float(shown["f1"]) == pytest.approx(float(overall["F1"]), abs=1e-4)


def test_validate_refuses_baseline_scores_the_rows_do_not_give(sample_variant: SampleVariant, tmp_path: Path) -> None:
    release = sample_variant("odie_anaphora", "full")
    forged = Path(shutil.copytree(release, tmp_path / "odie_anaphora" / release.name))

    def raise_scores(validation: dict[str, list[dict[str, dict[str, float]]]]) -> None:
        validation["baselines"][0]["metrics"]["muc.f1"] = 0.99

    edit_json(forged, "validation.json", raise_scores)
    problems = [
        str(detail.get("problem")) for gate in check_release(forged) if not gate.success for detail in gate.details
    ]
    assert any(re.search(r"validation\.json: its baselines' scores are not those", p) for p in problems), problems


def test_the_view_shows_the_baselines_and_the_records_made_on_the_release(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release, other = sample_variant("rad_coref", "full"), sample_variant("odie_anaphora", "full")
    records = tmp_path / "records"
    assert main(["baseline", "rad_coref", str(release), "--out", str(tmp_path / "p")]) == 0
    score = ["score", "coref", str(release), str(tmp_path / "p" / "train.conll"), "--split", "train"]
    assert main([*score, "--record", str(records / "a.json"), "--system", "my-system"]) == 0
    assert main(["view", str(release), "--out", str(tmp_path / "view"), "--results", str(records)]) == 0
    index = (tmp_path / "view" / "index.html").read_text(encoding="utf-8")
    assert '<section class="card" id="baselines">' in index and "<td>Datta et al. 2022, Table 7</td>" in index
    assert "<strong>This is a sample release: its scores describe invented data</strong>" in index
    assert '<tr class="result"><td>my-system</td><td>coref</td>' in index
    capsys.readouterr()
    assert main(["view", str(other), "--out", str(tmp_path / "other"), "--results", str(records)]) == 1
    assert "a.json: a result record made on release digest" in capsys.readouterr().err
