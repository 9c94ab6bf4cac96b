"""``clincorp diff`` on real releases of every corpus (rebuilds, full against text-free, untrusted folders, the
command's reports), and ``clincorp release --previous``: the summary in the card and manifest, validated,
carried by the text-free variant and restored by rehydration."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.diff.engine import RECORD, compare
from clinical_corpora.builders.diff.previous import changes_since
from clinical_corpora.builders.diff.report import diff_releases, open_release
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.rehydrate.request import RehydrateRequest
from clinical_corpora.builders.rehydrate.run import rehydrate
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.text_free.release import release_text_free
from clinical_corpora.builders.validate.run import check_release
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.schemas.licensed import licensed_paths
from tests.conftest import SampleRelease, SampleVariant
from tests.test_diff_mutations import Copy, Key, reported

CORPORA = ["clicr", "odie_anaphora", "rad_coref", "sdoh", "snomed_el"]


def changes(old: Path, new: Path) -> list[Key]:
    return sorted(reported(old, new))


@pytest.mark.parametrize("corpus", CORPORA)
def test_one_release_in_two_folders_diffs_empty(
    corpus: str, sample_release: SampleRelease, sample_variant: SampleVariant
) -> None:
    """Two builds of the same inputs are the same bytes (tests/test_contract.py), so this is what they diff."""
    first, second = sample_release(corpus).folder, sample_variant(corpus, "full")
    assert changes(first, second) == []
    assert diff_releases(open_release(first), open_release(second)).summary().empty


@pytest.mark.parametrize("corpus", CORPORA)
def test_full_and_text_free_of_one_build_differ_only_in_text_not_compared(
    corpus: str, sample_variant: SampleVariant
) -> None:
    manifest = find_corpus(corpus)
    full, text_free = sample_variant(corpus, "full"), sample_variant(corpus, "text-free")
    assert changes(full, text_free) == []
    assert changes(text_free, full) == []
    for comparison in compare(open_release(full), open_release(text_free)):
        assert comparison.shape is not None
        expected = {
            path: "text" for path in licensed_paths(_model(manifest.builder, comparison.config))
        }  # every licensed field, and nothing else, is left out
        assert comparison.shape.uncompared == expected


def _model(builder: str, config: str) -> type:
    from clinical_corpora.builders.contract.base import load_builder_class

    return load_builder_class(builder).CONFIGS[config]


def test_two_text_free_releases_compare_their_recipes(sample_release: SampleRelease, tmp_path: Path) -> None:
    """Both text-free: a moved mention's recipe moves with it, and nothing is left out."""
    manifest = find_corpus("rad_coref")
    full = tmp_path / "a" / "rad_coref" / sample_release("rad_coref").folder.name
    shutil.copytree(sample_release("rad_coref").folder, full)
    edited = Copy(full, tmp_path / "b" / "rad_coref" / full.name)
    rows, _ = edited.rows("rad_coref", "train")
    mention = rows[0]["mentions"][0]
    text = rows[0]["reports"][mention["report_index"]]["text"]
    mention["start"], mention["end"] = mention["start"] + 1, mention["end"] + 1
    mention["text"] = text[mention["start"] : mention["end"]]
    edited.save()
    old = release_text_free(manifest, full, resolve_sources(manifest, {})).folder
    new = release_text_free(manifest, edited.folder, resolve_sources(manifest, {})).folder
    assert changes(old, new) == [("rad_coref", "train", rows[0]["patient_id"], "mentions", "moved", mention["id"])]
    for comparison in compare(open_release(old), open_release(new)):
        assert comparison.shape is not None and comparison.shape.uncompared == {}


