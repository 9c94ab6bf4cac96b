"""What ``datasets`` and the Hub read from a card: ``load_dataset(...).info`` of every config of every registered
corpus's sample release, full and text-free, holds the corpus's version, description, citation, homepage and
licence from corpus.yaml; the text-free card names its licence; the card says what the split names mean."""

from __future__ import annotations

from pathlib import Path

import pytest
from datasets import load_dataset

from clinical_corpora.builders.plugins import all_corpora, find_corpus
from tests.conftest import SampleVariant
from tests.test_cards import card_parts, section

CORPORA = [manifest.name for manifest in all_corpora()]


@pytest.mark.parametrize("variant", ["full", "text-free"])
@pytest.mark.parametrize("name", CORPORA)
def test_load_dataset_info_holds_the_corpus_metadata(
    sample_variant: SampleVariant, name: str, variant: str, tmp_path: Path
) -> None:
    release = sample_variant(name, variant)
    corpus = find_corpus(name)
    front, _ = card_parts(release)
    for config in (entry["config_name"] for entry in front["configs"]):
        for split, rows in load_dataset(str(release), config, cache_dir=str(tmp_path / "cache")).items():
            info = rows.info
            assert str(info.version) == corpus.version, (config, split)
            assert info.citation == corpus.citation.strip()
            assert info.homepage == corpus.homepage
            assert info.license == f"{corpus.license_name} ({corpus.license_link})"
            assert " ".join(corpus.description.split()) in info.description
            assert info.description.startswith("Synthetic data: this is a sample release")
            assert ("Text-free variant" in info.description) == (variant == "text-free")


@pytest.mark.parametrize("name", CORPORA)
def test_the_text_free_card_names_its_licence(sample_variant: SampleVariant, name: str) -> None:
    corpus = find_corpus(name)
    front, _ = card_parts(sample_variant(name, "text-free"))
    assert front["license"] == "other"
    assert (front["license_name"], front["license_link"]) == (corpus.license_name, corpus.license_link)


@pytest.mark.parametrize("variant", ["full", "text-free"])
def test_the_card_says_dev_is_validation_and_declares_no_second_copy(
    sample_variant: SampleVariant, variant: str, tmp_path: Path
) -> None:
    """A ``validation`` split mapped to the dev files would load the dev rows twice (``datasets`` has no split
    alias), so the card says how to load dev instead."""
    release = sample_variant("snomed_el" if variant == "full" else "sdoh", variant)
    front, body = card_parts(release)
    note = section(body, "Rows per split")
    if variant == "full":
        assert "`full` (`concepts`, `concept_stats`): the whole table, in one split." in note
    else:
        assert '`dev` is the split other datasets call `validation`: load it with `split="dev"`' in note
        loaded = load_dataset(str(release), "sdoh", cache_dir=str(tmp_path / "cache"))
        assert set(loaded) == {"train", "dev", "test"}
    assert all(entry["split"] != "validation" for config in front["configs"] for entry in config["data_files"])
