"""Releases forged as issue 33 lists them, opened with every command that reads a release: each is refused with
an error naming the file or record, no traceback, and nothing written; ``validate --json`` prints JSON on every
path. Rehydrations that are not the maintainer's release (re-anchored, partial) validate as what they are.

Each forgery here got through the commands of release 0.9 (view followed links out of the release, a corrupt
shard listed with its sha256 crashed validate, diff and view, a shifted recipe was restored by --re-anchor, an
extra listed file, a zTXt chunk in a figure and consistently edited croissant hashes passed validate).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.opened import open_release
from clinical_corpora.builders.text_free.card import describe_text_free
from tests import forked
from tests.conftest import SampleVariant
from tests.test_hostile_releases import rehash

CORPUS = "sdoh"
SHARD = "data/sdoh/train-00000-of-00001.parquet"
NOTE = "Lives with wife and two sons in a single storey house. Retired mechanic."


@pytest.fixture
def built(sample_variant: SampleVariant) -> tuple[Path, Path]:
    """The sdoh sample release and its text-free variant (read only: tests forge copies)."""
    return sample_variant(CORPUS, "full"), sample_variant(CORPUS, "text-free")


@pytest.fixture
def full(built: tuple[Path, Path], tmp_path: Path) -> Path:
    return Path(shutil.copytree(built[0], tmp_path / "download" / CORPUS / built[0].name))


@pytest.fixture
def text_free(built: tuple[Path, Path], tmp_path: Path) -> Path:
    return Path(shutil.copytree(built[1], tmp_path / "download" / CORPUS / built[1].name))


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``clincorp`` expecting a refusal (exit 1, one error, no traceback); what it printed."""
    assert main(argv) == 1
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err + printed.out
    return printed.out + printed.err


