"""The expectation process checks a written release as the building process would, skips the outcomes of a
run that never read them, and turns its death into an error naming the corpus."""

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


def test_outcomes_are_those_of_the_building_process_and_a_failed_run_s_are_skipped(
    tiny_corpus: Path, tmp_path: Path
) -> None:
    folder, suite = _tiny_release(tiny_corpus, tmp_path)
    manifest = load_manifest(tiny_corpus)
    here = [o.as_dict() for o in check_suite(load_builder_class(manifest.builder)(), ReleaseView(folder), suite)]
    failing = [*suite, Expectation(table="tiny", expectation="expect_column_values_to_not_be_null", column="nope")]
    with ExpectationProcess() as checks:
        checks.check(manifest, folder, failing)  # a run that failed before reading its outcomes
        there = [o.as_dict() for o in checks.check(manifest, folder, suite)()]
        unknown = checks.check(manifest.model_copy(update={"builder": "no_such_module:Builder"}), folder, suite)
        with pytest.raises(ClincorpError, match="no_such_module"):  # raised there, raised again here
            unknown()
        again = [o.as_dict() for o in checks.check(manifest, folder, suite)()]
    assert there == here == again
    assert [o["success"] for o in here] == [True] * len(suite)


def test_a_dead_expectation_process_is_an_error_naming_the_corpus(tiny_corpus: Path, tmp_path: Path) -> None:
    folder, suite = _tiny_release(tiny_corpus, tmp_path)
    with ExpectationProcess() as checks:
        os.kill(checks._process.pid, signal.SIGKILL)
        outcomes = checks.check(load_manifest(tiny_corpus), folder, suite)
        with pytest.raises(ClincorpError, match="tiny: the process checking the expectations died"):
            outcomes()


def test_release_of_several_corpora_shares_one_expectation_process_and_reports_a_builder_that_fails(
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
    monkeypatch.setattr(checks.ExpectationProcess, "__enter__", lambda self: started.append(self) or self)
    corpora.register("tiny", tiny_corpus)
    corpora.register("broken", broken)
    try:
        status = main(["release", "tiny", "broken", "--out", str(tmp_path / "out"), "--workers", "2"])
    finally:
        corpora.unregister("tiny")
        corpora.unregister("broken")
    out, err = capsys.readouterr()
    assert status == 1 and len(started) == 1
    assert "tiny 1.0.0+sample: released" in out and "FAILED" in out
    assert "error: broken: cannot load builder 'no_such_module_here:TinyBuilder'" in err
