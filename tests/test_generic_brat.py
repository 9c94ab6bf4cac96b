"""The generic BRAT builder quarantines each annotation outside a corpus's ``brat:`` declaration, or broken, on
its own (file, line, reason), and releases the rest of its note; a declaration that does not fit its corpus is
refused naming corpus.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.core.manifest import load_manifest
from tests.conftest import NewCorpus

BROKEN_LINES = (
    "T4\tdrug 0 7\tPatient",  # line 7: an undeclared entity type
    "T5\tproblem 60 999\tx",  # line 8: a span out of the text
    "R2\ttreats Arg1:T3 Arg2:T9",  # line 9: a relation to a missing entity
    "A3\tStatus T1 unknown",  # line 10: a value outside the attribute's closed set
    "A4\tStatus T4 given",  # line 11: on the undeclared entity, left out with it
    "R3\tcauses Arg1:T1 Arg2:T2",  # line 12: an undeclared relation type
    "E1\tproblem:T1",  # line 13: an event, which the declaration has no place for
)


@pytest.fixture
def broken_corpus(new_corpus_plugin: NewCorpus) -> Path:
    """The brat skeleton with broken lines added to note1 and a note outside every split's folder."""
    sample = new_corpus_plugin("demo_broken", "brat") / "demo_broken" / "sample" / "notes"
    with (sample / "train" / "note1.ann").open("a", encoding="utf-8") as ann:
        ann.write("".join(f"{line}\n" for line in BROKEN_LINES))
    (sample / "other").mkdir()
    (sample / "other" / "note4.txt").write_text("Seen in clinic.\n")
    (sample / "other" / "note4.ann").write_text("")
    return sample


def test_each_broken_or_undeclared_annotation_is_quarantined_and_the_rest_of_its_note_released(
    broken_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["release", "demo_broken", "--out", str(tmp_path / "failed")]) == 1
    expected = "notes/other/note4.ann: expected the note inside a split's folder: train/ (train), test/ (test)"
    assert expected in capsys.readouterr().err and not (tmp_path / "failed" / "demo_broken").exists()
    argv = [
        "release",
        "demo_broken",
        "--on-error",
        "quarantine",
        "--max-rejects",
        "10",
        "--out",
        str(tmp_path / "releases"),
    ]
    assert main(argv) == 0
    (release,) = (tmp_path / "releases" / "demo_broken").iterdir()
    rejects = [json.loads(line) for line in (release / "rejects.jsonl").read_text().splitlines()]
    assert sorted((reject["where"], reject["reason"].split(":")[0]) for reject in rejects) == [
        ("notes/other/note4.ann", "expected the note inside a split's folder"),
        ("notes/train/note1.ann:10", "A3 gives Status the value unknown"),
        ("notes/train/note1.ann:12", "R3 has relation type causes, which corpus.yaml does not declare (declared"),
        ("notes/train/note1.ann:13", "E1 is an event (problem)"),
        ("notes/train/note1.ann:7", "T4 has entity type drug, which corpus.yaml does not declare (declared"),
        ("notes/train/note1.ann:8", "T5 offsets 60-999 run past the end of the text (length 69)"),
        ("notes/train/note1.ann:9", "R2 refers to T9, which is not a text-bound or event in this file"),
    ]
    assert [reject["kind"] for reject in rejects].count("record") == 1
    assert next(r["reason"] for r in rejects if r["where"].endswith(":7")).endswith("depending on it: A4 (line 11)")
    (train,) = (release / "data" / "notes").glob("train-*.parquet")
    note1 = pq.read_table(train).to_pylist()[0]
    assert [(e["id"], e["attributes"]["Status_name"]) for e in note1["entities"]] == [
        ("T1", None),
        ("T2", "ordered"),
        ("T3", "given"),
    ]
    assert [relation["id"] for relation in note1["relations"]] == ["R1"]
    counts = json.loads((release / "manifest.json").read_text())["counts"]
    assert (counts["read"], counts["written"], counts["rejected"]) == (4, 3, 1)


@pytest.mark.parametrize(
    ("declaration", "refusal"),
    [
        ("  splits: {dev: dev}", "brat.splits names splits config 'notes' does not declare: ['dev']"),
        ("  splits: {train: ../elsewhere}", "folder '../elsewhere' must lie inside the source"),
        ("  attributes: {label_name: binary}", "attribute 'label_name' cannot name a field of the release"),
        ("  attributes: {Status: []}", "expected its values, or binary for an attribute with none"),
        ("  entities: [problem, problem]", "types named twice: ['problem']"),
    ],
)
def test_a_declaration_that_does_not_fit_its_corpus_is_refused_naming_corpus_yaml(
    new_corpus_plugin: NewCorpus, declaration: str, refusal: str
) -> None:
    path = new_corpus_plugin("demo_declared", "brat") / "demo_declared" / "corpus.yaml"
    text = path.read_text(encoding="utf-8")
    key = declaration.split(":")[0]
    replaced = (f"{key}:", "    Status") if key == "  attributes" else (f"{key}:",)
    lines = [line for line in text.splitlines() if not line.startswith(replaced)]
    path.write_text("\n".join(lines) + f"\n{declaration}\n", encoding="utf-8")
    with pytest.raises(SourceError, match="not a valid corpus manifest") as refused:
        load_manifest(path)
    assert refused.value.path == str(path) and refusal in str(refused.value)


def test_the_generic_builder_without_a_declaration_says_what_corpus_yaml_lacks(new_corpus_plugin: NewCorpus) -> None:
    from clinical_corpora.builders.contract.base import make_builder

    path = new_corpus_plugin("demo_undeclared", "brat") / "demo_undeclared" / "corpus.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: text.index("# The generic BRAT builder")], encoding="utf-8")
    with pytest.raises(ClincorpError, match="names the generic BRAT builder but declares no brat: section"):
        make_builder(load_manifest(path))
