"""Copies of the sources in another encoding: ``clincorp rehydrate --source-encoding`` and ``--check``.

A text-free release of invented notes holding non-ASCII characters (BRAT ``.txt`` files, a MIMIC-III NOTEEVENTS
CSV, BMJ pages) is rehydrated from a latin-1 and a UTF-16 copy of its sources as from their UTF-8 twin, byte for
byte; without ``--source-encoding`` ``--check`` names the copy's encoding, and ``--check --json`` prints one JSON
object on every path, errors included.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import shutil
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.plugins import find_corpus
from tests.conftest import SampleVariant

NON_ASCII = " Lives in Montréal; café owner, naïve, ½ dose.\n"
"""Appended to every note, after its annotations: characters latin-1 and UTF-16 both hold."""


def _files(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def _recoded_folder(folder: Path, into: Path, encoding: str) -> Path:
    """Every file of ``folder`` (UTF-8 text) written in ``encoding`` under ``into``."""
    for path in folder.rglob("*"):
        if path.is_file():
            target = into / path.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_text(encoding="utf-8").encode(encoding))
    return into


def _released(tmp: Path, corpus: str, sources: dict[str, Path]) -> Path:
    """The text-free release of ``corpus`` built from ``sources`` (its full release beside it)."""
    arguments = ["release", corpus, "--text-free", "--out", str(tmp / "releases")]
    assert main(arguments + [f"--source={name}={path}" for name, path in sources.items()]) == 0
    return next((tmp / "releases" / corpus).glob("*.text-free"))


@pytest.fixture(scope="module")
def shac(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(SHAC's sample with non-ASCII notes, UTF-8; its text-free release)."""
    tmp = tmp_path_factory.mktemp("shac")
    folder = Path(shutil.copytree(find_corpus("sdoh").folder / "sample" / "shac", tmp / "shac"))
    for note in folder.rglob("*.txt"):
        note.write_text(note.read_text(encoding="utf-8") + NON_ASCII, encoding="utf-8")
    return folder, _released(tmp, "sdoh", {"shac": folder})


