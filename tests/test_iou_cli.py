"""``clincorp score snomed GOLD.csv PRED.csv --out scores.json`` on hand-scored inputs.

Note n1 is the paper's example "CT head revealed no internal hemorrhage." with gold "CT head" (0-7) for
303653007 and the prediction "CT" (0-2), IoU 2/7; the prediction also links "internal" (20-28) to a
concept absent from gold. Note n2 has a 4-character span predicted exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main

CT_HEAD, OTHER = 303653007, 86049000
HEADER = "note_id,start,end,concept_id\n"


def write(path: Path, rows: list[str]) -> Path:
    path.write_text(HEADER + "".join(row + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    gold = write(tmp_path / "gold.csv", [f"n1,0,7,{CT_HEAD}", f"n2,0,4,{CT_HEAD}"])
    pred = write(tmp_path / "pred.csv", [f"n1,0,2,{CT_HEAD}", f"n1,20,28,{OTHER}", f"n2,0,4,{CT_HEAD}"])
    return gold, pred


def test_scores_json_by_hand(files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "scores" / "scores.json"
    assert main(["score", "snomed", str(files[0]), str(files[1]), "--out", str(out), "--replicates", "400"]) == 0
    scores = json.loads(out.read_text())
    # CT head: characters pooled over notes, intersection 2 + 4, union 7 + 4; OTHER only predicted: 0
    assert scores["macro_char_iou"] == pytest.approx((6 / 11 + 0) / 2)
    assert scores["support_weighted_char_iou"] == pytest.approx(6 / 11)  # OTHER has no gold span
    # resampling two notes: (n1, n1) gives macro 1/7 and weighted 2/7 and (n2, n2) gives 1.0, each 1/4 of the time
    assert scores["macro_char_iou_ci95"] == pytest.approx([1 / 7, 1.0])
    assert scores["support_weighted_char_iou_ci95"] == pytest.approx([2 / 7, 1.0])
    assert scores["bootstrap"] == {"replicates": 400, "seed": 0, "unit": "note", "notes": 2}
    assert scores["per_concept"] == [
        {
            "concept_id": OTHER,
            "iou": 0.0,
            "intersection_chars": 0,
            "union_chars": 8,
            "gold_chars": 0,
            "pred_chars": 8,
            "gold_spans": 0,
            "pred_spans": 1,
        },
        {
            "concept_id": CT_HEAD,
            "iou": pytest.approx(6 / 11),
            "intersection_chars": 6,
            "union_chars": 11,
            "gold_chars": 11,
            "pred_chars": 6,
            "gold_spans": 2,
            "pred_spans": 2,
        },
    ]
    assert "macro character IoU 0.2727" in capsys.readouterr().out


def test_same_seed_same_scores(files: tuple[Path, Path], tmp_path: Path) -> None:
    outputs = [tmp_path / "a.json", tmp_path / "b.json"]
    for out in outputs:
        main(["score", "snomed", str(files[0]), str(files[1]), "--out", str(out), "--replicates", "50"])
    assert outputs[0].read_bytes() == outputs[1].read_bytes()


def test_malformed_prediction_names_file_and_line(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pred = write(tmp_path / "bad.csv", [f"n1,0,2,{CT_HEAD}", "n1,9,3,1234567"])
    assert main(["score", "snomed", str(files[0]), str(pred), "--out", str(tmp_path / "s.json")]) == 1
    assert "bad.csv:3: expected 0 <= start < end, found start=9 end=3" in capsys.readouterr().err
    assert not (tmp_path / "s.json").exists()


def test_nothing_to_score_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = write(tmp_path / "empty.csv", [])
    assert main(["score", "snomed", str(empty), str(empty), "--out", str(tmp_path / "s.json")]) == 1
    assert "nothing to score" in capsys.readouterr().err
