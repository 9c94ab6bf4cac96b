"""``clincorp new-corpus``: the plugin it writes, registered as an installed distribution's entry point would be,
releases, text-free releases, validates and views its sample as it stands, and its own test passes."""

from __future__ import annotations

import importlib.util
import json
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from clinical_corpora.builders import plugins
from clinical_corpora.builders.commands.main import main
from clinical_corpora.core.registry import corpora

NAME = "demo_notes"


@pytest.fixture
def new_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The skeleton written into ``tmp_path/project``, on sys.path and named by a dist-info's entry point (as
    ``pip install -e`` would make it); the project folder."""
    project = tmp_path / "project"
    assert main(["new-corpus", NAME, "--out", str(project)]) == 0
    dist_info = tmp_path / "site" / f"{NAME}-0.1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {NAME}\nVersion: 0.1.0\n")
    declared = tomllib.loads(project.joinpath("pyproject.toml").read_text())["project"]["entry-points"]
    lines = [f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()) for group, points in declared.items()]
    (dist_info / "entry_points.txt").write_text("".join(lines))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.syspath_prepend(str(project))
    yield project
    corpora.unregister(NAME)
    for module in [m for m in sys.modules if m == NAME or m.startswith(f"{NAME}.")]:
        sys.modules.pop(module)


def test_the_skeleton_releases_text_free_validates_and_views(
    new_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    declared = tomllib.loads(new_corpus.joinpath("pyproject.toml").read_text())["project"]["entry-points"]
    assert declared == {plugins.ENTRY_POINT_GROUP: {NAME: NAME}}
    assert "text: LicensedText" in new_corpus.joinpath(NAME, "records.py").read_text()
    assert main(["release", NAME, "--text-free", "--out", str(tmp_path / "releases")]) == 0
    full, text_free = sorted((tmp_path / "releases" / NAME).iterdir())
    assert (full.name, text_free.name) == (f"{NAME}-0.1.0+sample", f"{NAME}-0.1.0+sample.text-free")
    capsys.readouterr()
    for release in (full, text_free):
        assert main(["validate", str(release), "--json"]) == 0
        checked = json.loads(capsys.readouterr().out)
        assert checked["verdict"] == "valid" and {g["status"] for g in checked["gates"]} <= {"pass", "skipped"}
        assert main(["view", str(release), "--out", str(tmp_path / "views" / release.name)]) == 0
        assert "3 document pages" in capsys.readouterr().out
    notes = sorted(new_corpus.joinpath(NAME, "sample", "notes").rglob("*.txt"))
    assert len(notes) == 3
    page = (tmp_path / "views" / full.name / "index.html").read_text(encoding="utf-8")
    assert all(note.stem in page for note in notes)
    shared = b"".join(path.read_bytes() for path in text_free.rglob("*") if path.is_file())
    assert all(note.read_text().splitlines()[0].encode() not in shared for note in notes)


def test_the_skeleton_s_own_test_passes(new_corpus: Path, tmp_path: Path) -> None:
    path = new_corpus / "tests" / f"test_{NAME}.py"
    spec = importlib.util.spec_from_file_location(f"test_{NAME}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.test_the_sample_releases_validates_and_views(tmp_path / "own")


def test_a_name_that_cannot_be_a_package_or_a_folder_in_use_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["new-corpus", "My-Corpus", "--out", str(tmp_path / "a")]) == 1
    assert "'My-Corpus' cannot name a corpus: expected a lower-case letter" in capsys.readouterr().err
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    assert main(["new-corpus", NAME, "--out", str(tmp_path / "used")]) == 1
    assert "expected an absent or empty folder" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "used").iterdir()] == ["notes.txt"] and not (tmp_path / "a").exists()
