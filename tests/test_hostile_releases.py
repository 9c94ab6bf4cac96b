"""A downloaded text-free release is untrusted: what a downloader does, with releases forged as an attacker would.

Each test builds the text-free variant of the sdoh sample release, tampers with it (and "rehashes": updates the
sha256 the manifest records, as a forger would), then runs ``clincorp rehydrate`` and ``clincorp validate`` on
it. Both must refuse it with a clear error, and nothing may be written or removed outside ``--out``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import socket
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.opened import open_release
from clinical_corpora.builders.text_free.card import describe_text_free
from clinical_corpora.core.release_records import FULL_FOLDER
from clinical_corpora.core.release_records import REHYDRATE_REJECTS_FILE as REJECTS_FILE
from tests.conftest import SampleRelease, SampleVariant

CORPUS = "sdoh"


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def text_free(sample_variant: SampleVariant, tmp_path: Path) -> Path:
    """A text-free sdoh release as downloaded into ``<tmp>/download/sdoh/<version>.text-free``."""
    made = sample_variant(CORPUS, "text-free")
    return Path(shutil.copytree(made, tmp_path / "download" / CORPUS / made.name))


def rehash(release: Path, name: str) -> None:
    """Record the current sha256 of ``release/name`` in the release's manifest, listing the file when it was not
    (for a file of full/, its entry in the text-free manifest): what a forger does after an edit."""
    manifest_path = release / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    digest = hashlib.sha256((release / name).read_bytes()).hexdigest()
    listed = [entry for entry in manifest["outputs"] if entry["file"] == name]
    for entry in listed:
        entry["sha256"] = digest
    if not listed:
        manifest["outputs"].append({"file": name, "sha256": digest})
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def redraw_croissant(release: Path) -> None:
    """croissant.json drawn again for the release's data as it now is (the sha256 of its shards), and rehashed."""
    opened = open_release(release)
    drawn = describe_text_free(opened.corpus, opened.builder, opened.manifest, opened.full_manifest, opened.view)
    (release / "croissant.json").write_bytes(drawn["croissant.json"])
    rehash(release, "croissant.json")


def edit_json(path: Path, change: Callable[[dict], None]) -> None:
    payload = json.loads(path.read_text(encoding="utf-8"))
    change(payload)
    path.write_text(json.dumps(payload, indent=2), encoding="utf-8")


