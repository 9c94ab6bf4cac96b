"""Shared fixtures: a writable copy of the tiny pipeline-test corpus, and each registered corpus's sample
released once per session."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import datasets
import pytest
from hypothesis import settings

from clinical_corpora.builders.plugins import all_corpora, find_corpus
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.release.pipeline import Outcome, run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.text_free.release import release_text_free
from clinical_corpora.core.processes import tune_collector

tune_collector()  # the test session's entry, as clincorp's: the collector tuned as every clincorp process has it
settings.register_profile("clincorp", deadline=None)  # speed is measured in benchmarks/, not by timed tests
settings.load_profile("clincorp")

TINY = Path(__file__).parent / "tiny_corpus"


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> Path:
    """A copy of tests/tiny_corpus that a test may edit."""
    folder = tmp_path / "tiny"
    shutil.copytree(TINY, folder, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return folder


SampleRelease = Callable[[str], Outcome]


@pytest.fixture(scope="session", autouse=True)
def clincorp_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The session's ``$CLINCORP_CACHE`` (the UMLS matcher index), so tests never touch ~/.cache."""
    folder = tmp_path_factory.mktemp("clincorp-cache")
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
def sample_release(tmp_path_factory: pytest.TempPathFactory) -> SampleRelease:
    """``sample_release(name)``: the release of a registered corpus's embedded sample, made once per
    session and shared by every test; read it, or copy it before changing anything."""
    outcomes: dict[str, Outcome] = {}

    def release(name: str) -> Outcome:
        if name not in outcomes:
            outcomes[name] = run(ReleaseRequest(find_corpus(name), tmp_path_factory.mktemp(f"release-{name}")))
        return outcomes[name]

    return release


@pytest.fixture(scope="module", params=[manifest.name for manifest in all_corpora()])
def releases(request: pytest.FixtureRequest, sample_release: SampleRelease) -> tuple[Path, Path]:
    """Each registered corpus in turn: its sample release and that release's text-free variant."""
    full = sample_release(request.param).folder
    corpus = find_corpus(request.param)
    return full, release_text_free(corpus, full, resolve_sources(corpus, {})).folder
