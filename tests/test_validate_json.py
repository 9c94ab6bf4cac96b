"""``clincorp validate --json`` names what it checked: the corpus, version and variant manifest.json names and the
release's digest (the sha256 of manifest.json), on every path, null where no manifest.json could be read."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from tests.conftest import SampleVariant

CORPUS = "sdoh"


def _validated(release: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    status = main(["validate", str(release), "--json"])
    return status, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("variant", ["full", "text-free"])
def test_validate_json_names_the_corpus_version_variant_and_digest(
    sample_variant: SampleVariant, variant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_variant(CORPUS, variant)
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    status, report = _validated(release, capsys)
    assert status == 0 and report["verdict"] == "valid"
    digest = hashlib.sha256((release / "manifest.json").read_bytes()).hexdigest()
    assert {key: report[key] for key in ("corpus", "version", "variant", "digest")} == {
        "corpus": CORPUS,
        "version": manifest["version"],
        "variant": variant,
        "digest": digest,
    }


def test_an_invalid_release_is_named_too(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = Path(shutil.copytree(sample_variant(CORPUS, "full"), tmp_path / "release"))
    with (release / "README.md").open("a", encoding="utf-8") as card:
        card.write("edited after the release\n")
    status, report = _validated(release, capsys)
    assert status == 1 and report["verdict"] == "invalid"
    assert (report["corpus"], report["variant"]) == (CORPUS, "full")


def test_a_folder_with_no_readable_manifest_names_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    status, report = _validated(tmp_path, capsys)
    assert status != 0
    assert [report[key] for key in ("corpus", "version", "variant", "digest")] == [None] * 4
