"""The expectation process checks written releases as the building process would, each outcome going to the
release it was sent for, raises here what was raised there, and turns its death into an error naming the
corpus; a run of several corpora checks them all in one such process (one great-expectations import), started
once the first corpus's records are written, while the next corpora build."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clinical_corpora.builders.contract.base import load_builder_class
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.checks import ExpectationProcess, check_suite
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import Expectation, load_manifest
from tests.conftest import GX_IMPORT_LOG, great_expectations_imports


def _tiny_release(tiny_corpus: Path, tmp_path: Path) -> tuple[Path, list[Expectation]]:
    from clinical_corpora.builders.release.pipeline import run

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


def test_each_release_sent_gets_its_own_outcomes_whatever_order_they_are_waited_for(
    tiny_corpus: Path, tmp_path: Path
) -> None:
    folder, suite = _tiny_release(tiny_corpus, tmp_path)
    manifest = load_manifest(tiny_corpus)
    failing = [suite[0].model_copy(update={"kwargs": {**suite[0].kwargs, "min_value": 100}}), suite[1]]
    checks = ExpectationProcess()
    try:
        passing_outcomes, failing_outcomes = (checks.check(manifest, folder, s) for s in (suite, failing))
        assert [o.success for o in failing_outcomes()] == [False, True]  # the second sent, waited for first
        assert [o.success for o in passing_outcomes()] == [True] * len(suite)
        assert checks.ready()
    finally:
        checks.close()


def test_a_dead_expectation_process_is_an_error_naming_the_corpus(tiny_corpus: Path, tmp_path: Path) -> None:
    folder, suite = _tiny_release(tiny_corpus, tmp_path)
    checks = ExpectationProcess()
    try:
        assert checks.check(load_manifest(tiny_corpus), folder, suite)()  # started by the first release sent
        assert checks._process is not None
        os.kill(checks._process.pid, signal.SIGKILL)
        outcomes = checks.check(load_manifest(tiny_corpus), folder, suite)
        with pytest.raises(ClincorpError, match="tiny: the process checking the expectations died"):
            outcomes()
        assert checks.ready()  # nothing more to wait for
    finally:
        checks.close()


DYING_BUILDER = """
import os

from tests.tiny_corpus.builder import TinyBuilder


class DyingBuilder(TinyBuilder):
    def quality_tables(self, release):
        os._exit(3)  # as a process killed while checking
"""


def test_releases_waiting_together_are_checked_in_two_processes_and_a_death_in_either_names_its_corpus(
    tiny_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, suite = _tiny_release(tiny_corpus, tmp_path)
    (tmp_path / "dying_builder.py").write_text(DYING_BUILDER)
    monkeypatch.syspath_prepend(str(tmp_path))
    manifest = load_manifest(tiny_corpus)
    dying = manifest.model_copy(update={"name": "dying", "builder": "dying_builder:DyingBuilder"})
    checks = ExpectationProcess()
    try:
        # sent together: they wait while great-expectations is imported; every second one goes to a forked copy
        sent = [checks.check(m, folder, suite) for m in (manifest, dying, manifest, manifest)]
        assert [o.success for o in sent[0]()] == [True] * len(suite)
        with pytest.raises(ClincorpError, match="dying: the process checking the expectations died"):
            sent[1]()  # the copy died: its other release is answered as dead too, the process itself lives
        with pytest.raises(ClincorpError, match="tiny: the process checking the expectations died"):
            sent[3]()
        assert [o.success for o in sent[2]()] == [True] * len(suite)
        assert [o.success for o in checks.check(manifest, folder, suite)()] == [True] * len(suite)
        with pytest.raises(ClincorpError, match="dying: the process checking the expectations died"):
            checks.check(dying, folder, suite)()  # alone, it is checked (and dies) in the process itself
        assert checks.ready()
    finally:
        checks.close()


SEVERAL_CORPORA = (
    GX_IMPORT_LOG
    + """
from clinical_corpora.builders.cli import main
from clinical_corpora.core.registry import corpora

