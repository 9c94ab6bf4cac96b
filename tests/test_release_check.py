"""``clincorp validate`` on damaged releases: every record-level problem is a failed gate naming the
record and field (never a traceback), and the verdict on hashes, schema and records comes before the
expectation suite's."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import tempfile
from collections.abc import Callable
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.core.manifest import load_manifest
from tests.conftest import TINY, SampleRelease

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release of the tiny corpus (read only: tests copy it before damaging it)."""
    corpus = tmp_path_factory.mktemp("tiny") / "tiny"
    shutil.copytree(TINY, corpus, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return run(ReleaseRequest(load_manifest(corpus), tmp_path_factory.mktemp("out"))).folder


def validate(folder: Path) -> tuple[int, str]:
    """``clincorp validate`` in process: exit status and everything it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["validate", str(folder), "--corpus", str(TINY)])
    return status, out.getvalue() + err.getvalue()


def rewrite(folder: Path, edit: Callable[[dict[str, list[dict[str, Any]]]], None]) -> None:
    """Apply ``edit`` to the rows of every shard of the notes config (stored values: label ids), write the
    shards back with their schema and recompute their hashes in manifest.json."""
    shards = ReleaseView(folder).shards("notes")
    tables = {shard.name: pq.read_table(shard) for shard in shards}
    rows = {name: table.to_pylist() for name, table in tables.items()}
    edit(rows)
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for shard in shards:
        pq.write_table(pa.Table.from_pylist(rows[shard.name], schema=tables[shard.name].schema), shard)
        for output in manifest["outputs"]:
            if output["file"] == shard.relative_to(folder).as_posix():
                output["sha256"] = hashlib.sha256(shard.read_bytes()).hexdigest()
    manifest_path.write_text(json.dumps(manifest, indent=2))


TRAIN = "train-00000-of-00001.parquet"
# the train notes: n1 has 4 spans, n2 has 2; the labels are problem, test, treatment (ids 0-2)
NOTE = st.sampled_from([(0, "n1", 4), (1, "n2", 2)])


@st.composite
def corruptions(draw: st.DrawFn) -> tuple[str, str, Callable[[dict[str, list[dict[str, Any]]]], None]]:
    """(record id, what the message must name, the edit): one damage no valid release can hold."""
    row, record, spans = draw(NOTE)
    span = draw(st.integers(0, spans - 1))
    kind = draw(st.sampled_from(["label", "null", "past_text", "reversed", "negative", "changed_text", "duplicate_id"]))

    def on_span(change: Callable[[dict[str, Any], str], None]) -> Callable[[dict[str, list[dict[str, Any]]]], None]:
        return lambda rows: change(rows[TRAIN][row]["spans"][span], rows[TRAIN][row]["text"])

    if kind == "label":
        label = draw(st.integers(-(2**40), -1) | st.integers(3, 2**40))
        return (
            record,
            f"field spans[{span}].label: label id {label} is not one of 0..2",
            on_span(lambda s, _: s.update(label=label)),
        )
    if kind == "null":
        field = draw(st.sampled_from(["text", "start", "end", "label"]))
        return record, f"field spans[{span}].{field}", on_span(lambda s, _: s.update({field: None}))
    if kind == "past_text":
        extra = draw(st.integers(1, 2**20))
        return record, "past the end of the text", on_span(lambda s, text: s.update(end=len(text) + extra))
    if kind == "reversed":
        gap = draw(st.integers(1, 50))
        return record, "ends before it starts", on_span(lambda s, _: s.update(start=s["end"] + gap))
    if kind == "negative":
        start = draw(st.integers(-(2**31), -1))
        return record, f"field spans[{span}].start", on_span(lambda s, _: s.update(start=start))
    if kind == "changed_text":
        offset, char = draw(st.integers(0, 2)), draw(st.characters(codec="utf-8"))

        def change_text(rows: dict[str, list[dict[str, Any]]]) -> None:
            note = rows[TRAIN][row]
            target = note["spans"][span]["start"] + offset
            replacement = char if char != note["text"][target] else chr(ord(char) + 1)
            note["text"] = note["text"][:target] + replacement + note["text"][target + 1 :]

        return record, "has text", change_text
    other = "n2" if record == "n1" else "n1"
    return other, f"duplicate id {other!r}", lambda rows: rows[TRAIN][row].update(id=other)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(corruption=corruptions())
def test_validate_turns_any_damaged_record_into_a_failed_gate(
    release: Path, corruption: tuple[str, str, Callable[[dict[str, list[dict[str, Any]]]], None]]
) -> None:
    record, named, edit = corruption
    with tempfile.TemporaryDirectory() as scratch:
        damaged = Path(shutil.copytree(release, Path(scratch) / "release"))
        rewrite(damaged, edit)
        status, printed = validate(damaged)
    assert status == 1, printed
    assert "Traceback" not in printed and "gate files passed" in printed
    assert "gate records FAILED" in printed
    [problem] = [line for line in printed.splitlines() if line.startswith("  notes/") or "duplicate id" in line]
    assert repr(record) in problem and named in problem


def test_a_valid_record_that_breaks_an_expectation_is_named_by_the_suite(release: Path, tmp_path: Path) -> None:
    damaged = Path(shutil.copytree(release, tmp_path / "release"))
    rewrite(damaged, lambda rows: rows["test-00000-of-00001.parquet"][0].update(text=""))  # n3 has no spans
    status, printed = validate(damaged)
    assert status == 1 and "Traceback" not in printed
    assert "gate records passed" in printed and "gate expectations FAILED: observed 2/3 passed" in printed
    assert "    test record 'n3': text=''" in printed


def test_validate_names_each_step_before_it_runs(release: Path) -> None:
    status, printed = validate(release)
    assert status == 0
    assert [line.split(":")[0] for line in printed.splitlines()] == [
        "step 1",
        "gate files passed",
        "step 2",
        "gate manifest passed",
        "step 3",
        "gate schema passed",
        "step 4",
        "gate records passed",
        "step 5",
        "gate expectations passed",
        "step 6",
        "gate published skipped",
        "gate descriptions passed",
        "step 7",
        "gate phi passed",
    ]


def test_an_unreadable_manifest_or_suite_is_an_error_not_a_traceback(release: Path, tmp_path: Path) -> None:
    damaged = Path(shutil.copytree(release, tmp_path / "release"))
    (damaged / "validation.json").write_text("{}")
    manifest = json.loads((damaged / "manifest.json").read_text())
    for output in manifest["outputs"]:
        if output["file"] == "validation.json":
            output["sha256"] = hashlib.sha256(b"{}").hexdigest()
    (damaged / "manifest.json").write_text(json.dumps(manifest))
    status, printed = validate(damaged)
    assert status == 1 and "Traceback" not in printed
    assert "gate files FAILED" in printed and "validation.json: not a release's validation record: corpus" in printed
    (damaged / "manifest.json").write_text("{not json")
    status, printed = validate(damaged)
    assert status == 1 and "Traceback" not in printed
    assert "manifest.json: not a release manifest: Invalid JSON" in printed


def test_validate_for_machines_json_and_exit_statuses(
    sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json prints one object (verdict, and per gate: name, status, observed, expected, where); the exit
    status is 0 valid, 1 invalid, 2 wrong arguments, 3 could not check."""
    release = sample_release("odie_anaphora").folder
    assert main(["validate", str(release), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "valid" and report["release"] == str(release)
    assert [gate["name"] for gate in report["gates"]][:2] == ["files", "manifest"]
    assert all(set(gate) == {"name", "status", "observed", "expected", "where"} for gate in report["gates"])
    damaged = Path(shutil.copytree(release, tmp_path / "odie_anaphora" / release.name))
    (damaged / "README.md").write_text("edited", encoding="utf-8")
    assert main(["validate", str(damaged), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "invalid" and report["gates"][0]["status"] == "fail"
    assert "README.md" in json.dumps(report["gates"][0]["where"])
    assert main(["validate", str(tmp_path / "nothing"), "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["verdict"] == "could not check"
    assert main(["validate", str(tmp_path / "nothing")]) == 3
    assert "nothing is not a release folder: no such folder" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["validate"])
    assert usage.value.code == 2


def test_clincorp_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"clincorp {package_version('clinical-corpora')}"
