"""Releases built on Ray (``--engine ray``): byte for byte the releases one process makes, whatever order the
tasks end in and when a task's process is killed; a task failing for good fails the release naming its group.

The tests share one local Ray (two CPUs), started once for this module; they run in one xdist worker.
"""

from __future__ import annotations

import gc
import os
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.base import BuildContext, make_builder
from clinical_corpora.builders.plugins import all_corpora, find_corpus
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.ray_engine import connected
from clinical_corpora.builders.release.request import RayEngine, ReleaseRequest
from clinical_corpora.builders.release.workers import SentGroup, WorkerState, build_group
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.core.manifest import load_manifest
from tests.conftest import SampleRelease, SampleVariant
from tests.test_workers import break_note, tree

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.xdist_group("ray")


@pytest.fixture(scope="module", autouse=True)
def ray_session() -> Iterator[None]:
    """One local Ray for every test of this module, stopped after them (later tests fork without its threads)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    gc.collect()  # Ray's object references kept by the tests' tracebacks go while Ray runs, not at the session's end
    ray.shutdown()


def _key(group: dict[str, Any]) -> str:
    """A group's first document, as text: the same in every process."""
    return repr(next(value for value in group.values() if isinstance(value, list))[0])


class Delayed:
    """Each group's job after a sleep of a few milliseconds drawn from ``seed`` and the group; the groups'
    keys appended to ``finished`` in the order their jobs end."""

    def __init__(self, seed: int, finished: Path) -> None:
        self.seed, self.finished = seed, finished

    def __call__(self, state: WorkerState, group: dict[str, Any]) -> SentGroup:
        time.sleep(random.Random(f"{self.seed}:{_key(group)}").uniform(0, 0.04))
        sent = build_group(state, group)
        with self.finished.open("a", encoding="utf-8") as finished:
            finished.write(_key(group) + "\n")
        return sent


class DiesOnce:
    """The job, except that the process running the group ``victim`` exits at once the first time (a killed
    worker); ``marker`` records that it did."""

    def __init__(self, victim: str, marker: Path) -> None:
        self.victim, self.marker = victim, marker

    def __call__(self, state: WorkerState, group: dict[str, Any]) -> SentGroup:
        if _key(group) == self.victim and not self.marker.exists():
            self.marker.touch()
            os._exit(1)
        return build_group(state, group)


class Fails:
    """The job, except that group ``victim`` always fails: its process exits, or it raises."""

    def __init__(self, victim: str, dies: bool) -> None:
        self.victim, self.dies = victim, dies

    def __call__(self, state: WorkerState, group: dict[str, Any]) -> SentGroup:
        if _key(group) == self.victim:
            if self.dies:
                os._exit(1)
            raise RuntimeError("the disk went away\nsecond line")
        return build_group(state, group)


def _sdoh_on_ray(out: Path, engine: RayEngine) -> Path:
    """The SDOH sample released on Ray, a group per note (twelve groups, eight running ahead)."""
    return run(ReleaseRequest(find_corpus("sdoh"), out, workers=4, engine=engine)).folder


def _sdoh_groups() -> list[str]:
    """The keys of the SDOH sample's groups in order (a note per group)."""
    corpus = find_corpus("sdoh")
    builder = make_builder(corpus, {})
    return [
        repr(note) for note in builder.shards(BuildContext(corpus, resolve_sources(corpus, {}), "fail"))["documents"]
    ]


@pytest.mark.parametrize("corpus", [manifest.name for manifest in all_corpora()])
def test_a_release_on_ray_is_the_release_of_one_process(
    corpus: str, sample_variant: SampleVariant, tmp_path: Path
) -> None:
    assert main(["release", corpus, "--engine", "ray", "--text-free", "--out", str(tmp_path)]) == 0
    full, text_free = sample_variant(corpus, "full"), sample_variant(corpus, "text-free")
    assert tree(tmp_path / corpus / full.name) == tree(full)
    assert tree(tmp_path / corpus / text_free.name) == tree(text_free)


def test_tasks_ending_in_any_order_give_the_same_bytes(sample_release: SampleRelease, tmp_path: Path) -> None:
    reference, ended = tree(sample_release("sdoh").folder), []
    for seed in range(3):
        finished = tmp_path / f"finished-{seed}.txt"
        folder = _sdoh_on_ray(tmp_path / str(seed), RayEngine(job=Delayed(seed, finished)))
        assert tree(folder) == reference
        ended.append(finished.read_text(encoding="utf-8").splitlines())
    groups = _sdoh_groups()
    assert all(sorted(order) == sorted(groups) for order in ended)
    assert any(order != groups for order in ended)  # the tasks did end out of order


def test_a_task_killed_once_is_run_again(sample_release: SampleRelease, tmp_path: Path) -> None:
    marker = tmp_path / "killed"
    folder = _sdoh_on_ray(tmp_path / "out", RayEngine(job=DiesOnce(_sdoh_groups()[2], marker)))
    assert marker.exists()
    assert tree(folder) == tree(sample_release("sdoh").folder)


@pytest.mark.parametrize("dies", [True, False], ids=["its process dies", "it raises"])
def test_a_task_failing_for_good_fails_the_release_naming_its_group(tmp_path: Path, dies: bool) -> None:
    engine = RayEngine(max_retries=1, job=Fails(_sdoh_groups()[2], dies))
    named = r"sdoh: shard group 3 of 12 \(documents 3-3 of 12, first '.+'\) failed on Ray"
    why = " for good: " if dies else r": RuntimeError: the disk went away$"
    with pytest.raises(ClincorpError, match=named + why) as raised:
        _sdoh_on_ray(tmp_path / "out", engine)
    assert "Traceback" not in str(raised.value) and "second line" not in str(raised.value)
    assert not (tmp_path / "out" / "sdoh").exists()


def test_a_bad_record_on_ray_is_the_error_of_one_process(tiny_corpus: Path, tmp_path: Path) -> None:
    break_note(tiny_corpus)
    with pytest.raises(SourceError, match=r"notes\.tsv:6: record does not match its schema"):
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out", workers=2, engine=RayEngine()))
    assert not (tmp_path / "out" / "tiny").exists()


def test_a_cluster_that_does_not_answer_is_named_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # as in a clincorp process: not connected yet
    with pytest.raises(ClincorpError, match=r"no Ray cluster answers at 127\.0\.0\.1:1 \(Connection refused\)"):
        connected(RayEngine(address="127.0.0.1:1"))


def test_without_ray_the_engine_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    assert main(["release", "sdoh", "--engine", "ray", "--out", str(tmp_path)]) == 1
    assert "pip install clinical-corpora[ray]" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_a_ray_address_needs_the_ray_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", "sdoh", "--ray-address", "auto", "--out", str(tmp_path)]) == 1
    assert "--ray-address applies to --engine ray" in capsys.readouterr().err