def failed_gates(release: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, list[str]]:
    """``clincorp validate --json``: exit 1 and parseable JSON naming the failed gates and their problems."""
    assert main(["validate", str(release), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "invalid"
    return {
        gate["name"]: [str(where.get("problem", where)) for where in gate["where"]]
        for gate in report["gates"]
        if gate["status"] == "fail"
    }


def files_under(folder: Path) -> list[str]:
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*"))


def link_shard(release: Path, outside: Path) -> str:
    target = outside / "shard.parquet"
    shutil.move(release / SHARD, target)
    (release / SHARD).symlink_to(target)
    return SHARD


def link_config(release: Path, outside: Path) -> str:
    shutil.move(release / "data" / "sdoh", outside / "sdoh")
    (release / "data" / "sdoh").symlink_to(outside / "sdoh")
    return "data/sdoh"


def link_validation(release: Path, outside: Path) -> str:
    shutil.move(release / "validation.json", outside / "validation.json")
    (release / "validation.json").symlink_to(outside / "validation.json")
    return "validation.json"


@pytest.mark.parametrize("link", [link_shard, link_config, link_validation], ids=["shard", "config", "validation"])
def test_view_refuses_a_link_out_of_the_release(
    full: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], link: Callable[[Path, Path], str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    linked = link(full, outside)
    printed = refused(["view", str(full), "--out", str(tmp_path / "pages")], capsys)
    assert f"{linked}: a symbolic link (a release holds only regular files and folders)" in printed
    assert not (tmp_path / "pages").exists()


def corrupt_footer(path: Path) -> None:
    """Overwrite the start of a parquet file's footer metadata (its length is in the last 8 bytes)."""
    data = bytearray(path.read_bytes())
    length = int.from_bytes(data[-8:-4], "little")
    data[-8 - length : -8 - length + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))


def test_a_corrupt_shard_listed_with_its_sha256_is_named_by_every_command(
    full: Path, built: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corrupt_footer(full / SHARD)
    rehash(full, SHARD)
    unreadable = f"{SHARD}: not a readable parquet file"
    assert any(unreadable in problem for problem in failed_gates(full, capsys)["files"])
    assert unreadable in refused(["diff", str(built[0]), str(full)], capsys)
    assert unreadable in refused(["view", str(full), "--out", str(tmp_path / "pages")], capsys)
    assert unreadable in refused(["export", "brat", str(full), "--out", str(tmp_path / "brat")], capsys)
    assert not (tmp_path / "pages").exists() and not (tmp_path / "brat").exists()


def test_validate_json_is_json_when_the_folder_is_no_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    status = main(["validate", str(tmp_path), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert status != 0 and report["verdict"] == "invalid"


def shift_first_trigger(release: Path) -> None:
    """Move the recipe of the first trigger one character right (offsets kept), rehash the shard and draw the
    card and croissant.json again: a thorough forger's release, which the door and the descriptions accept."""
    table = pq.read_table(release / SHARD)
    rows = table.to_pylist()
    segment = rows[0]["events"][0]["trigger"]["text"][0]
    segment["start"] += 1
    segment["end"] += 1
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), release / SHARD)
    rehash(release, SHARD)
    opened = open_release(release)
    drawn = describe_text_free(opened.corpus, opened.builder, opened.manifest, opened.full_manifest, opened.view)
    for name, data in drawn.items():
        (release / name).write_bytes(data)
        rehash(release, name)


@pytest.mark.parametrize("mode", [[], ["--re-anchor"]], ids=["strict", "re-anchor"])
def test_a_shifted_recipe_is_never_written(
    text_free: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: list[str]
) -> None:
    shift_first_trigger(text_free)
    out = tmp_path / "out"
    printed = refused(["rehydrate", str(text_free), "--out", str(out), *mode], capsys)
    assert "sdoh/train record 'train/mimic/0101' restores as no valid record" in printed
    assert "the release is damaged or forged (its recipes do not give the text its offsets name)" in printed
    assert not out.exists()


def test_with_quarantine_a_shifted_recipe_leaves_its_record_out_saying_why(
    text_free: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shift_first_trigger(text_free)
    out = tmp_path / "out"
    assert main(["rehydrate", str(text_free), "--out", str(out), "--on-error", "quarantine"]) == 0
    assert "0 because their documents differ, 1 because they restore as no valid record" in capsys.readouterr().out
    [restored] = (out / CORPUS).iterdir()
    [reject] = [json.loads(line) for line in (restored / "rehydrate-rejects.jsonl").read_text().splitlines()]
    assert reject["where"] == "sdoh/train [train/mimic/0101]" and reject["documents"] == []
    ids = pq.read_table(restored / SHARD, columns=["id"]).column("id").to_pylist()
    assert "train/mimic/0101" not in ids and ids


def plant_gzipped_note(release: Path) -> str:
    (release / "notes.gz").write_bytes(zlib.compress(NOTE.encode() * 20))
    rehash(release, "notes.gz")
    return "notes.gz: not a file a full release holds"


def plant_ztxt_in_figure(release: Path) -> str:
    """A zTXt chunk holding a note, before the IEND chunk of the card's first figure."""
    figure = sorted((release / "figures").glob("*.png"))[0]
    data = figure.read_bytes()
    payload = b"Comment\x00\x00" + zlib.compress(NOTE.encode())
    chunk = struct.pack(">I", len(payload)) + b"zTXt" + payload + struct.pack(">I", zlib.crc32(b"zTXt" + payload))
    end = data.rindex(b"IEND") - 4
    figure.write_bytes(data[:end] + chunk + data[end:])
    name = figure.relative_to(release).as_posix()
    rehash(release, name)
    return f"{name}: differs from what the package draws"


def edit_croissant_hashes(release: Path) -> str:
    """Every sha256 croissant.json records replaced consistently by another file's."""
    croissant = json.loads((release / "croissant.json").read_text(encoding="utf-8"))
    for entry in croissant["distribution"]:
        if "sha256" in entry:
            entry["sha256"] = hashlib.sha256(NOTE.encode()).hexdigest()
    (release / "croissant.json").write_text(json.dumps(croissant, indent=2), encoding="utf-8")
    rehash(release, "croissant.json")
    return "croissant.json: differs from what the package draws"


@pytest.mark.parametrize(
    ("plant", "gate"),
    [(plant_gzipped_note, "files"), (plant_ztxt_in_figure, "descriptions"), (edit_croissant_hashes, "descriptions")],
    ids=["gzipped-file", "ztxt-figure", "croissant-hashes"],
)
def test_what_a_release_does_not_declare_fails_validate(
    full: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], plant: Callable[[Path], str], gate: str
) -> None:
    problem = plant(full)
    assert any(problem in found for found in failed_gates(full, capsys)[gate])


def test_a_note_in_an_id_of_150_characters_fails_the_records_gate(
    text_free: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = pq.read_table(text_free / SHARD)
    rows = table.to_pylist()
    rows[0]["events"][0]["id"] = (NOTE.replace(" ", "_") * 3)[:150]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), text_free / SHARD)
    rehash(text_free, SHARD)
    [problem] = failed_gates(text_free, capsys)["records"]
    assert "field events[0].id: 150 characters that are not an id or name of up to 128 characters" in problem
    assert NOTE[:20] not in problem


def drifted_copy(tmp_path: Path) -> Path:
    """The sample's SHAC notes with one note's second half rewritten and another note missing."""
    copy = Path(shutil.copytree(find_corpus(CORPUS).folder / "sample" / "shac", tmp_path / "shac"))
    changed = copy / "train" / "mimic" / "0101.txt"
    text = changed.read_text(encoding="utf-8")
    half = len(text) // 2
    changed.write_text(text[:half] + "XX" + text[half + 20 :].upper(), encoding="utf-8")
    (copy / "train" / "mimic" / "0102.txt").unlink()
    return copy


@pytest.mark.parametrize("mode", [["--re-anchor"], ["--on-error", "quarantine"]], ids=["re-anchored", "partial"])
def test_a_rehydration_leaving_records_out_validates_as_what_it_is(
    text_free: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: list[str]
) -> None:
    out = tmp_path / "out"
    argv = ["rehydrate", str(text_free), "--source", f"shac={drifted_copy(tmp_path)}", "--out", str(out), *mode]
    assert main(argv) == 0
    assert "record(s) left out" in capsys.readouterr().out
    [restored] = (out / CORPUS).iterdir()
    assert main(["validate", str(restored), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "valid" and {gate["status"] for gate in report["gates"]} <= {"pass", "skipped"}


def _into_closed_pipe(argv: list[str]) -> int:
    """``clincorp ARGV`` with stdout a pipe nobody reads (``clincorp validate … | head`` once head is done)."""
    read, write = os.pipe()
    os.close(read)
    os.dup2(write, 1)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    return main(argv)


def test_validate_into_a_closed_pipe_ends_quietly(built: tuple[Path, Path]) -> None:
    status, _, err = forked.start(lambda: _into_closed_pipe(["validate", str(built[0])])).wait()
    assert (status, err) == (1, "")
