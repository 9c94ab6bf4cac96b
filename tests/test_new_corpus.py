"""``clincorp new-corpus``: the plugin it writes, registered as an installed distribution's entry point would be,
releases, text-free releases, validates and views its sample as it stands, and its own test passes; with
``--format brat`` a corpus of corpus.yaml and sample alone does too, and rehydrates and reads through Croissant."""

from __future__ import annotations

import importlib.util
import json
import tomllib
from pathlib import Path

import pytest
from datasets import ClassLabel, load_dataset

from clinical_corpora.builders import plugins
from clinical_corpora.builders.commands.main import main
from tests.conftest import NewCorpus
from tests.test_croissant import assert_record_sets_read_as_loaded

NAME = "demo_notes"


@pytest.fixture
def new_corpus(new_corpus_plugin: NewCorpus) -> Path:
    """The Python skeleton, as ``pip install -e`` would install it; the project folder."""
    return new_corpus_plugin(NAME, "python")


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


def test_a_brat_corpus_declared_in_yaml_alone_releases_validates_rehydrates_views_and_reads_in_croissant(
    new_corpus_plugin: NewCorpus, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = new_corpus_plugin("demo_brat", "brat")
    assert sorted(path.relative_to(project).as_posix() for path in project.rglob("*.py")) == [
        "demo_brat/__init__.py",
        "tests/test_demo_brat.py",
    ]
    assert main(["release", "demo_brat", "--text-free", "--out", str(tmp_path / "releases")]) == 0
    full, text_free = sorted((tmp_path / "releases" / "demo_brat").iterdir())
    capsys.readouterr()
    for release in (full, text_free):
        assert main(["validate", str(release), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["verdict"] == "valid"
        assert main(["view", str(release), "--out", str(tmp_path / "views" / release.name)]) == 0
        assert "3 document pages" in capsys.readouterr().out
        assert_record_sets_read_as_loaded(release, tmp_path / "cache")
    assert main(["rehydrate", str(text_free), "--out", str(tmp_path / "restored")]) == 0
    restored = tmp_path / "restored" / "demo_brat" / full.name
    assert {p.relative_to(restored): p.read_bytes() for p in restored.rglob("*") if p.is_file()} == {
        p.relative_to(full): p.read_bytes() for p in full.rglob("*") if p.is_file()
    }
    notes = load_dataset(str(full), cache_dir=str(tmp_path / "cache"))
    entity = notes["train"].features["entities"].feature
    assert entity["label"] == ClassLabel(names=["problem", "test", "treatment"])
    assert entity["attributes"]["Status"].names == ["ordered", "pending", "started", "given", "continued"]
    note1 = notes["train"][0]
    assert [(e["text"], e["label_name"], e["attributes"]["Status_name"]) for e in note1["entities"]] == [
        ("chest pain", "problem", None),
        ("ECG", "test", "ordered"),
        ("aspirin", "treatment", "given"),
    ]
    assert [(r["label_name"], r["arg1"], r["arg2"]) for r in note1["relations"]] == [("treats", "T3", "T1")]
    (page,) = (tmp_path / "views" / full.name / "docs").glob("train-note1-*.html")
    assert "Status: given" in page.read_text(encoding="utf-8") and "treats" in page.read_text(encoding="utf-8")