def _noteevents(path: Path, encoding: str, gzipped: bool) -> None:
    """The rad_coref sample's NOTEEVENTS with :data:`NON_ASCII` after every note's text, in ``encoding``."""
    with gzip.open(find_corpus("rad_coref").folder / "sample" / "NOTEEVENTS.csv.gz", "rt", newline="") as sample:
        rows = list(csv.reader(sample))
    for row in rows[1:]:
        row[-1] += NON_ASCII
    text = io.StringIO(newline="")
    csv.writer(text, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n").writerows(rows)
    data = text.getvalue().encode(encoding)
    path.write_bytes(gzip.compress(data, mtime=0) if gzipped else data)


@pytest.fixture(scope="module")
def noteevents(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a NOTEEVENTS.csv.gz of non-ASCII notes, UTF-8; the text-free rad_coref release built from it and the
    sample's annotations, whose copies of the reports say the same)."""
    tmp = tmp_path_factory.mktemp("noteevents")
    path = tmp / "NOTEEVENTS.csv.gz"
    _noteevents(path, "utf-8", gzipped=True)
    annotations = Path(shutil.copytree(find_corpus("rad_coref").folder / "sample" / "annotations", tmp / "brat"))
    for report in annotations.rglob("*.txt"):
        report.write_text(report.read_text(encoding="utf-8") + NON_ASCII, encoding="utf-8")
    return path, _released(tmp, "rad_coref", {"noteevents": path, "annotations": annotations})


def _rehydrated(text_free: Path, out: Path, *extra: str) -> dict[str, bytes]:
    assert main(["rehydrate", str(text_free), "--out", str(out), *extra]) == 0
    return _files(next(out.glob("*/*")))


def _check(text_free: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict]:
    capsys.readouterr()
    status = main(["rehydrate", str(text_free), "--check", "--json", *extra])
    return status, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("encoding", "guessed"), [("latin-1", None), ("utf-16", "utf_16")])
def test_a_brat_copy_in_another_encoding_recovers_as_its_utf8_twin(
    encoding: str, guessed: str | None, shac: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, text_free = shac
    copy = _recoded_folder(folder, tmp_path / "copy", encoding)
    status, report = _check(text_free, capsys, f"--source=shac={copy}")
    assert status == 1 and report["ok"] is False
    problem = report["unreadable"]
    assert problem["source"] == "shac" and "expected UTF-8 text, found byte" in problem["problem"]
    assert problem["encoding"] is not None and problem["option"] == f"--source-encoding shac={problem['encoding']}"
    if guessed is not None:
        assert problem["encoding"] == guessed
    status, report = _check(text_free, capsys, f"--source=shac={copy}", f"--source-encoding={encoding}")
    assert status == 0 and report["sources"]["shac"]["match"] == 13
    assert report["encodings"] == {"shac": codecs.lookup(encoding).name}
    twin = _rehydrated(text_free, tmp_path / "twin", f"--source=shac={folder}")
    assert twin == _files(text_free.parent / text_free.name.removesuffix(".text-free"))
    for mode in ([], ["--re-anchor"], ["--on-error", "quarantine"]):
        out = tmp_path / f"copy{len(mode)}"
        assert _rehydrated(text_free, out, f"--source=shac={copy}", f"--source-encoding=shac={encoding}", *mode) == twin


@pytest.mark.parametrize(("encoding", "gzipped"), [("latin-1", True), ("utf-16", False)])
def test_a_noteevents_copy_in_another_encoding_recovers_as_its_utf8_twin(
    encoding: str, gzipped: bool, noteevents: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    twin_csv, text_free = noteevents
    copy = tmp_path / ("NOTEEVENTS.csv.gz" if gzipped else "NOTEEVENTS.csv")
    _noteevents(copy, encoding, gzipped)
    status, report = _check(text_free, capsys, f"--source=noteevents={copy}")
    assert status == 1 and report["unreadable"]["source"] == "noteevents"
    assert report["unreadable"]["file"] == str(copy)
    twin = _rehydrated(text_free, tmp_path / "twin", f"--source=noteevents={twin_csv}")
    assert twin == _files(text_free.parent / text_free.name.removesuffix(".text-free"))
    given = (f"--source=noteevents={copy}", f"--source-encoding=noteevents={encoding}")
    status, report = _check(text_free, capsys, *given)
    assert status == 0 and report["ok"] is True
    assert _rehydrated(text_free, tmp_path / "copy", *given) == twin
    assert _rehydrated(text_free, tmp_path / "re-anchored", *given, "--re-anchor") == twin


def test_bmj_pages_in_utf16_declaring_utf8_recover_with_their_encoding_named(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sample's pages hold non-ASCII characters and declare UTF-8; a UTF-16 copy of them (the declaration
    left as it was) is read in the encoding named, whatever the page declares."""
    corpus = find_corpus("clicr")
    pages = _recoded_folder(corpus.folder / "sample" / "bmj_html", tmp_path / "pages", "utf-16")
    text_free = sample_variant("clicr", "text-free")
    given = (f"--source=bmj_html={pages}", f"--source=umls={corpus.folder / 'sample' / 'umls' / 'META'}")
    status, report = _check(text_free, capsys, *given)
    assert status == 1 and report["unreadable"]["source"] == "bmj_html"
    assert report["unreadable"]["encoding"] == "utf_16" and "byte-order mark" in report["unreadable"]["problem"]
    status, report = _check(text_free, capsys, *given, "--source-encoding=bmj_html=utf-16")
    assert status == 0 and report["encodings"] == {"bmj_html": "utf-16"}
    out = tmp_path / "out"
    assert main(["rehydrate", str(text_free), "--out", str(out), *given, "--source-encoding=bmj_html=utf-16"]) == 0
    assert _files(next(out.glob("*/*"))) == _files(sample_variant("clicr", "rehydrated"))


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (["--check", "--source-encoding=klingon"], "unknown text encoding 'klingon'"),
        (["--check", "--source-encoding=base64"], "unknown text encoding 'base64'"),
        (["--check", "--source-encoding=nowhere=latin-1"], "--source-encoding names nowhere"),
        (["--check", "--source-encoding=latin-1", "--source-encoding=cp1252"], "given twice"),
        (["--check", "--source-encoding=terminology=latin-1"], "reads it in the encoding its format fixes"),
        ([], "--json goes with --check"),
    ],
)
def test_check_json_is_json_on_every_error(
    arguments: list[str], error: str, sample_variant: SampleVariant, capsys: pytest.CaptureFixture[str]
) -> None:
    text_free = sample_variant("snomed_el", "text-free")
    capsys.readouterr()
    assert main(["rehydrate", str(text_free), "--json", *arguments]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and error in report["error"]


def test_a_copy_that_is_not_utf8_names_the_option_when_rehydrate_stops(
    shac: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, text_free = shac
    copy = _recoded_folder(folder, tmp_path / "copy", "latin-1")
    assert main(["rehydrate", str(text_free), "--source", f"shac={copy}", "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "expected UTF-8 text, found byte 0xe9" in err and "--source-encoding" in err and "--check" in err
