"""The expectation process checks a written release as the building process would, raises here what was
raised there, and turns its death into an error naming the corpus; a run of several corpora checks them in
the building process."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest

from clinical_corpora.builders.base import load_builder_class
from clinical_corpora.builders.checks import ExpectationProcess, check_suite
from clinical_corpora.builders.release_view import ReleaseView
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import Expectation, load_manifest


def _tiny_release(tiny_corpus: Path, tmp_path: Path) -> tuple[Path, list[Expectation]]:
    from clinical_corpora.builders.pipeline import run

    outcome = run(load_manifest(tiny_corpus), tmp_path / "out", workers=1)
    return outcome.folder, load_manifest(tiny_corpus).gates.expectations


def test_outcomes_and_errors_are_those_of_the_building_process(tiny_corpus: Path, tmp_path: Path) -> None:
    folder, suite = _tiny_release(tiny_corpus, tmp_path)
    manifest = load_manifest(tiny_corpus)
    here = [o.as_dict() for o in check_suite(load_builder_class(manifest.builder)(), ReleaseView(folder), suite)]
    checks = ExpectationProcess()
    try:
        there = [o.as_dict() for o in checks.check(manifest, folder, suite)()]
    finally:
        checks.close()
    assert there == here and [o["success"] for o in here] == [True] * len(suite)
    checks = ExpectationProcess()
    try:
        unknown = checks.check(manifest.model_copy(update={"builder": "no_such_module:Builder"}), folder, suite)
        with pytest.raises(ClincorpError, match="no_such_module"):  # raised there, raised again here
            unknown()
    finally:
        checks.close()


def test_a_dead_expectation_process_is_an_error_naming_the_corpus(tiny_corpus: Path, tmp_path: Path) -> None:
    folder, suite = _tiny_release(tiny_corpus, tmp_path)
    checks = ExpectationProcess()
    try:
        os.kill(checks._process.pid, signal.SIGKILL)
        outcomes = checks.check(load_manifest(tiny_corpus), folder, suite)
        with pytest.raises(ClincorpError, match="tiny: the process checking the expectations died"):
            outcomes()
    finally:
        checks.close()


def test_a_release_of_several_corpora_checks_them_in_the_building_process(
    tiny_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from clinical_corpora.builders import checks
    from clinical_corpora.builders.cli import main
    from clinical_corpora.core.registry import corpora

    broken = tmp_path / "broken"
    shutil.copytree(tiny_corpus, broken)
    text = (tiny_corpus / "corpus.yaml").read_text()
    (broken / "corpus.yaml").write_text(
        text.replace("name: tiny", "name: broken").replace("tests.tiny_corpus.builder", "no_such_module_here")
    )
    started: list[ExpectationProcess] = []
    monkeypatch.setattr(checks.ExpectationProcess, "__init__", lambda self: started.append(self))
    corpora.register("tiny", tiny_corpus)
    corpora.register("broken", broken)
    try:
        status = main(["release", "tiny", "broken", "--out", str(tmp_path / "out"), "--workers", "2"])
    finally:
        corpora.unregister("tiny")
        corpora.unregister("broken")
    out, err = capsys.readouterr()
    assert status == 1 and started == []  # great-expectations imported once, here
    assert "tiny 1.0.0+sample: released" in out and "FAILED" in out
    assert "error: broken: cannot load builder 'no_such_module_here:TinyBuilder'" in err
