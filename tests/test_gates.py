"""Gate outcomes (pass, fail, skipped), required gates, `mostly` tolerances with their violations listed,
and the ``--gates`` overlay, on the tiny corpus."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.core.errors import GateError, SourceError
from clinical_corpora.core.manifest import Expectation, apply_gate_overlay, load_gate_overlay, load_manifest
from clinical_corpora.validation.expectations import run_suite
from tests.test_pipeline import edit_yaml


def without_annotator_b(corpus: Path, tmp_path: Path) -> dict[str, Path]:
    """Sources given as real inputs, so the optional sample of annotator B is not read (no agreement data)."""
    given = tmp_path / "given"
    given.mkdir()
    for name in ("notes.tsv", "spans.tsv"):
        shutil.copyfile(corpus / "sample" / name, given / name)
    return {"notes": given / "notes.tsv", "spans": given / "spans.tsv"}


def card_gate_rows(card: str) -> list[list[str]]:
    """The rows of the card's Validation table (gate, result, observed, expected)."""
    section = card.split("## Validation\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")][1:]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]


def test_a_gate_that_did_not_run_is_skipped_not_passed(tiny_corpus: Path, tmp_path: Path) -> None:
    outcome = run(
        ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out", sources=without_annotator_b(tiny_corpus, tmp_path))
    )
    [agreement] = [gate for gate in outcome.gates if gate.gate == "agreement.span_f1"]
    assert agreement.status == "skipped" and agreement.skipped == "no annotator data in this build"
    validation = json.loads((outcome.folder / "validation.json").read_text())
    [entry] = [gate for gate in validation["gates"] if gate["gate"] == "agreement.span_f1"]
    assert (entry["status"], entry["success"], entry["reason"]) == ("skipped", None, "no annotator data in this build")
    assert {g.gate: g.status for g in outcome.manifest.gates} == {
        "max_rejects": "pass",
        "expectations": "pass",
        "agreement.span_f1": "skipped",
        "published": "skipped",  # a sample release is not compared with its paper
        "phi": "pass",
    }
    card = (outcome.folder / "README.md").read_text()
    # before: "| agreement.span_f1 | pass | not run: no annotator data in this build |" under
    # "Every gate this release passed"
    assert ["agreement.span_f1", "SKIPPED", "not run: no annotator data in this build", ">= 0.8"] in card_gate_rows(
        card
    )
    assert "Every gate of this release passed" not in card and "Every gate this release passed" not in card
    assert "Skipped (not run, so neither passed nor failed): agreement.span_f1 (no annotator data" in card


def test_a_required_gate_that_is_skipped_fails_the_release(tiny_corpus: Path, tmp_path: Path) -> None:
    edit_yaml(tiny_corpus, lambda d: d["gates"]["agreement"]["span_f1"].update(required=True))
    with pytest.raises(GateError, match=r"agreement.span_f1 FAILED: observed not run \(no annotator data in this "):
        run(
            ReleaseRequest(
                load_manifest(tiny_corpus), tmp_path / "out", sources=without_annotator_b(tiny_corpus, tmp_path)
            )
        )
    assert not list((tmp_path / "out").glob("tiny/1.0.0*/manifest.json"))
    # with annotator B's data the required gate runs and passes
    gates = run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out2")).gates
    assert next(gate for gate in gates if gate.gate == "agreement.span_f1").status == "pass"


def test_a_failed_build_card_lists_failed_gates_first(tiny_corpus: Path, tmp_path: Path) -> None:
    (tiny_corpus / "sample" / "annotator_b" / "spans.tsv").write_text("note_id\tstart\tend\tlabel\n")
    with pytest.raises(GateError):
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "scratch", mode="build"))
    [card] = list((tmp_path / "scratch" / "tiny").glob("*/README.md"))
    text = card.read_text()
    rows = card_gate_rows(text)
    assert rows[0][:2] == ["agreement.span_f1", "FAIL"] and [row[1] for row in rows[1:3]] == ["SKIPPED", "pass"]
    assert "This build FAILED 1 gate(s), listed first: agreement.span_f1. It is not a release." in text
    assert "Every gate" not in text


def expect_labels(corpus: Path, value_set: list[str], **tolerance: Any) -> None:
    """Add an expectation on the spans' labels to corpus.yaml."""
    expectation = {"table": "notes.spans", "expectation": "expect_column_values_to_be_in_set", "column": "label"}
    edit_yaml(corpus, lambda d: d["gates"]["expectations"].append({**expectation, "value_set": value_set, **tolerance}))


def test_a_failing_expectation_lists_the_offending_records(tiny_corpus: Path, tmp_path: Path) -> None:
    expect_labels(tiny_corpus, ["problem"])
    with pytest.raises(GateError) as raised:
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out", mode="build"))
    assert "    train record 'n1': label='test'" in str(raised.value)
    validation = json.loads((tmp_path / "out" / "tiny" / "tiny-1.0.0+sample" / "validation.json").read_text())
    [detail] = [
        d for g in validation["gates"] for d in g["details"] if d.get("kwargs", {}).get("value_set") == ["problem"]
    ]
    assert detail["success"] is False and detail["observed"]["unexpected_count"] == 3
    assert detail["violations"] == [
        {"split": "train", "record": "n1", "values": {"label": "test"}},
        {"split": "train", "record": "n1", "values": {"label": "treatment"}},
        {"split": "train", "record": "n2", "values": {"label": "test"}},
    ]


