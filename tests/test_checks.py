"""A written release's expectation suite: its outcomes on the parquet as written; a run of several corpora
releases them one after another, in the order named, a broken one between them failing alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.base import load_builder_class
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.checks import check_suite
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.core.manifest import load_manifest


def test_the_suite_is_checked_on_the_written_release(tiny_corpus: Path, tmp_path: Path) -> None:
    manifest = load_manifest(tiny_corpus)
    folder, suite = run(ReleaseRequest(manifest, tmp_path / "out", workers=1)).folder, manifest.gates.expectations
    builder, view = load_builder_class(manifest.builder)(), ReleaseView(folder)
    assert [o.success for o in check_suite(builder, view, suite)] == [True] * len(suite)
    failing = [suite[0].model_copy(update={"kwargs": {**suite[0].kwargs, "min_value": 100}}), suite[1]]
    assert [o.success for o in check_suite(builder, view, failing)] == [False, True]


def test_several_corpora_are_released_one_after_another_in_the_order_named(
    tiny_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (tiny_corpus / "corpus.yaml").read_text()
    copies = {}
    for name, builder in (("tiny2", "tests.tiny_corpus.builder"), ("broken", "no_such_module_here")):
        copies[name] = tmp_path / name
        shutil.copytree(tiny_corpus, copies[name])
        (copies[name] / "corpus.yaml").write_text(
            text.replace("name: tiny", f"name: {name}").replace("tests.tiny_corpus.builder", builder)
        )
    out = tmp_path / "out"
    status = main(["release", str(tiny_corpus), str(copies["broken"]), str(copies["tiny2"]), "--out", str(out)])
    printed = capsys.readouterr()
    assert status == 1 and "error: broken: cannot load builder 'no_such_module_here:TinyBuilder'" in printed.err
    released = [line.split()[0] for line in printed.out.splitlines() if ": released at " in line]
    assert released == ["tiny", "tiny2"]
    assert [line.split()[:3] for line in printed.out.splitlines() if "FAILED" in line] == [
        ["broken", "1.0.0", "FAILED"]
    ]
    for name in ("tiny", "tiny2"):
        validation = json.loads((out / name / f"{name}-1.0.0+sample" / "validation.json").read_text())
        assert [g["status"] for g in validation["gates"]][:2] == ["pass", "pass"]