def test_chains_split_and_members_changed(sample_release: SampleRelease, tmp_path: Path) -> None:
    release = sample_release("rad_coref").folder
    edited = Copy(release, tmp_path / "rad_coref" / release.name)
    rows, _ = edited.rows("rad_coref", "train")
    patient = rows[0]
    long_chains = [chain for chain in patient["chains"] if len(chain["mention_ids"]) >= 2]
    split, moved = long_chains[0], long_chains[1]
    half = split["mention_ids"][: len(split["mention_ids"]) // 2]
    split["mention_ids"] = split["mention_ids"][len(half) :]
    patient["chains"].append({"id": "new-chain", "mention_ids": half})
    moved["mention_ids"] = moved["mention_ids"][1:]  # its first mention leaves it (and every chain)
    edited.save()
    record = patient["patient_id"]
    assert changes(release, edited.folder) == sorted(
        [
            ("rad_coref", "train", record, "chains", "split", split["id"]),
            ("rad_coref", "train", record, "chains", "members changed", moved["id"]),
        ]
    )


def moved_to_test(release: Path, tmp_path: Path) -> tuple[Path, str]:
    """A copy of an sdoh release whose first train note moved to the test split, and that note's id."""
    edited = Copy(release, tmp_path / "sdoh" / release.name)
    train, _ = edited.rows("sdoh", "train")
    test, _ = edited.rows("sdoh", "test")
    note = train.pop(0)
    test.append(note)
    edited.save()
    return edited.folder, note["id"]


def test_a_record_moved_to_another_split(sample_release: SampleRelease, tmp_path: Path) -> None:
    release = sample_release("sdoh").folder
    edited, note = moved_to_test(release, tmp_path)
    assert changes(release, edited) == [("sdoh", "test", note, RECORD, "moved to another split", "")]


def test_a_config_or_field_only_one_release_has(sample_release: SampleRelease, tmp_path: Path) -> None:
    release = sample_release("snomed_el").folder
    edited = Copy(release, tmp_path / "snomed_el" / release.name)
    shutil.rmtree(edited.folder / "data" / "concept_stats")
    manifest = json.loads((edited.folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["outputs"] = [o for o in manifest["outputs"] if not o["file"].startswith("data/concept_stats/")]
    (edited.folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    diff = diff_releases(open_release(release), open_release(edited.folder))
    summary = diff.summary()
    assert summary.configs["concept_stats"].status == "removed"
    assert sum(split.removed for split in summary.configs["concept_stats"].splits.values()) == 57
    assert set(summary.configs) == {"concept_stats"}


def test_untrusted_releases_are_refused_with_a_reason(sample_release: SampleRelease, tmp_path: Path) -> None:
    sdoh = sample_release("sdoh").folder
    with pytest.raises(ClincorpError, match="a release of sdoh.*of rad_coref: diff compares two releases of one"):
        diff_releases(open_release(sdoh), open_release(sample_release("rad_coref").folder))
    with pytest.raises(ClincorpError, match="not a release: it has no manifest.json"):
        open_release(tmp_path)
    forged = Copy(sdoh, tmp_path / "forged" / "sdoh" / sdoh.name)
    shard = next((forged.folder / "data" / "sdoh").glob("train-*.parquet"))
    shard.write_bytes(shard.read_bytes()[:-10] + b"0123456789")
    with pytest.raises(ClincorpError, match=r"not a release this package opens \(data/sdoh/train-.*sha256 differs"):
        diff_releases(open_release(sdoh), open_release(forged.folder))  # reported once its hashes are checked
    renamed = Copy(sdoh, tmp_path / "renamed" / "sdoh" / sdoh.name)
    manifest = json.loads((renamed.folder / "manifest.json").read_text(encoding="utf-8"))
    (renamed.folder / "manifest.json").write_text(json.dumps({**manifest, "version": "../../elsewhere"}))
    with pytest.raises(ClincorpError, match="not a release manifest: version: String should match pattern"):
        open_release(renamed.folder)
    twice = Copy(sdoh, tmp_path / "twice" / "sdoh" / sdoh.name)
    rows, _ = twice.rows("sdoh", "train")
    rows.append(dict(rows[0]))
    twice.save()
    with pytest.raises(ClincorpError, match=f"config sdoh holds record '{rows[0]['id']}' twice"):
        list(next(compare(open_release(sdoh), open_release(twice.folder))).changes)


def test_the_command_reports_text_and_json(
    sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_release("odie_anaphora").folder
    edited = Copy(release, tmp_path / "odie_anaphora" / release.name)
    rows, _ = edited.rows("odie_anaphora", "train")
    removed = [row["pairs"].pop() for row in rows if row["pairs"]]
    edited.save()
    assert main(["diff", str(release), str(edited.folder), "--examples", "2"]) == 0
    text = capsys.readouterr().out
    assert f"pairs: removed ×{len(removed)}" in text
    assert text.count(" ODIE_Instance_") >= 2
    assert main(["diff", str(release), str(edited.folder), "--json", "--examples", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    pairs = report["configs"]["odie_anaphora"]["splits"]["train"]["fields"]["pairs"]["removed"]
    assert pairs["count"] == len(removed) and len(pairs["examples"]) == 1
    assert report["identical"] is False and report["text_compared"] is True
    assert main(["diff", str(release), str(sample_release("sdoh").folder)]) == 1
    assert "diff compares two releases of one corpus" in capsys.readouterr().err


def test_release_previous_records_the_changes_and_validates(
    sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = find_corpus("sdoh")
    old = sample_release("sdoh").folder
    old_version = json.loads((old / "manifest.json").read_text(encoding="utf-8"))["version"]
    shac = tmp_path / "shac"
    shutil.copytree(corpus.folder / "sample" / "shac", shac)
    for path in (shac / "dev" / "uw").iterdir():
        path.unlink()  # two notes fewer
    sources = {"shac": shac}
    request = ReleaseRequest(corpus, tmp_path / "new", sources=sources, samples=("shac_double",))
    new = run(replace(request, changes_since=changes_since(old, "sdoh"))).folder
    manifest = json.loads((new / "manifest.json").read_text(encoding="utf-8"))
    recorded = manifest["changes"]
    assert recorded["previous"]["version"] == old_version and recorded["text_compared"] is True
    assert recorded["configs"]["sdoh"]["splits"]["dev"]["removed"] == 2
    card = (new / "README.md").read_text(encoding="utf-8")
    assert f"## Changes since {old_version}" in card and "| sdoh | dev | 0 | 2 | 0 | 0 |" in card
    assert [gate.gate for gate in check_release(new) if not gate.success] == []
    # the text-free variant carries it, and rehydration restores the release byte for byte
    text_free = release_text_free(corpus, new, resolve_sources(corpus, sources, ["shac_double"])).folder
    assert json.loads((text_free / "manifest.json").read_text(encoding="utf-8"))["changes"] == recorded
    assert f"## Changes since {old_version}" in (text_free / "README.md").read_text(encoding="utf-8")
    assert [gate.gate for gate in check_release(text_free) if not gate.success] == []
    restored = rehydrate(RehydrateRequest(text_free, tmp_path / "restored", sources=sources)).folder
    assert {p.relative_to(restored): p.read_bytes() for p in restored.rglob("*") if p.is_file()} == {
        p.relative_to(new): p.read_bytes() for p in new.rglob("*") if p.is_file()
    }
    # the same release again: the same bytes (the summary is deterministic)
    assert run(replace(request, changes_since=changes_since(old, "sdoh"))).status == "unchanged"


def test_validate_refuses_changes_the_card_does_not_show(sample_release: SampleRelease, tmp_path: Path) -> None:
    old = sample_release("odie_anaphora").folder
    corpus = find_corpus("odie_anaphora")
    new = run(ReleaseRequest(corpus, tmp_path, changes_since=changes_since(old, "odie_anaphora"))).folder
    manifest_path = new / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["changes"]["configs"] = {"odie_anaphora": {"splits": {"train": {"removed": 3}}}}
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    problems = {g.gate: [d["problem"] for d in g.details] for g in check_release(new) if not g.success}
    assert problems == {
        "descriptions": ["README.md: differs from what the package draws from the release's data and records"]
    }
    manifest["changes"] = {"previous": "1.0.0"}
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    [files] = [g for g in check_release(new) if not g.success]
    assert files.gate == "files" and files.details[0]["problem"].startswith("manifest.json: not a release manifest")


def test_previous_must_be_a_release_of_the_same_corpus(sample_release: SampleRelease, tmp_path: Path) -> None:
    with pytest.raises(ClincorpError, match="--previous .* is a release of sdoh, not of odie_anaphora"):
        changes_since(sample_release("sdoh").folder, "odie_anaphora")


def test_previous_names_one_corpus(
    sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["release", "--all", "--previous", str(sample_release("sdoh").folder), "--out", str(tmp_path)]) == 1
    assert "--previous apply to one corpus at a time" in capsys.readouterr().err
    assert not tmp_path.joinpath("sdoh").exists()


def test_previous_text_free_release_compares_all_but_text(sample_variant: SampleVariant, tmp_path: Path) -> None:
    corpus = find_corpus("odie_anaphora")
    old = sample_variant("odie_anaphora", "text-free")
    new = run(ReleaseRequest(corpus, tmp_path / "new", changes_since=changes_since(old, "odie_anaphora"))).folder
    recorded = json.loads((new / "manifest.json").read_text(encoding="utf-8"))["changes"]
    assert recorded["previous"]["variant"] == "text-free" and recorded["text_compared"] is False
    assert {why for entry in recorded["configs"].values() for why in entry["uncompared"].values()} == {"text"}
    assert "The text was not compared: one of the two releases is text-free" in (new / "README.md").read_text()
    assert [gate.gate for gate in check_release(new) if not gate.success] == []
