"""The annotator-folder convention (builders.sources.annotators), on the corpora's own layouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinical_corpora.builders.sources.annotators import annotator_folders
from clinical_corpora.core.errors import SourceError

CORPORA = Path(__file__).resolve().parents[1] / "corpora"


def test_one_folder_per_annotator_beside_an_excluded_gold() -> None:
    annotations = CORPORA / "rad_coref" / "sample" / "annotations"
    folders = annotator_folders(annotations, ".ann", exclude={"gold"})
    assert folders == {"annotator_a": annotations / "annotator_a", "annotator_b": annotations / "annotator_b"}
    assert list(annotator_folders(annotations, ".ann")) == ["annotator_a", "annotator_b", "gold"]


def test_one_file_per_annotator_is_named_by_its_stem(tmp_path: Path) -> None:
    for name in ("zoe.csv", "adam.csv", "notes.txt", ".hidden.csv"):
        (tmp_path / name).write_text("note_id,start,end,concept_id\n")
    assert annotator_folders(tmp_path, ".csv") == {"adam": tmp_path / "adam.csv", "zoe": tmp_path / "zoe.csv"}


def test_annotators_given_as_sources_are_checked_and_sorted() -> None:
    sample = CORPORA / "odie_anaphora" / "sample"
    given = {"annotator_b": sample / "annotator_b", "annotator_a": sample / "annotator_a"}
    assert list(annotator_folders(given, ".txt.knowtator.xml")) == ["annotator_a", "annotator_b"]
    with pytest.raises(SourceError) as raised:
        annotator_folders({**given, "annotator_c": sample / "missing"}, ".txt.knowtator.xml")
    assert raised.value.path == str(sample / "missing")
    assert "annotator annotator_c: expected a folder of .txt.knowtator.xml files" in raised.value.message


def test_an_annotator_folder_without_documents_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "annotator_a" / "mimic").mkdir(parents=True)
    (tmp_path / "annotator_a" / "mimic" / "0701.ann").write_text("")
    (tmp_path / "annotator_b" / "mimic").mkdir(parents=True)
    (tmp_path / "annotator_b" / "mimic" / "0701.txt").write_text("")
    with pytest.raises(SourceError) as raised:
        annotator_folders(tmp_path, ".ann")
    assert raised.value.path == str(tmp_path / "annotator_b")
    assert raised.value.message == "annotator annotator_b: expected .ann files laid out as the gold input, found none"


def test_a_root_that_is_not_a_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="expected a folder holding one folder of .ann files"):
        annotator_folders(tmp_path / "absent", ".ann")
    assert annotator_folders(tmp_path, ".ann") == {}
