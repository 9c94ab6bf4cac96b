"""The i2b2/VA 2011 train and test folders release as the splits they are (Uzuner et al. 2012), with their own
counts in the card; a test folder given alone is released as split test, never as train. Invented notes, written
in the exact i2b2/VA layout."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from clinical_corpora.builders.commands.main import main
from tests.conftest import release_reviewing_phi
from tests.test_i2b2_real_variants import (
    CHAINS,
    CONCEPTS,
    DISCHARGE,
    ER_CHAINS,
    ER_CONCEPTS,
    ER_PAIRS,
    ER_TEXT,
    PAIRS,
    write_note,
)


def folders(tmp_path: Path) -> tuple[Path, Path]:
    """A train folder of two notes and a test folder of one."""
    train, test = tmp_path / "Train", tmp_path / "Test"
    write_note(train, "upmc_ds_91", DISCHARGE, CONCEPTS, CHAINS, PAIRS)
    write_note(train, "upmc_er_91", ER_TEXT, ER_CONCEPTS, ER_CHAINS, ER_PAIRS)
    write_note(test, "upmc_er_95", ER_TEXT, ER_CONCEPTS, ER_CHAINS, None)
    return train, test


def split_ids(release: Path, config: str = "odie_anaphora") -> dict[str, list[str]]:
    return {
        shard.name.split("-")[0]: pq.read_table(shard, columns=["id"]).column("id").to_pylist()
        for shard in sorted((release / "data" / config).glob("*.parquet"))
    }


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("splits")
    train, test = folders(tmp_path)
    sources = ["--source", f"i2b2={train}", "--source", f"i2b2_test={test}"]
    assert release_reviewing_phi(["release", "odie_anaphora", *sources, "--text-free"], tmp_path / "out") == 0
    return next((tmp_path / "out" / "odie_anaphora").glob("*[0-9]"))


def test_train_and_test_folders_are_the_train_and_test_splits(released: Path) -> None:
    assert split_ids(released) == {"train": ["upmc_ds_91", "upmc_er_91"], "test": ["upmc_er_95"]}
    assert split_ids(released, "odie_anaphora_bigbio_kb") == split_ids(released)
    card = (released / "README.md").read_text()
    counts = card.split("## Counts per split\n")[1].split("\n## ")[0]
    assert "| train | 2 | 14 | 9 | 4 |" in counts and "| test | 1 | 2 | 1 | 1 |" in counts
    assert main(["validate", str(released)]) == 0


def test_the_text_free_release_names_each_note_in_its_own_folder_and_rehydrates(released: Path, tmp_path: Path) -> None:
    text_free = released.with_name(released.name + ".text-free")
    anchors = pq.read_table(text_free / "anchors.parquet", columns=["locator"]).column("locator").to_pylist()
    assert sorted(anchors) == [
        "i2b2:docs/upmc_ds_91.txt",
        "i2b2:docs/upmc_er_91.txt",
        "i2b2_test:docs/upmc_er_95.txt",
    ]
    train, test = released.parents[2] / "Train", released.parents[2] / "Test"
    argv = ["rehydrate", str(text_free), "--source", f"i2b2={train}", "--source", f"i2b2_test={test}"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    restored = tmp_path / "odie_anaphora" / released.name
    assert (restored / "manifest.json").read_bytes() == (released / "manifest.json").read_bytes()


def test_a_test_folder_given_alone_is_released_as_split_test(tmp_path: Path) -> None:
    _, test = folders(tmp_path)
    assert main(["release", "odie_anaphora", "--source", f"i2b2_test={test}", "--out", str(tmp_path / "out")]) == 0
    release = next((tmp_path / "out" / "odie_anaphora").glob("*[0-9]"))
    assert split_ids(release) == {"test": ["upmc_er_95"], "train": []}
    manifest = json.loads((release / "manifest.json").read_text())
    assert list(manifest["inputs"]) == ["i2b2_test"]


def test_the_i2b2_export_writes_each_split_to_its_folder_and_releases_it_again(released: Path, tmp_path: Path) -> None:
    """Released again from the export's two folders, the notes keep their splits."""
    out = tmp_path / "export"
    assert main(["export", "i2b2", str(released), "--out", str(out)]) == 0
    assert sorted(p.name for p in (out / "test" / "docs").iterdir()) == ["upmc_er_95.txt"]
    assert sorted(p.name for p in (out / "train" / "docs").iterdir()) == ["upmc_ds_91.txt", "upmc_er_91.txt"]
    again = tmp_path / "again"
    sources = ["--source", f"i2b2={out / 'train'}", "--source", f"i2b2_test={out / 'test'}"]
    assert release_reviewing_phi(["release", "odie_anaphora", *sources], again) == 0
    assert split_ids(next((again / "odie_anaphora").glob("*[0-9]"))) == split_ids(released)
