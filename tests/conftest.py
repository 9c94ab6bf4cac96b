"""Shared fixtures: a writable copy of the tiny pipeline-test corpus, and each registered corpus's sample
released once per session."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import datasets
import pytest
from filelock import FileLock
from hypothesis import settings

from clinical_corpora.builders.plugins import all_corpora, find_corpus
from clinical_corpora.builders.rehydrate.request import RehydrateRequest
from clinical_corpora.builders.rehydrate.run import rehydrate
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.release.pipeline import Outcome, run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.text_free.release import release_text_free
from clinical_corpora.core.processes import tune_collector
from clinical_corpora.core.registry import corpora

tune_collector()  # the test session's entry, as clincorp's: the collector tuned as every clincorp process has it
settings.register_profile("clincorp", deadline=None)  # speed is measured in benchmarks/, not by timed tests
settings.load_profile("clincorp")

TINY = Path(__file__).parent / "tiny_corpus"

NewCorpus = Callable[[str, str], Path]
"""``new_corpus_plugin(name, format)``: the project folder of a plugin ``clincorp new-corpus`` wrote."""


@pytest.fixture
def new_corpus_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[NewCorpus]:
    """Writes a ``clincorp new-corpus NAME --format FORMAT`` skeleton into ``tmp_path/<name>``, on sys.path and
    named by a dist-info's entry point (as ``pip install -e`` would make it); unregistered afterwards."""
    from clinical_corpora.builders.commands.main import main

    made: list[str] = []

    def make(name: str, form: str) -> Path:
        project = tmp_path / name
        assert main(["new-corpus", name, "--format", form, "--out", str(project)]) == 0
        dist_info = tmp_path / "site" / f"{name}-0.1.0.dist-info"
        dist_info.mkdir(parents=True)
        (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
        declared = tomllib.loads(project.joinpath("pyproject.toml").read_text())["project"]["entry-points"]
        points = [
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in named.items()) for group, named in declared.items()
        ]
        (dist_info / "entry_points.txt").write_text("".join(points))
        monkeypatch.syspath_prepend(str(tmp_path / "site"))
        monkeypatch.syspath_prepend(str(project))
        made.append(name)
        return project

    yield make
    for name in made:
        corpora.unregister(name)
        for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
            sys.modules.pop(module)


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> Path:
    """A copy of tests/tiny_corpus that a test may edit."""
    folder = tmp_path / "tiny"
    shutil.copytree(TINY, folder, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return folder


SampleRelease = Callable[[str], Outcome]
T = TypeVar("T")


@pytest.fixture(scope="session", autouse=True)
def clincorp_cache(shared_folder: Path) -> Iterator[Path]:
    """The test run's ``$CLINCORP_CACHE`` (the UMLS matcher index, written atomically), so tests never touch
    ~/.cache; one for every xdist worker, as the sample releases that fill it are made by whichever asks first."""
    folder = shared_folder / "clincorp-cache"
    folder.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLINCORP_CACHE", str(folder))
        yield folder


@pytest.fixture(autouse=True)
def datasets_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``datasets`` cache of the test's own: ``load_dataset`` of a local folder keys its cache by the folder's
    name and the card's front matter, not by the parquet bytes, so two tests loading different releases of one
    name and card (a release and its re-anchored rehydration) would otherwise read each other's rows."""
    folder = tmp_path_factory.mktemp("datasets-cache")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(folder))
    return folder


@pytest.fixture(scope="session")
def shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder every worker of this test run shares (pytest-xdist's workers have a base folder each, in one
    parent): what one worker makes there once, under :func:`made_once`, the others read."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def made_once(shared: Path, name: str, make: Callable[[Path], T]) -> T:
    """``make(folder)`` run by the first worker to ask for ``name``, its value pickled in ``shared``; any other
    worker waits for it and reads the pickle (the folders it names are shared too)."""
    folder = shared / name
    with FileLock(shared / f"{name}.lock"):
        made = folder / "made.pickle"
        if not made.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            made.write_bytes(pickle.dumps(make(folder)))
        value: T = pickle.loads(made.read_bytes())
    return value