def run_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``clincorp`` expecting a refusal (exit 1, an error line, no traceback); its error output."""
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "\nerror: " in f"\n{err}"
    return err


def test_a_forged_version_cannot_send_the_restored_release_outside_out(
    text_free: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit_json(text_free / FULL_FOLDER / "manifest.json", lambda m: m.update(version="../../escaped"))
    rehash(text_free, f"{FULL_FOLDER}/manifest.json")
    out = tmp_path / "out"
    before = files_under(tmp_path)
    err = run_refused(["rehydrate", str(text_free), "--out", str(out)], capsys)
    assert "full/manifest.json: not a release manifest: version: String should match pattern" in err
    assert files_under(tmp_path) == before
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "out").exists()


def test_with_quarantine_a_forged_version_removes_nothing_outside_out(
    text_free: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / REJECTS_FILE).write_text("{}\n", encoding="utf-8")  # looks like a partial rehydration
    (victim / "precious.txt").write_text("keep me", encoding="utf-8")
    edit_json(text_free / FULL_FOLDER / "manifest.json", lambda m: m.update(version="../../victim"))
    rehash(text_free, f"{FULL_FOLDER}/manifest.json")
    run_refused(["rehydrate", str(text_free), "--out", str(tmp_path / "out"), "--on-error", "quarantine"], capsys)
    assert (victim / "precious.txt").read_text(encoding="utf-8") == "keep me"


@pytest.mark.parametrize("command", ["rehydrate", "validate"])
def test_a_corpus_named_by_a_path_is_never_imported(
    text_free: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    evil = tmp_path / "evil"
    evil.mkdir()
    shutil.copy(find_corpus(CORPUS).folder / "corpus.yaml", evil / "corpus.yaml")
    yaml_path = evil / "corpus.yaml"
    yaml_path.write_text(
        yaml_path.read_text(encoding="utf-8").replace(
            "clinical_corpora.corpora.sdoh.builder:SdohBuilder", "evil_module_that_must_not_load:Builder"
        ),
        encoding="utf-8",
    )
    edit_json(text_free / "manifest.json", lambda m: m.update(corpus=str(evil)))
    argv = [command, str(text_free)] + (["--out", str(tmp_path / "out")] if command == "rehydrate" else [])
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert "evil_module_that_must_not_load" not in captured.out + captured.err
    assert "manifest.json: not a release manifest: corpus: String should" in captured.out + captured.err


def test_a_symlink_or_unlisted_file_in_full_is_not_copied(
    text_free: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the user's private file", encoding="utf-8")
    (text_free / FULL_FOLDER / "planted.txt").symlink_to(secret)
    (text_free / FULL_FOLDER / "unlisted.txt").write_text("not in any manifest", encoding="utf-8")
    (text_free / FULL_FOLDER / "a-folder").mkdir()
    out = tmp_path / "out"
    err = run_refused(["rehydrate", str(text_free), "--out", str(out)], capsys)
    assert "full/planted.txt: a symbolic link" in err and "full/unlisted.txt: not listed in manifest.json" in err
    assert not out.exists()


def test_a_symlink_listed_in_full_is_refused(
    text_free: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the user's private file", encoding="utf-8")
    listed = text_free / FULL_FOLDER / "validation.json"
    listed.unlink()
    listed.symlink_to(secret)
    rehash(text_free, f"{FULL_FOLDER}/validation.json")
    err = run_refused(["rehydrate", str(text_free), "--out", str(tmp_path / "out")], capsys)
    assert "full/validation.json: a symbolic link" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("listed", ["../../secret.txt", "/etc/hostname", "data\\..\\x"])
def test_a_listed_path_outside_the_release_is_never_opened(
    text_free: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], listed: str
) -> None:
    (tmp_path / "secret.txt").write_text("the user's private file", encoding="utf-8")
    edit_json(text_free / "manifest.json", lambda m: m["outputs"].append({"file": listed, "sha256": "0" * 64}))
    err = run_refused(["rehydrate", str(text_free), "--out", str(tmp_path / "out")], capsys)
    assert "a release lists only files inside its folder" in err and repr(listed) in err
    assert not (tmp_path / "out").exists()


def test_a_version_that_differs_between_the_manifests_is_refused(
    text_free: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit_json(text_free / FULL_FOLDER / "manifest.json", lambda m: m.update(version="9.9.9+sample"))
    rehash(text_free, f"{FULL_FOLDER}/manifest.json")
    err = run_refused(["rehydrate", str(text_free), "--out", str(tmp_path / "out")], capsys)
    assert "full/manifest.json is not the manifest of this release's full release (version differ)" in err


def test_a_stale_staging_folder_of_a_killed_rehydration_is_removed(text_free: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    version = text_free.name.removesuffix(".text-free")
    host = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())
    stale = out / CORPUS / f".{version}.staging-{2**22 + 1}@{host}.abc123"  # no such process here
    stale.mkdir(parents=True)
    (stale / "restored-licensed-text.parquet").write_bytes(b"licensed")
    assert main(["rehydrate", str(text_free), "--out", str(out)]) == 0
    assert not stale.exists()


@pytest.mark.parametrize(
    ("segment", "problem"),
    [
        ({"document": 5}, "names document 5 of a row listing 1"),
        ({"document": -2}, "names document -2 of a row listing 1"),
        ({"document": -1}, "names a literal segment without its text"),
        ({"start": -3}, "names offsets [-3, 188) outside its document of 188 characters"),
        ({"end": 10_000}, "names offsets [0, 10000) outside its document of 188 characters"),
        ({"start": 50, "end": 40}, "names offsets [50, 40) outside its document of 188 characters"),
    ],
)
@pytest.mark.parametrize("re_anchor", [False, True], ids=["strict", "re-anchor"])
def test_a_recipe_out_of_range_is_an_error_naming_its_record_and_field(
    text_free: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], segment: dict, problem: str, re_anchor: bool
) -> None:
    shard = "data/sdoh/train-00000-of-00001.parquet"
    table = pq.read_table(text_free / shard)
    texts = table.column("text").to_pylist()
    assert texts[0] == [{"document": 0, "start": 0, "end": 188, "literal": None}]  # the sample's first note
    texts[0] = [{**texts[0][0], **segment}]
    table = table.set_column(
        table.schema.get_field_index("text"), "text", pa.array(texts, table.schema.field("text").type)
    )
    pq.write_table(table, text_free / shard)
    rehash(text_free, shard)
    redraw_croissant(text_free)  # a thorough forger: the release passes the door and its descriptions agree
    mode = ["--re-anchor", "--source", f"shac={_another_note_changed(tmp_path)}"] if re_anchor else []
    err = run_refused(["rehydrate", str(text_free), "--out", str(tmp_path / "out"), *mode], capsys)
    assert f"sdoh/train record 'train/mimic/0101': the recipe of text {problem}" in err


def _another_note_changed(tmp_path: Path) -> Path:
    """A copy of the SHAC sample in which a note other than the forged record's differs, so re-anchoring runs."""
    shac = Path(shutil.copytree(find_corpus(CORPUS).folder / "sample" / "shac", tmp_path / "shac"))
    note = shac / "train" / "mimic" / "0102.txt"
    note.write_bytes(note.read_bytes().replace(b"\n", b"\r\n"))
    return shac


