"""A release killed outright (SIGKILL, as the out-of-memory killer does) leaves no process behind: its build
workers and input hashing each see their parent gone and exit."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SLOW_BUILDER = """
import time

from tests.tiny_corpus.builder import TinyBuilder


class SlowBuilder(TinyBuilder):
    def generate_shard(self, ctx, chunks=()):
        time.sleep(60)  # a long build: the release is killed meanwhile
        yield from super().generate_shard(ctx, chunks)
"""

RELEASE = (
    "import sys; from clinical_corpora.builders.commands.main import entry; sys.argv[0] = 'clincorp'; sys.exit(entry())"
)


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    waiting = [pid]
    while waiting:
        try:
            children = Path(f"/proc/{waiting.pop()}/task").glob("*/children")
            pids = {int(child) for path in children for child in path.read_text().split()}
        except OSError:
            continue
        waiting += pids - found
        found |= pids
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended: only its entry waits to be collected


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process tree from /proc (Linux)")
def test_a_killed_release_leaves_no_helper_process_behind(tiny_corpus: Path, tmp_path: Path) -> None:
    (tmp_path / "slow_builder.py").write_text(SLOW_BUILDER)
    corpus = tmp_path / "slow"
    shutil.copytree(tiny_corpus, corpus)
    manifest = corpus / "corpus.yaml"
    manifest.write_text(
        manifest.read_text().replace("tests.tiny_corpus.builder:TinyBuilder", "slow_builder:SlowBuilder")
    )
    root = Path(__file__).resolve().parents[1]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(root)])}
    release = subprocess.Popen(
        [sys.executable, "-c", RELEASE, "release", str(corpus), "--workers", "2", "--out", str(tmp_path / "out")],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    helpers: set[int] = set()
    try:
        for _ in range(600):  # both workers and input hashing started
            helpers = _descendants(release.pid)
            if len(helpers) >= 3:
                break
            time.sleep(0.05)
        assert len(helpers) >= 3, helpers
    finally:
        release.kill()
        release.wait()
    for _ in range(100):
        if not any(_alive(pid) for pid in helpers):
            break
        time.sleep(0.1)
    left = [pid for pid in helpers if _alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "helper processes outlived the killed release"


ORPHAN = """
import os, time
from clinical_corpora.core.processes import end_with_parent
parent = os.getpid()
child = os.fork()
if child == 0:
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)  # let go of the test's pipe
    os.dup2(quiet, 2)
    time.sleep(0.5)  # the parent is killed between the fork and the helper's first call
    end_with_parent(parent)
    time.sleep(30)
    os._exit(0)
print(child, flush=True)
os._exit(0)
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process tree from /proc (Linux)")
def test_a_helper_whose_parent_died_before_it_started_watching_exits() -> None:
    """The race a loaded machine showed: a helper that reads its parent's pid itself, after the parent is
    gone, reads its adopter's and watches it forever; given the pid from before the fork, it exits."""
    root = Path(__file__).resolve().parents[1]
    environment = {**os.environ, "PYTHONPATH": str(root)}
    started = subprocess.run(
        [sys.executable, "-c", ORPHAN], env=environment, capture_output=True, text=True, check=True
    )
    helper = int(started.stdout)
    for _ in range(100):
        if not _alive(helper):
            break
        time.sleep(0.1)
    alive = _alive(helper)
    if alive:
        os.kill(helper, signal.SIGKILL)
    assert not alive, "the orphaned helper kept running"