out = Path(sys.argv[3])
log_great_expectations_imports(out, Path(sys.argv[4]))
corpora.register("tiny", Path(sys.argv[1]))
corpora.register("tiny2", Path(sys.argv[2]))
corpora.register("broken", Path(sys.argv[5]))
status = main(["release", "tiny", "broken", "tiny2", "--out", str(out), *sys.argv[6:]])
print(json.dumps([os.getpid(), status]))
"""
)


@pytest.mark.parametrize("workers", [[], ["--workers", "2"], ["--workers", "1"]])
def test_several_corpora_are_checked_in_one_process_started_once_records_are_written(
    tiny_corpus: Path, tmp_path: Path, workers: list[str]
) -> None:
    text = (tiny_corpus / "corpus.yaml").read_text()
    copies = {}
    for name, builder in (("tiny2", "tests.tiny_corpus.builder"), ("broken", "no_such_module_here")):
        copies[name] = tmp_path / name
        shutil.copytree(tiny_corpus, copies[name])
        (copies[name] / "corpus.yaml").write_text(
            text.replace("name: tiny", f"name: {name}").replace("tests.tiny_corpus.builder", builder)
        )
    out, log = tmp_path / "out", tmp_path / "imports.jsonl"
    arguments = [str(tiny_corpus), str(copies["tiny2"]), str(out), str(log), str(copies["broken"]), *workers]
    result = subprocess.run(
        [sys.executable, "-c", SEVERAL_CORPORA, *arguments], capture_output=True, text=True, check=True
    )
    building, status = json.loads(result.stdout.splitlines()[-1])
    assert status == 1 and "error: broken: cannot load builder 'no_such_module_here:TinyBuilder'" in result.stderr
    released = [line.split()[0] for line in result.stdout.splitlines() if ": released at " in line]
    assert released == ["tiny", "tiny2"]  # in the order named, the broken one between them FAILED
    assert [line.split()[:3] for line in result.stdout.splitlines() if "FAILED" in line] == [
        ["broken", "1.0.0", "FAILED"]
    ]
    for name in ("tiny", "tiny2"):
        validation = json.loads((out / name / "1.0.0+sample" / "validation.json").read_text())
        assert [g["status"] for g in validation["gates"]][:2] == ["pass", "pass"]
    imports = great_expectations_imports(log)
    assert len(imports) == 1 and min(imports.values()) >= 1  # imported once, after the first parquet was written
    assert (building in imports) == (workers == ["--workers", "1"])  # else never by the building process


PREPARED = (
    GX_IMPORT_LOG.split("def log_great_expectations_imports")[0]
    + """
import time
from clinical_corpora.builders.release.checks import ExpectationProcess
from clinical_corpora.core.manifest import load_manifest

log = Path(sys.argv[3])
watched = {"great_expectations": "great_expectations", "jinja2": "jinja2", "tiny_corpus": "the builder"}
seen = set()


def watch(event, args):
    # a module's code is read through an "open" event, however it is imported (import_module included)
    if event == "open" and isinstance(args[0], str):
        parts = Path(args[0]).parts
        for part, name in watched.items():
            if part in parts and (os.getpid(), name) not in seen:
                seen.add((os.getpid(), name))
                with log.open("a") as file:
                    file.write(json.dumps([os.getpid(), name]) + "\\n")


sys.addaudithook(watch)


def imported():
    return [tuple(json.loads(line)) for line in log.read_text().splitlines()] if log.exists() else []


manifest = load_manifest(Path(sys.argv[1]))
checks = ExpectationProcess()
checks.prepare([manifest.builder])
child = checks._process.pid
for _ in range(600):
    if (child, "the builder") in imported():
        break
    time.sleep(0.05)
time.sleep(0.5)  # it would be importing great-expectations by now if it did not wait for a release
before = imported()
outcomes = checks.check(manifest, Path(sys.argv[2]), manifest.gates.expectations)()
print(json.dumps([os.getpid(), child, before, imported(), [o.success for o in outcomes]]))
checks.close()
"""
)


def test_a_prepared_process_imports_the_builders_and_dependencies_and_great_expectations_only_once_sent_a_release(
    tiny_corpus: Path, tmp_path: Path
) -> None:
    folder, suite = _tiny_release(tiny_corpus, tmp_path)
    log = tmp_path / "imports.jsonl"
    result = subprocess.run(
        [sys.executable, "-c", PREPARED, str(tiny_corpus), str(folder), str(log)],
        capture_output=True,
        text=True,
        check=True,
    )
    sending, child, before, after, successes = json.loads(result.stdout.splitlines()[-1])
    assert sorted(map(tuple, before)) == [(child, "jinja2"), (child, "the builder")]
    assert [tuple(entry) for entry in after] == [*map(tuple, before), (child, "great_expectations")]
    assert successes == [True] * len(suite) and sending != child


KILLED_SENDER = """
import sys
from pathlib import Path
from clinical_corpora.builders.release.checks import ExpectationProcess
from clinical_corpora.core.manifest import load_manifest

manifest = load_manifest(Path(sys.argv[1]))
checks = ExpectationProcess()
checks.check(manifest, Path(sys.argv[2]), manifest.gates.expectations)()
print(checks._process.pid, flush=True)
sys.stdin.read()  # until killed
"""


def test_the_expectation_process_ends_when_the_process_sending_it_releases_is_killed(
    tiny_corpus: Path, tmp_path: Path
) -> None:
    folder, _ = _tiny_release(tiny_corpus, tmp_path)
    sender = subprocess.Popen(
        [sys.executable, "-c", KILLED_SENDER, str(tiny_corpus), str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert sender.stdout is not None
        checking = int(sender.stdout.readline())
    finally:
        sender.kill()  # SIGKILL: no cleanup runs in the sender
        sender.wait()
    for _ in range(100):  # it sees the end of its pipe and returns
        try:
            os.kill(checking, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(checking, signal.SIGKILL)
        pytest.fail("the expectation process outlived the process that sent it releases")