def test_exporting_a_text_free_release_says_to_rehydrate_it_first(
    text_free: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = run_refused(["export", "brat", str(text_free), "--out", str(tmp_path / "brat")], capsys)
    assert "is a text-free release: it holds no text; restore it first (clincorp rehydrate" in err
    assert not (tmp_path / "brat").exists()


def test_an_export_folder_under_a_file_is_a_usage_error(
    sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(SystemExit) as usage:
        main(["export", "brat", str(sample_release(CORPUS).folder), "--out", str(blocker / "sub")])
    assert usage.value.code == 2
    assert f"{blocker} is a file, not a folder: give a folder to write into" in capsys.readouterr().err


def test_a_deeply_nested_manifest_is_an_error_not_a_recursion_traceback(
    text_free: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (text_free / "manifest.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert main(["validate", str(text_free)]) == 1
    printed = capsys.readouterr()
    assert "manifest.json: not a release manifest: Invalid JSON: recursion limit exceeded" in printed.out
    assert "Traceback" not in printed.out + printed.err


def test_a_corpus_yaml_that_is_not_utf8_is_an_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "corpus.yaml").write_bytes("name: caf\xe9\n".encode("latin-1"))
    err = run_refused(["release", str(folder), "--out", str(tmp_path / "out")], capsys)
    assert f"{folder / 'corpus.yaml'}: cannot read the corpus manifest: not UTF-8 text (byte 9)" in err


PLANTED = (
    "Patient is a 67 year old man with a long history of heavy drinking who presents with chest pain and "
    "shortness of breath."
)


def plant_in_card(release: Path) -> None:
    card = release / "README.md"
    card.write_text(card.read_text(encoding="utf-8") + f"\n{PLANTED}\n", encoding="utf-8")


def plant_in_croissant(release: Path) -> None:
    edit_json(release / "croissant.json", lambda document: document.update(description=PLANTED))


def plant_in_first_id(release: Path, shard: str) -> None:
    table = pq.read_table(release / shard)
    ids = table.column("id").to_pylist()
    ids[0] = f"{ids[0]} {PLANTED}"
    pq.write_table(table.set_column(table.schema.get_field_index("id"), "id", pa.array(ids)), release / shard)


SHARD = "data/sdoh/train-00000-of-00001.parquet"


@pytest.mark.parametrize(
    ("plant", "rehashed", "gate", "problem"),
    [
        (plant_in_card, "README.md", "descriptions", "README.md: differs from what the package draws"),
        (plant_in_croissant, "croissant.json", "descriptions", "croissant.json: differs from what the package draws"),
        (lambda release: plant_in_first_id(release, SHARD), SHARD, "records", "characters that are not an id or name"),
    ],
    ids=["card", "croissant", "id"],
)
def test_text_planted_after_the_build_is_refused_by_validate_and_rehydrate(
    text_free: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    plant: Callable[[Path], None],
    rehashed: str,
    gate: str,
    problem: str,
) -> None:
    """The card and croissant.json are drawn again and compared byte for byte; an id is bounded by its record
    model: a note pasted into any of them is refused, named by where it is, never quoted."""
    plant(text_free)
    rehash(text_free, rehashed)
    assert main(["validate", str(text_free)]) == 1
    out = capsys.readouterr().out
    assert f"gate {gate} FAILED" in out and problem in out
    assert PLANTED[:10] not in out  # the problem locates the text without repeating it
    before = files_under(tmp_path)
    err = run_refused(["rehydrate", str(text_free), "--out", str(tmp_path / "out")], capsys)
    assert PLANTED[:10] not in err
    assert files_under(tmp_path) == before
