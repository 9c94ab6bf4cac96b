"""Cards for credentialed data: licence, Hub gating, the do-not-redistribute section, the data citations,
a default config and split sizes, on every registered corpus's sample release; and which variant may be
shared, in the card and in ``clincorp list``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import datasets
import pytest
import yaml

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.plugins import all_corpora, find_corpus
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.manifest import CorpusManifest, load_manifest
from tests.conftest import SampleRelease
from tests.test_pipeline import edit_yaml

CORPORA = [manifest.name for manifest in all_corpora()]
DO_NOT_REDISTRIBUTE = "## Personal and sensitive information — do not redistribute"


def card_parts(release: Path) -> tuple[dict[str, Any], str]:
    """The card's YAML front matter and its Markdown body."""
    _, front, body = (release / "README.md").read_text(encoding="utf-8").split("---\n", 2)
    return yaml.safe_load(front), body


def section(body: str, title: str) -> str:
    return body.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


@pytest.fixture(params=CORPORA)
def corpus(request: pytest.FixtureRequest) -> CorpusManifest:
    return find_corpus(request.param)


def test_a_credentialed_corpus_card_carries_its_licence_gating_and_warning(
    corpus: CorpusManifest, sample_release: SampleRelease
) -> None:
    front, body = card_parts(sample_release(corpus.name).folder)
    assert not corpus.access.public and corpus.sharing is not None and corpus.gating is not None
    assert (front["license"], front["license_name"], front["license_link"]) == (
        "other",
        corpus.license_name,
        corpus.license_link,
    )
    assert front["license_link"].startswith("https://")
    assert front["extra_gated_prompt"] == corpus.gating.prompt.strip()
    fields = front["extra_gated_fields"]
    confirmations = [label for label, kind in fields.items() if kind == "checkbox"]
    assert len(confirmations) >= 2 and any(word in " ".join(confirmations) for word in ("agreement", "License"))
    assert "Request access only if" in front["extra_gated_prompt"]
    sharing = section(body, "Licence and sharing")
    assert "**This full release may not be redistributed**" in sharing
    assert f"`clincorp release {corpus.name} --text-free`" in sharing
    assert DO_NOT_REDISTRIBUTE in body
    assert corpus.sharing.personal_information.split()[0] in section(body, DO_NOT_REDISTRIBUTE.removeprefix("## "))


def test_the_card_cites_the_data_its_licences_require(corpus: CorpusManifest, sample_release: SampleRelease) -> None:
    _, body = card_parts(sample_release(corpus.name).folder)
    citation = section(body, "Citation")
    assert corpus.data_citations
    for entry in corpus.data_citations:
        key = entry.split("{", 1)[1].split(",", 1)[0]
        assert f"{{{key}," in citation
    mimic = {"rad_coref": "10.13026/C2XW26", "sdoh": "10.13026/C2XW26", "snomed_el": "10.13026/1n74-ne17"}
    if corpus.name in mimic:  # MIMIC-derived: the PhysioNet dataset DOI and PhysioNet itself
        assert mimic[corpus.name] in citation and "10.1161/01.CIR.101.23.e215" in citation


def test_the_release_loads_without_a_config_name_and_records_its_split_sizes(
    corpus: CorpusManifest, sample_release: SampleRelease, tmp_path: Path
) -> None:
    release = sample_release(corpus.name).folder
    front, _ = card_parts(release)
    assert [c["config_name"] for c in front["configs"] if c.get("default")] == [corpus.default_config]
    # before: "Please pick one among the available configs" for clicr, rad_coref and snomed_el
    loaded = datasets.load_dataset(str(release), cache_dir=str(tmp_path / "hf"))
    assert {split.info.config_name for split in loaded.values()} == {corpus.default_config}
    builder = datasets.load_dataset_builder(str(release), cache_dir=str(tmp_path / "sizes"))
    carded = {name: split.num_bytes for name, split in builder.info.splits.items()}
    assert all(size > 0 for size in carded.values())
    builder.download_and_prepare()
    assert {name: split.num_bytes for name, split in builder.info.splits.items()} == carded


def test_list_says_which_variant_of_each_corpus_may_be_shared(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    for manifest in all_corpora():
        shared = (
            f"  licence {manifest.license_name} <{manifest.license_link}>: the full release may NOT be "
            f"redistributed; share its text-free variant (clincorp release {manifest.name} --text-free)"
        )
        assert shared in ("\n" + listing).split(f"\n{manifest.name} ", 1)[1].split("\n  source", 1)[0]


def test_a_public_corpus_may_share_its_full_release(tiny_corpus: Path) -> None:
    from clinical_corpora.builders.release.pipeline import run
    from clinical_corpora.builders.release.request import ReleaseRequest

    manifest = load_manifest(tiny_corpus)
    assert manifest.full_release_shareable and manifest.sharing is None
    front, body = card_parts(run(ReleaseRequest(manifest, tiny_corpus.parent / "out")).folder)
    assert front["license"] == "cc0-1.0" and "extra_gated_prompt" not in front
    assert "This release may be shared under that licence" in section(body, "Licence and sharing")
    assert DO_NOT_REDISTRIBUTE not in body


def two_default_configs(manifest: dict[str, Any]) -> None:
    for spec in manifest["configs"].values():
        spec["default"] = True
    manifest["configs"]["extra"] = {"description": "a second config", "splits": ["train"], "default": True}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.update(license="other"), "license: other needs license_name and license_link"),
        (lambda m: m["access"].update(public=False), "a restricted corpus (access.public: false) needs a sharing"),
        (two_default_configs, "only one config may be the default"),
        (
            lambda m: m.update(gating={"prompt": "confirm", "fields": {"I agree": "checkbox", "Where": "somewhere"}}),
            "gating.fields.Where",
        ),
    ],
)
def test_an_incomplete_licence_or_sharing_section_is_a_manifest_error(
    tiny_corpus: Path, edit: Any, message: str
) -> None:
    edit_yaml(tiny_corpus, edit)
    with pytest.raises(SourceError, match="not a valid corpus manifest") as error:
        load_manifest(tiny_corpus)
    assert message in str(error.value)