@pytest.fixture(scope="session")
def sample_release(shared_folder: Path) -> SampleRelease:
    """``sample_release(name)``: the release of a registered corpus's embedded sample, made once per test run
    and shared by every test and worker; read it, or copy it before changing anything."""
    outcomes: dict[str, Outcome] = {}

    def release(name: str) -> Outcome:
        if name not in outcomes:
            make = lambda folder: run(ReleaseRequest(find_corpus(name), folder))  # noqa: E731
            outcomes[name] = made_once(shared_folder, f"release-{name}", make)
        return outcomes[name]

    return release


SampleVariant = Callable[[str, str], Path]


@pytest.fixture(scope="session")
def sample_variant(sample_release: SampleRelease, shared_folder: Path) -> SampleVariant:
    """``sample_variant(corpus, variant)``: a registered corpus's sample release (``"full"``, a copy in a folder
    of its own), its text-free variant beside it (``"text-free"``) or the release rehydrated from that
    (``"rehydrated"``), each made once per test run and shared: read them, or copy them before changing
    anything."""
    made: dict[tuple[str, str], Path] = {}

    def make(name: str, kind: str, folder: Path) -> Path:
        corpus = find_corpus(name)
        if kind == "full":
            full = sample_release(name).folder
            return Path(shutil.copytree(full, folder / name / full.name))
        if kind == "text-free":
            return release_text_free(corpus, variant(name, "full"), resolve_sources(corpus, {})).folder
        return rehydrate(RehydrateRequest(variant(name, "text-free"), folder)).folder

    def variant(name: str, kind: str) -> Path:
        if (name, kind) not in made:
            made[name, kind] = made_once(shared_folder, f"{kind}-{name}", lambda folder: make(name, kind, folder))
        return made[name, kind]

    return variant


def copy_beside(full: Path, text_free: Path, into: Path) -> tuple[Path, Path]:
    """Copies of a full release and its text-free variant, side by side under ``into/<corpus>/`` as
    ``clincorp release --text-free`` writes them."""
    corpus = into / full.parent.name
    return Path(shutil.copytree(full, corpus / full.name)), Path(shutil.copytree(text_free, corpus / text_free.name))


@pytest.fixture(scope="module", params=[manifest.name for manifest in all_corpora()])
def releases(request: pytest.FixtureRequest, sample_variant: SampleVariant) -> tuple[Path, Path]:
    """Each registered corpus in turn: its sample release and that release's text-free variant (shared)."""
    return sample_variant(request.param, "full"), sample_variant(request.param, "text-free")


def release_reviewing_phi(argv: list[str], out: Path) -> int:
    """``clincorp release`` (``argv`` without ``--out``) into ``out`` of invented i2b2 notes whose surrogate names
    the PHI gate cannot tell from real ones: run again with ``--phi-allow`` listing each finding the gate refused
    (the full release's, then the text-free variant's), as a maintainer does after reviewing them."""
    from clinical_corpora.builders.commands.main import main

    allow = out.parent / f"{out.name}.phi-allow.jsonl"
    allow.write_text("", encoding="utf-8")
    status = 1
    for _ in range(3):
        status = main([*argv, "--out", str(out), "--phi-allow", str(allow)])
        reports = sorted(out.glob("*/*.phi-report.jsonl"))
        if status == 0 or not reports:
            return status
        lines = [line for report in reports for line in report.read_text(encoding="utf-8").splitlines()]
        reviewed = [json.dumps({**json.loads(line), "reason": "an invented surrogate name"}) for line in lines]
        allow.write_text(allow.read_text(encoding="utf-8") + "".join(f"{line}\n" for line in reviewed), "utf-8")
    return status
