"""``clincorp diff`` checks a release's files while it reads them: nothing is reported from a file that differs
from its manifest, a file that cannot be read safely is refused before any is read, and reading row groups
ahead changes nothing in what is found."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.diff.report import as_json, diff_releases, open_release
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.hashing import sha256_file
from tests.conftest import SampleRelease
from tests.test_diff_mutations import Copy


def _relabelled(sample_release: SampleRelease, tmp_path: Path, rehash: bool) -> tuple[Path, Copy]:
    """The sdoh sample and a copy whose first train note's first event has another type (its manifest
    rehashed or not)."""
    release = sample_release("sdoh").folder
    edited = Copy(release, tmp_path / "edited" / "sdoh" / release.name)
    rows, features = edited.rows("sdoh", "train")
    event = next(row for row in rows if row["events"])["events"][0]
    names = features["events"].feature["type"].names
    event["type_name"] = next(name for name in names if name != event["type_name"])
    event["type"] = names.index(event["type_name"])
    manifest = (edited.folder / "manifest.json").read_bytes()
    edited.save()
    if not rehash:
        (edited.folder / "manifest.json").write_bytes(manifest)
    return release, edited


def test_a_file_edited_after_its_manifest_fails_the_command_with_no_report(
    sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release, edited = _relabelled(sample_release, tmp_path, rehash=False)
    for extra in ([], ["--json"]):
        assert main(["diff", str(release), str(edited.folder), *extra]) == 1
        out, err = capsys.readouterr()
        assert out == ""
        assert "not a release this package opens (data/sdoh/train-" in err
        assert "sha256 differs from manifest.json" in err


def test_the_same_edit_rehashed_is_reported(
    sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release, edited = _relabelled(sample_release, tmp_path, rehash=True)
    assert main(["diff", str(release), str(edited.folder), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["configs"]["sdoh"]["splits"]["train"]["fields"]["events.type"]["label changed"]["count"] == 1


def test_a_damaged_parquet_is_named_by_its_hash_not_by_what_reading_it_raised(
    sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_release("sdoh").folder
    damaged = Copy(release, tmp_path / "damaged" / "sdoh" / release.name)
    shard = next((damaged.folder / "data" / "sdoh").glob("train-*.parquet"))
    shard.write_bytes(b"PAR1" + b"\0" * 100)
    assert main(["diff", str(release), str(damaged.folder)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert f"data/sdoh/{shard.name}: sha256 differs from manifest.json" in err


def test_an_inputs_jsonl_edited_after_its_manifest_fails_the_diff(
    sample_release: SampleRelease, tmp_path: Path
) -> None:
    release = sample_release("sdoh").folder
    edited = Copy(release, tmp_path / "edited" / "sdoh" / release.name)
    inputs = edited.folder / "inputs.jsonl"
    inputs.write_text(inputs.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    opened = open_release(edited.folder)
    with pytest.raises(ClincorpError, match=r"inputs.jsonl: sha256 differs from manifest.json"):
        diff_releases(open_release(release), opened)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_pipe_in_place_of_a_parquet_file_is_refused_before_anything_is_read(
    sample_release: SampleRelease, tmp_path: Path
) -> None:
    release = sample_release("sdoh").folder
    piped = Copy(release, tmp_path / "piped" / "sdoh" / release.name)
    shard = next((piped.folder / "data" / "sdoh").glob("train-*.parquet"))
    shard.unlink()
    os.mkfifo(shard)  # opening it would wait for a writer forever
    with pytest.raises(ClincorpError, match=rf"data/sdoh/{shard.name}: not a regular file"):
        open_release(piped.folder)


def test_releases_read_in_many_row_groups_report_what_one_row_group_each_reports(
    sample_release: SampleRelease, tmp_path: Path
) -> None:
    release, edited = _relabelled(sample_release, tmp_path, rehash=True)
    rows, _ = edited.rows("sdoh", "dev")
    del rows[1]
    edited.save()
    one_group = as_json(diff_releases(open_release(release), open_release(edited.folder)))
    old_small, new_small = (
        _in_small_row_groups(folder, tmp_path / side) for side, folder in (("old", release), ("new", edited.folder))
    )
    assert pq.ParquetFile(next((new_small / "data" / "sdoh").glob("train-*.parquet"))).num_row_groups > 2
    many_groups = as_json(diff_releases(open_release(old_small), open_release(new_small)))
    for report in (one_group, many_groups):  # the same releases, in other folders and files
        for side in ("old", "new"):
            del report[side]["folder"], report[side]["digest"]
        assert len(report.pop("warnings")) == 1  # one version, other bytes: named by their digests
    assert many_groups == one_group
    splits = many_groups["configs"]["sdoh"]["splits"]
    assert splits["dev"]["records"]["removed"]["count"] == 1
    assert splits["train"]["fields"]["events.type"]["label changed"]["count"] == 1


def _in_small_row_groups(release: Path, under: Path) -> Path:
    """A copy of ``release`` whose parquet files hold one record per row group, rehashed."""
    copy = Copy(release, under / "sdoh" / release.name).folder
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest["outputs"]:
        if entry["file"].endswith(".parquet"):
            path = copy / entry["file"]
            pq.write_table(pq.read_table(path), path, row_group_size=1)
            entry["sha256"] = sha256_file(path)
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return copy


def test_records_in_another_order_are_matched_across_row_groups(sample_release: SampleRelease, tmp_path: Path) -> None:
    release, edited = _relabelled(sample_release, tmp_path, rehash=True)
    for split in edited.splits("sdoh"):
        edited.rows("sdoh", split)[0].reverse()
    edited.save()
    old_small = _in_small_row_groups(release, tmp_path / "old")
    new_small = _in_small_row_groups(edited.folder, tmp_path / "new")
    summary = diff_releases(open_release(old_small), open_release(new_small)).summary()
    assert list(summary.configs) == ["sdoh"]
    [(split, changes)] = summary.configs["sdoh"].splits.items()
    assert (split, changes.fields) == ("train", {"events.type": {"label changed": 1}})