def test_mostly_tolerates_violations_and_still_lists_them(tiny_corpus: Path, tmp_path: Path) -> None:
    expect_labels(tiny_corpus, ["problem", "test"], mostly=0.8)
    outcome = run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out"))
    [detail] = [d for d in outcome.gates[1].details if d["kwargs"].get("mostly") == 0.8]
    assert detail["success"] is True
    assert detail["violations"] == [{"split": "train", "record": "n1", "values": {"label": "treatment"}}]
    card = (outcome.folder / "README.md").read_text()
    assert "pass (violations tolerated by mostly)" in card
    row = "| notes.spans: expect_column_values_to_be_in_set | pass (tolerated) | 1 | train record 'n1': label="
    assert row in card
    # the same tolerance at 0.9 is exceeded (1 of 6 spans is 17%)
    edit_yaml(tiny_corpus, lambda d: d["gates"]["expectations"][-1].update(mostly=0.9))
    with pytest.raises(GateError, match="expectations FAILED: observed 3/4 passed"):
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out2"))


def write_overlay(path: Path, overlay: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(overlay))
    return path


def test_gates_overlay_changes_thresholds_for_one_release(
    tiny_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # corpus.yaml's label expectation, narrowed so that the treatment span violates it
    edit_yaml(tiny_corpus, lambda d: d["gates"]["expectations"][2].update(value_set=["problem", "test"]))
    assert main(["release", str(tiny_corpus), "--out", str(tmp_path / "out")]) == 1
    assert "expectations FAILED" in capsys.readouterr().err
    overlay = write_overlay(
        tmp_path / "relaxed.yaml",
        {
            "max_rejects": 2,
            "agreement": {"span_f1": {"min": 0.5, "required": True}},
            "expectations": [
                {
                    "table": "notes.spans",
                    "expectation": "expect_column_values_to_be_in_set",
                    "column": "label",
                    "mostly": 0.8,
                }
            ],
        },
    )
    assert main(["release", str(tiny_corpus), "--out", str(tmp_path / "out"), "--gates", str(overlay)]) == 0
    [release] = list((tmp_path / "out" / "tiny").glob("tiny-1.0.0*"))
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["gate_overlay"]["file"] == "relaxed.yaml"
    assert manifest["gate_overlay"]["changes"] == [
        "max_rejects: 0 -> 2",
        "agreement.span_f1 min: 0.8 -> 0.5",
        "agreement.span_f1 required: False -> True",
        "notes.spans: expect_column_values_to_be_in_set (label): {'mostly': None} -> {'mostly': 0.8}",
    ]
    validation = json.loads((release / "validation.json").read_text())
    assert validation["expectation_suite"][2]["mostly"] == 0.8
    assert [g["expected"] for g in validation["gates"]][:3] == ["<= 2", "all pass", ">= 0.5"]
    card = (release / "README.md").read_text()
    assert "The gates were changed for this release by `relaxed.yaml` (clincorp --gates, sha256" in card
    assert "max_rejects: 0 -> 2; agreement.span_f1 min: 0.8 -> 0.5" in card
    # corpus.yaml is untouched, and validate re-runs the recorded (overlaid) suite
    assert "mostly" not in (tiny_corpus / "corpus.yaml").read_text()
    assert main(["validate", str(release), "--corpus", str(tiny_corpus)]) == 0


def test_gates_overlay_naming_nothing_is_an_error(
    tiny_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    overlay = write_overlay(
        tmp_path / "typo.yaml",
        {
            "expectations": [
                {
                    "table": "notes.spans",
                    "expectation": "expect_column_values_to_be_in_set",
                    "column": "lable",
                    "mostly": 0.5,
                }
            ]
        },
    )
    assert main(["build", str(tiny_corpus), "--out", str(tmp_path / "out"), "--gates", str(overlay)]) == 1
    err = capsys.readouterr().err
    assert (
        "typo.yaml" in err
        and "expectation 1 (notes.spans: expect_column_values_to_be_in_set (lable)) matches no" in err
    )
    assert "Traceback" not in err
    manifest = load_manifest(tiny_corpus)
    with pytest.raises(SourceError, match="agreement gate 'kappa' is not in tiny's corpus.yaml"):
        apply_gate_overlay(
            manifest,
            load_gate_overlay(write_overlay(tmp_path / "k.yaml", {"agreement": {"kappa": {"min": 1}}})),
            tmp_path / "k.yaml",
        )
    with pytest.raises(SourceError, match="not a gate overlay"):
        load_gate_overlay(write_overlay(tmp_path / "bad.yaml", {"max_reject": 3}))
    # a copy of corpus.yaml's whole gates: section is accepted as is
    copied = load_gate_overlay(write_overlay(tmp_path / "copy.yaml", {"gates": {"max_rejects": 1}}))
    assert apply_gate_overlay(manifest, copied, tmp_path / "copy.yaml")[0].gates.max_rejects == 1


def test_violations_name_rows_of_a_table_with_a_filtered_index() -> None:
    """A builder's derived table may keep the index of the table it was filtered from."""
    events = pd.DataFrame(
        {"_split": ["train", "dev", "dev"], "_row": [0, 1, 1], "missing": ["", "Status", ""]}, index=[7, 3, 5]
    )
    expectation = Expectation.model_validate(
        {
            "table": "c.events",
            "expectation": "expect_column_values_to_be_in_set",
            "column": "missing",
            "value_set": [""],
        }
    )
    [outcome] = run_suite([expectation], {"c.events": events}, {"c": ["a", "b"]})
    assert not outcome.success
    assert outcome.violations == [{"split": "dev", "record": "b", "values": {"missing": "Status"}}]
