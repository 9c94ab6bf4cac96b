"""A release as the Hub and its downloaders see it: the cards' search fields, prose that renders as written,
a release holding only a test split, and validate on a folder of any name."""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from importlib.resources import files
from pathlib import Path

import pytest
from datasets import load_dataset
from huggingface_hub import DatasetCard
from markdown_it import MarkdownIt

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.card.hub_metadata import size_category
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.text_free.release import release_text_free
from clinical_corpora.builders.validate.run import check_release
from tests.conftest import SampleRelease


class _Visible(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def visible_text(markdown: str) -> str:
    """What a reader sees of a card: its Markdown rendered (CommonMark and tables), tags dropped."""
    parser = _Visible()
    parser.feed(MarkdownIt("commonmark").enable("table").render(markdown))
    return " ".join(" ".join(parser.parts).split())


@pytest.mark.parametrize("variant", [0, 1], ids=["full", "text-free"])
def test_card_prose_renders_as_written(releases: tuple[Path, Path], variant: int) -> None:
    card = (releases[variant] / "README.md").read_text(encoding="utf-8")
    seen = visible_text(card.split("\n---\n", 1)[1])
    corpus = find_corpus(json.loads((releases[0] / "manifest.json").read_text())["corpus"])
    prose = [corpus.description, corpus.access.how]
    if variant == 0:
        prose += [spec.description for spec in corpus.configs.values()]
    else:
        documents = json.loads((releases[1] / "manifest.json").read_text())["documents"]
        prose += [corpus.sources[name].description for name in documents]  # the sources that restore it
    for text in prose:
        assert " ".join(text.split()) in seen


def test_the_sdoh_placeholders_are_shown(sample_release: SampleRelease) -> None:
    card = (sample_release("sdoh").folder / "README.md").read_text(encoding="utf-8")
    assert "id (<split>/<source>/<doc>)" in visible_text(card)


@pytest.mark.parametrize("variant", [0, 1], ids=["full", "text-free"])
def test_front_matter_has_the_hubs_search_fields_with_known_values(releases: tuple[Path, Path], variant: int) -> None:
    data = DatasetCard.load(releases[variant] / "README.md").data
    resources = files("datasets.utils.resources")
    buckets = json.loads(resources.joinpath("size_categories.json").read_text())
    creators = json.loads(resources.joinpath("creators.json").read_text())["annotations"]
    languages = json.loads(resources.joinpath("languages.json").read_text())
    manifest = json.loads((releases[0] / "manifest.json").read_text())
    corpus = find_corpus(manifest["corpus"])
    main_rows = sum(
        entry["rows"] for entry in manifest["outputs"] if entry["file"].startswith(f"data/{corpus.default_config}/")
    )
    assert data.language == ["en"] and set(data.language) <= set(languages)
    assert data.size_categories == [size_category(main_rows)] and data.size_categories[0] in buckets
    assert data.annotations_creators and set(data.annotations_creators) <= set(creators)
    assert data.task_ids and data.task_categories and data.source_datasets == ["original"]
    assert data.license == corpus.license and data.pretty_name


@pytest.mark.parametrize(("rows", "bucket"), [(0, "n<1K"), (999, "n<1K"), (1_000, "1K<n<10K"), (332_000, "100K<n<1M")])
def test_size_category_buckets(rows: int, bucket: str) -> None:
    assert size_category(rows) == bucket


def test_a_release_of_only_the_test_split_loads_and_validates(tmp_path: Path) -> None:
    """Invented SHAC input holding only test/: the empty train and dev splits are not declared to datasets."""
    corpus = find_corpus("sdoh")
    shac = tmp_path / "shac"
    shutil.copytree(corpus.folder / "sample" / "shac" / "test", shac / "test")
    full = run(ReleaseRequest(corpus, tmp_path / "out", sources={"shac": shac})).folder
    text_free = release_text_free(corpus, full, resolve_sources(corpus, {"shac": shac})).folder
    for folder in (full, text_free):
        loaded = load_dataset(str(folder), "sdoh", cache_dir=str(tmp_path / "cache"))
        assert list(loaded) == ["test"] and loaded["test"].num_rows > 0
        assert all(gate.success for gate in check_release(folder)), folder


@pytest.mark.parametrize("variant", [0, 1], ids=["full", "text-free"])
def test_validate_passes_every_sample_release_in_a_folder_of_any_name(
    releases: tuple[Path, Path], variant: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As after ``hf download ... --local-dir any-name``: every gate passes."""
    copy = tmp_path / "downloaded" / "any-name"
    shutil.copytree(releases[variant], copy)
    status = main(["validate", str(copy)])
    out = capsys.readouterr().out
    assert status == 0 and "FAILED" not in out and "passed" in out, out


def test_load_dataset_names_a_release_after_its_corpus_and_version(
    sample_release: SampleRelease, tmp_path: Path
) -> None:
    """datasets names a local dataset after its folder: two corpora of one version get distinct names."""
    names = set()
    for corpus in ("sdoh", "snomed_el"):
        folder = sample_release(corpus).folder
        version = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["version"]
        loaded = load_dataset(str(folder), corpus, split="train", cache_dir=str(tmp_path / "cache"))
        assert loaded.info.dataset_name == f"{corpus}-{version}"
        names.add(loaded.info.dataset_name)
        assert any(part == f"{corpus}-{version}" for part in Path(loaded.cache_files[0]["filename"]).parts)
    assert len(names) == 2
