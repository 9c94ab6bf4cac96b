"""End-to-end release tests on the tiny corpus: layout, loading, determinism, gates, immutability."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from datasets import ClassLabel, load_dataset

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.base import BuildContext
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.validate.run import check_release
from clinical_corpora.core.errors import GateError, ReleaseError, SourceError
from clinical_corpora.core.manifest import load_manifest


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def edit_yaml(corpus: Path, change) -> None:
    path = corpus / "corpus.yaml"
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data))


def test_release_layout_and_typed_loading(tiny_corpus: Path, tmp_path: Path) -> None:
    outcome = run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out"))
    release = tmp_path / "out" / "tiny" / "tiny-1.0.0+sample"
    assert outcome.status == "released" and outcome.folder == release
    assert sorted(tree(release)) == [
        "README.md",
        "croissant.json",
        "data/notes/test-00000-of-00001.parquet",
        "data/notes/train-00000-of-00001.parquet",
        "inputs.jsonl",
        "manifest.json",
        "validation.json",
    ]
    dataset = load_dataset(str(release), "notes")
    assert {split: len(rows) for split, rows in dataset.items()} == {"train": 2, "test": 1}
    label = dataset["train"].features["spans"].feature["label"]
    assert isinstance(label, ClassLabel) and label.names == ["problem", "test", "treatment"]
    assert dataset["train"].features["spans"].feature["start"].dtype == "int32"
    first = dataset["train"][0]
    assert [first["text"][s["start"] : s["end"]] for s in first["spans"]] == [s["text"] for s in first["spans"]]
    assert label.int2str(first["spans"][3]["label"]) == "treatment"


def test_manifest_counts_inputs_and_no_absolute_paths(tiny_corpus: Path, tmp_path: Path) -> None:
    run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out"))
    release = tmp_path / "out" / "tiny" / "tiny-1.0.0+sample"
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["counts"] == {"read": 3, "written": 3, "rejected": 0, "rejected_annotations": 0}
    inputs = [json.loads(line) for line in (release / "inputs.jsonl").read_text().splitlines()]
    assert {(i["source"], i["file"]) for i in inputs} == {
        ("notes", "notes.tsv"),
        ("spans", "spans.tsv"),
        ("second_annotator", "spans.tsv"),
    }
    assert sorted(manifest["inputs"]) == ["notes", "second_annotator", "spans"]
    assert manifest["inputs"]["notes"]["files"] == 1 and manifest["inputs"]["notes"]["sample"] is True
    assert {o["file"]: o.get("rows") for o in manifest["outputs"]}["data/notes/train-00000-of-00001.parquet"] == 2
    for name in ("manifest.json", "validation.json", "README.md"):
        assert str(tmp_path) not in (release / name).read_text()
    validation = json.loads((release / "validation.json").read_text())
    assert validation["agreement"]["span_f1"] == pytest.approx(2 * 5 / 11)
    card = (release / "README.md").read_text()
    assert "config_name: notes" in card and "class_label" in card and "| agreement.span_f1 | pass |" in card


def test_same_version_again_is_noop_and_changed_bytes_need_a_bump(tiny_corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    real = shutil.copytree(tiny_corpus / "sample", tmp_path / "real")  # real inputs: outside the corpus's sample
    given = {
        "notes": real / "notes.tsv",
        "spans": real / "spans.tsv",
        "second_annotator": real / "annotator_b/spans.tsv",
    }
    run(ReleaseRequest(load_manifest(tiny_corpus), out, sources=given))
    assert run(ReleaseRequest(load_manifest(tiny_corpus), out, sources=given)).status == "unchanged"
    notes = real / "notes.tsv"
    notes.write_text(notes.read_text().replace("No complaints.", "No complaints today."))
    with pytest.raises(ReleaseError, match="bump the corpus version"):
        run(ReleaseRequest(load_manifest(tiny_corpus), out, sources=given))
    assert "today" not in (load_dataset(str(out / "tiny" / "tiny-1.0.0"), "notes")["test"][0]["text"])


def test_failed_agreement_gate_leaves_no_release(tiny_corpus: Path, tmp_path: Path) -> None:
    (tiny_corpus / "sample" / "annotator_b" / "spans.tsv").write_text(
        "note_id\tstart\tend\tlabel\nn1\t0\t10\tproblem\n"
    )
    with pytest.raises(GateError, match=r"agreement.span_f1 FAILED: observed 0.285714, expected >= 0.8"):
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out"))
    assert not (tmp_path / "out").exists()  # no empty <out>/<corpus>/ folder either


def test_failed_expectation_names_observed_value(tiny_corpus: Path, tmp_path: Path) -> None:
    edit_yaml(
        tiny_corpus,
        lambda d: d["gates"]["expectations"].append(
            {
                "table": "notes.spans",
                "expectation": "expect_column_values_to_be_in_set",
                "column": "label",
                "value_set": ["problem", "test"],
            }
        ),
    )
    with pytest.raises(GateError) as failure:
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out"))
    assert "expectations FAILED: observed 3/4 passed" in str(failure.value)
    assert "'unexpected_count': 1" in str(failure.value)
    assert not (tmp_path / "out" / "tiny" / "tiny-1.0.0+sample").exists()


def bad_span(corpus: Path) -> None:
    spans = corpus / "sample" / "spans.tsv"
    spans.write_text(spans.read_text() + "n3\t3\t80\tproblem\n")


def test_bad_record_fails_the_build_naming_file_and_line(tiny_corpus: Path, tmp_path: Path) -> None:
    bad_span(tiny_corpus)
    with pytest.raises(
        SourceError, match=r"notes.tsv:4: record does not match its schema: .*span 3-80 ends past the end of the text"
    ):
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out"))


def test_quarantine_respects_max_rejects(tiny_corpus: Path, tmp_path: Path) -> None:
    bad_span(tiny_corpus)
    with pytest.raises(GateError, match="max_rejects FAILED: observed 1, expected <= 0"):
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out", on_error="quarantine"))
    kept = tmp_path / "out" / "tiny" / "tiny-1.0.0+sample.rejects.jsonl"
    assert json.loads(kept.read_text())["where"] == "notes/notes.tsv:4"
    edit_yaml(tiny_corpus, lambda d: d["gates"].update(max_rejects=1))
    outcome = run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out", on_error="quarantine"))
    assert outcome.manifest.counts.model_dump() == {"read": 3, "written": 2, "rejected": 1, "rejected_annotations": 0}
    assert "rejects.jsonl" in {o.file for o in outcome.manifest.outputs}


def test_validate_catches_tampering(tiny_corpus: Path, tmp_path: Path) -> None:
    release = run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out")).folder
    assert all(result.success for result in check_release(release, corpus=tiny_corpus))
    shard = release / "data" / "notes" / "test-00000-of-00001.parquet"
    shard.write_bytes(shard.read_bytes()[:-10])
    (release / "stray.txt").write_text("x")
    (files,) = check_release(release, corpus=tiny_corpus)
    assert not files.success
    assert [d["problem"] for d in files.details] == [
        "stray.txt: not listed in manifest.json",
        "data/notes/test-00000-of-00001.parquet: sha256 differs from manifest.json",
    ]


def test_source_override_and_missing_source(tiny_corpus: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.tsv"
    other.write_text("note_id\tsplit\ttext\nz1\ttrain\tFever.\n")
    empty_spans = tmp_path / "spans.tsv"
    empty_spans.write_text("note_id\tstart\tend\tlabel\n")
    manifest = load_manifest(tiny_corpus)
    outcome = run(
        ReleaseRequest(
            manifest, tmp_path / "out", sources={"notes": other, "spans": empty_spans, "second_annotator": empty_spans}
        )
    )
    assert outcome.manifest.counts.written == 1
    with pytest.raises(SourceError, match="source 'notes' needs a file here"):
        run(ReleaseRequest(manifest, tmp_path / "out2", sources={"notes": tmp_path / "missing.tsv"}))


def test_cli_release_and_list(tiny_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", str(tiny_corpus), "--out", str(tmp_path / "out")]) == 0
    assert "tiny 1.0.0+sample: released" in capsys.readouterr().out
    assert main(["release", str(tiny_corpus), "--out", str(tmp_path / "out"), "--source", "nope=x"]) == 1
    assert "has no source nope" in capsys.readouterr().err
    assert main(["validate", str(tmp_path / "out" / "tiny" / "tiny-1.0.0+sample"), "--corpus", str(tiny_corpus)]) == 0


def test_sources_without_default_and_replaced_sources_are_not_read(tiny_corpus: Path, tmp_path: Path) -> None:
    edit_yaml(
        tiny_corpus,
        lambda d: d["sources"].update(
            extra={"kind": "file", "required": False, "replaces": ["second_annotator"], "description": "x"}
        ),
    )
    manifest = load_manifest(tiny_corpus)
    assert resolve_sources(manifest, {})["extra"] is None
    given = resolve_sources(manifest, {"extra": tiny_corpus / "sample" / "spans.tsv"}, samples=["notes", "spans"])
    assert given["extra"] == tiny_corpus / "sample" / "spans.tsv" and given["second_annotator"] is None
    outcome = run(
        ReleaseRequest(
            manifest,
            tmp_path / "out",
            sources={"extra": tiny_corpus / "sample" / "spans.tsv"},
            samples=["notes", "spans"],
        )
    )
    assert [g.observed for g in outcome.gates if g.gate == "agreement.span_f1"] == [
        "not run: no annotator data in this build"
    ]
    assert "second_annotator" not in (outcome.manifest.inputs or {})


def test_optional_sample_sources_are_not_mixed_with_given_inputs(tiny_corpus: Path) -> None:
    manifest = load_manifest(tiny_corpus)
    assert resolve_sources(manifest, {})["second_annotator"] is not None
    given = resolve_sources(manifest, {"notes": tiny_corpus / "sample" / "notes.tsv"}, samples=["spans"])
    assert given["second_annotator"] is None and given["spans"] == tiny_corpus / "sample" / "spans.tsv"


def test_build_overwrites_and_keeps_a_failing_build_for_inspection(tiny_corpus: Path, tmp_path: Path) -> None:
    manifest = load_manifest(tiny_corpus)
    assert run(ReleaseRequest(manifest, tmp_path / "scratch", mode="build")).status == "built"
    (tiny_corpus / "sample" / "annotator_b" / "spans.tsv").write_text("note_id\tstart\tend\tlabel\n")
    with pytest.raises(GateError, match="agreement.span_f1 FAILED: observed 0.0"):
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "scratch", mode="build"))
    validation = json.loads((tmp_path / "scratch" / "tiny" / "tiny-1.0.0+sample" / "validation.json").read_text())
    assert validation["agreement"] == {"span_f1": 0.0}


def test_a_broken_annotation_is_quarantined_alone(tiny_corpus: Path) -> None:
    manifest = load_manifest(tiny_corpus)
    sources = resolve_sources(manifest, {})
    strict = BuildContext(manifest, sources)
    with pytest.raises(SourceError, match="offset 99"), strict.annotation("spans.tsv:4"):
        raise SourceError("spans.tsv", "offset 99 is past the end of the note", line=4)
    lenient = BuildContext(manifest, sources, on_error="quarantine")
    kept = []
    with lenient.record("notes.tsv:2"):
        for line in (2, 3):
            with lenient.annotation(f"spans.tsv:{line}"):
                if line == 3:
                    raise SourceError("spans.tsv", "offset 99 is past the end of the note", line=line)
                kept.append(line)
    assert kept == [2] and lenient.read == 1
    assert (lenient.rejected("record"), lenient.rejected("annotation")) == (0, 1)
    assert lenient.rejects[0].where == "spans.tsv:3" and lenient.rejects[0].kind == "annotation"
