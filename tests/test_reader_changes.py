"""What a reader changed, recorded in the release: reader-changes.jsonl lists every line read otherwise than written,
manifest.json and the card count them by kind with the first lines, and ``clincorp validate`` holds them together.

The input is the invented i2b2/VA folder of ``test_i2b2_real_variants`` (patterns of the real release, Uzuner et
al. 2012 data) plus a note whose quoted texts are not the tokens of their positions.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from tests.conftest import release_reviewing_phi
from tests.test_hostile_releases import edit_json, rehash
from tests.test_i2b2_real_variants import FEVER, FEVER_CHAINS, FEVER_CONCEPTS, odie_corpus, write_note


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The invented i2b2 folder released with quarantine (and its text-free variant), in two worker processes."""
    tmp_path = tmp_path_factory.mktemp("changes")
    root = odie_corpus(tmp_path)
    write_note(root, "upmc_er_92", FEVER, FEVER_CONCEPTS, FEVER_CHAINS, None)
    argv = ["release", "odie_anaphora", "--source", f"i2b2={root}", "--on-error", "quarantine", "--max-rejects", "5"]
    assert release_reviewing_phi([*argv, "--workers", "2", "--text-free"], tmp_path / "out") == 0
    assert release_reviewing_phi([*argv, "--workers", "1"], tmp_path / "one") == 0
    return next((tmp_path / "out" / "odie_anaphora").glob("*[0-9]"))


def test_every_change_is_listed_and_counted_by_kind_in_the_manifest(released: Path) -> None:
    lines = [json.loads(line) for line in (released / "reader-changes.jsonl").read_text().splitlines()]
    manifest = json.loads((released / "manifest.json").read_text())
    counted = {kind: entry["count"] for kind, entry in manifest["reader_changes"].items()}
    assert counted == {kind: sum(line["kind"] == kind for line in lines) for kind in counted}
    assert set(counted) == {
        "chain_kept_whole",
        "chain_lines_joined",
        "chains_from_pairs",
        "quote_inside_tokens",
        "quote_unlike_tokens",
    }
    assert counted["quote_unlike_tokens"] == 8 and counted["chain_kept_whole"] == 1
    kept = manifest["reader_changes"]["chain_kept_whole"]["first"]
    assert kept == [
        "i2b2/chains/upmc_ds_92.txt.chains:1: "
        + next(line["what"] for line in lines if line["kind"] == "chain_kept_whole")
    ]
    assert len(manifest["reader_changes"]["quote_inside_tokens"]["first"]) == 3
    assert {"kind": "quote_unlike_tokens", "where": "i2b2/concepts/upmc_er_92.txt.con:3"}.items() <= next(
        line for line in lines if line["where"].endswith("upmc_er_92.txt.con:3")
    ).items()
    # Two worker processes or one: the same changes, in document order.
    assert (released / "reader-changes.jsonl").read_bytes() == (
        released.parents[2] / "one" / "odie_anaphora" / released.name / "reader-changes.jsonl"
    ).read_bytes()


def test_the_card_counts_the_changes_by_kind_with_the_first_lines(released: Path) -> None:
    card = (released / "README.md").read_text()
    section = card.split("## What the readers changed\n")[1].split("\n## ")[0]
    total = sum(1 for _ in (released / "reader-changes.jsonl").read_text().splitlines())
    assert f"The readers read {total} line(s) of the input otherwise than written" in section
    first = "i2b2/concepts/upmc_er_92.txt.con:1: concept text 'he' is not the tokens at 1:0 1:0 ('Heis')"
    assert f"| quote_unlike_tokens | 8 | {first}" in section


def test_validate_accepts_the_list_and_refuses_a_count_it_does_not_hold(
    released: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text_free = released.with_name(released.name + ".text-free")
    assert main(["validate", str(released)]) == 0
    assert main(["validate", str(text_free)]) == 0
    kept = text_free / "full" / "reader-changes.jsonl"
    assert kept.read_bytes() == (released / "reader-changes.jsonl").read_bytes()
    forged = copy_release(released, tmp_path / "forged")
    edit_json(forged / "manifest.json", lambda m: m["reader_changes"]["quote_unlike_tokens"].update(count=7))
    capsys.readouterr()
    assert main(["validate", str(forged)]) == 1
    out = capsys.readouterr().out
    assert "reader_changes counts" in out and "'quote_unlike_tokens': 7" in out and "reader-changes.jsonl holds" in out


def test_rehydration_restores_the_list_byte_for_byte(released: Path, tmp_path: Path) -> None:
    text_free = released.with_name(released.name + ".text-free")
    root = next(p for p in released.parents[2].iterdir() if p.name == "i2b2")
    assert main(["rehydrate", str(text_free), "--source", f"i2b2={root}", "--out", str(tmp_path)]) == 0
    restored = tmp_path / "odie_anaphora" / released.name
    assert (restored / "reader-changes.jsonl").read_bytes() == (released / "reader-changes.jsonl").read_bytes()
    assert (restored / "manifest.json").read_bytes() == (released / "manifest.json").read_bytes()


def test_forged_list_is_refused(released: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    forged = copy_release(released, tmp_path / "forged")
    path = forged / "reader-changes.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[1:]))
    rehash(forged, "reader-changes.jsonl")
    assert main(["validate", str(forged)]) == 1
    assert "reader-changes.jsonl holds" in capsys.readouterr().out


def copy_release(source: Path, target: Path) -> Path:
    return Path(shutil.copytree(source, target))
