"""``clincorp score sdoh``: criteria flags, CSV layout, detailed output, unpaired documents.

The note is the seed's Figure 2 (sample ``shac_double`` mimic/0701): annotator A's Drug trigger
"cocaine" [55,62] with StatusTime "use" [63,66] against B's "cocaine use" [55,66] with "Recent"
[48,54]; everything else is identical. 3 triggers + 6 arguments a side (counts by hand).
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main

DOUBLE = Path(__file__).resolve().parents[1] / "corpora" / "sdoh" / "sample" / "shac_double"


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    gold, predicted = tmp_path / "gold", tmp_path / "pred"
    for annotator, target in (("annotator_a", gold), ("annotator_b", predicted)):
        (target / "mimic").mkdir(parents=True)
        for suffix in (".txt", ".ann"):
            shutil.copyfile(DOUBLE / annotator / "mimic" / f"0701{suffix}", target / "mimic" / f"0701{suffix}")
    return gold, predicted


def _rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


@pytest.mark.parametrize(
    "flags, overall",
    [
        # defaults overlap / exact / label: both Drug triggers overlap, StatusTime values agree
        ([], ["9", "9", "9", "1.0", "1.0", "1.0"]),
        # exact triggers: the cocaine event is not aligned, losing its trigger, StatusTime and Type
        (["--score-trig", "exact"], ["9", "9", "6", "0.6666666666666666", "0.6666666666666666", "0.6666666666666666"]),
        (["--score-trig", "min_dist"], ["9", "9", "9", "1.0", "1.0", "1.0"]),
        # exact StatusTime spans: "use" vs "Recent" differ
        (
            ["--score-labeled", "exact"],
            ["9", "9", "8", "0.8888888888888888", "0.8888888888888888", "0.8888888888888888"],
        ),
        # partial counts tokens of span-only arguments: "clean for 10 years" 4, "cocaine" 1, "1 ppd" 2,
        # all equal; plus 3 triggers and 3 StatusTime values
        (["--score-span", "partial"], ["13", "13", "13", "1.0", "1.0", "1.0"]),
    ],
)
def test_criteria_flags_and_csv_layout(
    folders: tuple[Path, Path], tmp_path: Path, flags: list[str], overall: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    gold, predicted = folders
    out = tmp_path / "scores.csv"
    assert main(["score", "sdoh", str(gold), str(predicted), "--out", str(out), *flags]) == 0
    rows = _rows(out)
    assert rows[0] == ["event", "argument", "subtype", "NT", "NP", "TP", "P", "R", "F1"]
    assert rows[1] == ["OVERALL", "OVERALL", "OVERALL", *overall]
    keys = [tuple(row[:3]) for row in rows[2:]]
    assert keys == sorted(keys) and ("Drug", "Trigger", "N/A") in keys
    assert f"OVERALL NT={overall[0]} NP={overall[1]} TP={overall[2]}" in capsys.readouterr().out
    assert not (tmp_path / "scores_detailed.csv").exists()


def test_detailed_writes_per_document_rows(folders: tuple[Path, Path], tmp_path: Path) -> None:
    gold, predicted = folders
    out = tmp_path / "scores.csv"
    assert (
        main(
            ["score", "sdoh", str(gold), str(predicted), "--out", str(out), "--detailed", "--score-labeled", "overlap"]
        )
        == 0
    )
    detailed = _rows(tmp_path / "scores_detailed.csv")
    assert detailed[0] == ["id", "event", "argument", "subtype", "NT", "NP", "TP", "P", "R", "F1"]
    assert ["mimic/0701", "Drug", "StatusTime", "current", "1", "1", "0", "0.0", "0.0", "0.0"] in detailed


def test_document_in_one_folder_only_is_an_error(
    folders: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold, predicted = folders
    (predicted / "uw").mkdir()
    (predicted / "uw" / "0801.txt").write_text("x\n", encoding="utf-8")
    (predicted / "uw" / "0801.ann").write_text("", encoding="utf-8")
    out = tmp_path / "scores.csv"
    assert main(["score", "sdoh", str(gold), str(predicted), "--out", str(out)]) == 1
    assert "documents only in predictions: uw/0801" in capsys.readouterr().err
    assert not out.exists()


def test_bad_criterion_is_a_usage_error(folders: tuple[Path, Path], tmp_path: Path) -> None:
    gold, predicted = folders
    with pytest.raises(SystemExit) as raised:
        main(["score", "sdoh", str(gold), str(predicted), "--out", str(tmp_path / "s.csv"), "--score-trig", "fuzzy"])
    assert raised.value.code == 2
