"""The PHI gate in ``clincorp release`` (full and text-free): its verdict in validation.json, the manifest and the
card; a finding refuses the release and is listed beside it by place and hash; a corpus's allowed fields and a
maintainer's reviewed findings (``--phi-allow``) let through and recorded, never their text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.core.manifest import PhiAllowedField
from clinical_corpora.core.release_manifest import PhiReviewed

SSN = "555-12-3456"
"""An invented social security number, planted as a SHAC note's file stem (its id in the release)."""

SDOH_VERSION = find_corpus("sdoh").version


def _planted_shac(tmp_path: Path) -> Path:
    """The sdoh sample's SHAC folder with note 0101 renamed to an SSN."""
    shac = Path(shutil.copytree(find_corpus("sdoh").folder / "sample" / "shac", tmp_path / "shac"))
    for suffix in (".txt", ".ann"):
        (shac / "train" / "mimic" / f"0101{suffix}").rename(shac / "train" / "mimic" / f"{SSN}{suffix}")
    return shac


def _gate(folder: Path, name: str) -> dict[str, object]:
    gates = json.loads((folder / name).read_text(encoding="utf-8"))["gates"]
    return next(gate for gate in gates if gate["gate"] == "phi")


def test_release_records_the_phi_gate(releases: tuple[Path, Path]) -> None:
    for release in releases:
        recorded = _gate(release, "validation.json")
        assert recorded["status"] == "pass" and str(recorded["observed"]).startswith("0 findings in ")
        assert _gate(release, "manifest.json")["observed"] == recorded["observed"]
        card = (release / "README.md").read_text(encoding="utf-8")
        assert "## PHI gate" in card and f"Result: pass, {recorded['observed']}." in card


def test_a_finding_refuses_the_release_and_is_listed_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    status = main(["release", "sdoh", "--source", f"shac={_planted_shac(tmp_path)}", "--out", str(out)])
    printed = capsys.readouterr()
    report = out / "sdoh" / f"sdoh-{SDOH_VERSION}.phi-report.jsonl"
    lines = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    assert status != 0 and "gate phi FAILED: observed 5 findings (ssn 5)" in printed.err
    assert [path.name for path in (out / "sdoh").iterdir()] == [report.name]
    assert {(line["file"], line["field"], line["category"]) for line in lines} == {
        ("data/sdoh/train-00000-of-00001.parquet", "id", "ssn"),
        ("data/sdoh_bigbio_kb/train-00000-of-00001.parquet", "id", "ssn"),
        ("data/sdoh_bigbio_kb/train-00000-of-00001.parquet", "document_id", "ssn"),
        ("inputs.jsonl", "file", "ssn"),
    }
    assert SSN not in printed.out + printed.err + report.read_text(encoding="utf-8")


def test_reviewed_findings_let_the_full_and_text_free_releases_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shac, out = _planted_shac(tmp_path), tmp_path / "out"
    allow = tmp_path / "allow.jsonl"
    asked = ["release", "sdoh", "--source", f"shac={shac}", "--out", str(out), "--text-free", "--phi-allow", str(allow)]
    allow.write_text("")
    for variant in ("", ".text-free"):  # the full release refused, then its text-free variant (new places)
        assert main(asked) != 0 and not (out / "sdoh" / f"sdoh-{SDOH_VERSION}{variant}").exists()
        report_file = out / "sdoh" / f"sdoh-{SDOH_VERSION}{variant}.phi-report.jsonl"
        report = report_file.read_text(encoding="utf-8").splitlines()
        reviewed = "".join(json.dumps({**json.loads(line), "reason": "an invented id"}) + "\n" for line in report)
        allow.write_text(allow.read_text() + reviewed)
    capsys.readouterr()
    assert main(asked) == 0
    for folder in (f"sdoh-{SDOH_VERSION}", f"sdoh-{SDOH_VERSION}.text-free"):
        release = out / "sdoh" / folder
        manifest = (release / "manifest.json").read_text(encoding="utf-8")
        reviewed = json.loads(manifest)["phi"]["reviewed"]
        assert {entry["reason"] for entry in reviewed} == {"an invented id"} and SSN not in manifest
        assert "allowed;" in str(_gate(release, "validation.json")["observed"])
        assert "an invented id" in (release / "README.md").read_text(encoding="utf-8")
        assert main(["validate", str(release)]) == 0, capsys.readouterr().out
    assert not list((out / "sdoh").glob("*.phi-report.jsonl"))


def test_a_phi_allow_file_that_is_no_report_is_an_error_naming_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    allow = tmp_path / "allow.jsonl"
    allow.write_text('{"file": "inputs.jsonl", "field": "file", "category": "ssn", "hash": "175dbb7c6c96"}\n')
    status = main(["release", "sdoh", "--out", str(tmp_path / "out"), "--phi-allow", str(allow)])
    error = capsys.readouterr().err
    assert status != 0 and f"--phi-allow {allow} line 1" in error and "reason" in error
    assert not (tmp_path / "out").exists()


def test_allowed_fields_declared_by_the_corpus_are_counted_and_shown(tmp_path: Path) -> None:
    sdoh = find_corpus("sdoh")
    declared = [
        PhiAllowedField(config=config, field=field, reason="note ids are the hospital's file names")
        for config, field in (("sdoh", "id"), ("sdoh_bigbio_kb", "id"), ("sdoh_bigbio_kb", "document_id"))
    ]
    corpus = sdoh.model_copy(update={"gates": sdoh.gates.model_copy(update={"phi_allowed": declared})})
    inputs = PhiReviewed(file="inputs.jsonl", field="file", category="ssn", hash="175dbb7c6c96", reason="invented")
    request = ReleaseRequest(corpus, tmp_path, sources={"shac": _planted_shac(tmp_path)}, phi_reviewed=[inputs])
    outcome = run(request)
    assert outcome.manifest.phi is not None and outcome.manifest.phi.allowed_fields == declared
    observed = str(_gate(outcome.folder, "validation.json")["observed"])
    assert observed.startswith("0 findings in ") and "; 5 allowed;" in observed
    card = (outcome.folder / "README.md").read_text(encoding="utf-8")
    assert "`data/sdoh_bigbio_kb/` `document_id` | allowed field (corpus.yaml)" in card
