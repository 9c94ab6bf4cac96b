"""Honest releases: real or sample (never a mix), sample releases tagged ``+sample``, umask permissions,
failures that name their cause, progress totals and stage lines, a small manifest with inputs.jsonl."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator, Sequence
from hashlib import sha256
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.base import BuildContext, Row, load_builder_class
from clinical_corpora.builders.plugins import all_corpora, find_corpus
from clinical_corpora.builders.release import pipeline, rows
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.release.inputs_file import read_inputs_file
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.sources.line_chunks import LineChunk
from clinical_corpora.builders.validate.run import check_release
from clinical_corpora.core.errors import ClincorpError, GateError, ReleaseError, SourceError
from clinical_corpora.core.manifest import load_manifest
from tests.conftest import SampleRelease
from tests.test_pipeline import edit_yaml
from tests.tiny_corpus.builder import TinyBuilder

CORPORA = sorted(corpus.name for corpus in all_corpora())


class CountingTinyBuilder(TinyBuilder):
    """The tiny builder with a cheap document count: one note a line of notes.tsv after the header."""

    def count(self, ctx: BuildContext) -> int:
        return len(ctx.source("notes").read_text(encoding="utf-8").splitlines()) - 1


def real_inputs(tiny: Path, folder: Path) -> dict[str, Path]:
    """Copies of the tiny sample given as real inputs, the notes changed so their bytes differ."""
    folder.mkdir()
    notes = folder / "notes.tsv"
    notes.write_text((tiny / "sample" / "notes.tsv").read_text().replace("No complaints.", "No complaints now."))
    shutil.copyfile(tiny / "sample" / "spans.tsv", folder / "spans.tsv")
    shutil.copyfile(tiny / "sample" / "annotator_b" / "spans.tsv", folder / "second.tsv")
    return {"notes": notes, "spans": folder / "spans.tsv", "second_annotator": folder / "second.tsv"}


def card_body(release: Path) -> str:
    """README.md after its YAML front matter."""
    return (release / "README.md").read_text(encoding="utf-8").split("---\n", 2)[2].lstrip("\n")


# --- 1. real or sample, never a silent mix --------------------------------------------------------


def test_a_given_source_without_the_other_required_ones_is_refused(tiny_corpus: Path, tmp_path: Path) -> None:
    given = real_inputs(tiny_corpus, tmp_path / "real")
    with pytest.raises(ClincorpError) as refused:
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out", sources={"notes": given["notes"]}))
    message = str(refused.value)
    assert "real inputs given for notes but not for spans" in message and "--sample NAME" in message
    assert "spans: spans.tsv (note_id, start, end, label) of annotator A; invented." in message
    assert not (tmp_path / "out").exists()


def test_clicr_with_real_pages_and_the_invented_umls_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pages = find_corpus("clicr").folder / "sample" / "bmj_html"
    assert main(["release", "clicr", "--out", str(tmp_path / "out"), "--source", f"bmj_html={pages}"]) == 1
    error = capsys.readouterr().err
    assert "not for umls" in error and "MRCONSO.RRF" in error and "umlsknowledgesources" in error
    assert "Traceback" not in error and not (tmp_path / "out").exists()


def test_a_named_sample_source_makes_a_sample_release_recorded_per_source(tiny_corpus: Path, tmp_path: Path) -> None:
    given = real_inputs(tiny_corpus, tmp_path / "real")
    outcome = run(
        ReleaseRequest(
            load_manifest(tiny_corpus), tmp_path / "out", sources={"notes": given["notes"]}, samples=["spans"]
        )
    )
    assert outcome.folder == tmp_path / "out" / "tiny" / "tiny-1.0.0+sample"
    manifest = outcome.manifest
    assert manifest.version == "1.0.0+sample" and manifest.sample is True
    assert {name: entry.sample for name, entry in (manifest.inputs or {}).items()} == {"notes": False, "spans": True}
    provenance = card_body(outcome.folder).split("## Provenance")[1]
    assert "| notes | real | 1 |" in provenance and "| spans | invented sample | 1 |" in provenance


def test_every_source_given_is_a_real_release_without_a_banner(tiny_corpus: Path, tmp_path: Path) -> None:
    outcome = run(
        ReleaseRequest(
            load_manifest(tiny_corpus), tmp_path / "out", sources=real_inputs(tiny_corpus, tmp_path / "real")
        )
    )
    assert outcome.folder == tmp_path / "out" / "tiny" / "tiny-1.0.0"
    assert outcome.manifest.version == "1.0.0" and outcome.manifest.sample is False
    assert not any(entry.sample for entry in (outcome.manifest.inputs or {}).values())
    body = card_body(outcome.folder)
    assert "invented" not in body.split("## Configs")[0].replace(load_manifest(tiny_corpus).description.strip(), "")
    assert body.startswith("## Tiny span corpus (pipeline test) (tiny 1.0.0)")


def test_a_source_given_from_inside_the_corpus_sample_is_still_the_invented_sample(
    tiny_corpus: Path, tmp_path: Path
) -> None:
    sample = tiny_corpus / "sample"
    given = {"notes": sample / "notes.tsv", "spans": sample / "spans.tsv"}
    shutil.copyfile(sample / "annotator_b" / "spans.tsv", tmp_path / "b.tsv")
    outcome = run(
        ReleaseRequest(
            load_manifest(tiny_corpus), tmp_path / "out", sources={**given, "second_annotator": tmp_path / "b.tsv"}
        )
    )
    assert outcome.folder.name == "tiny-1.0.0+sample"
    assert {name: entry.sample for name, entry in (outcome.manifest.inputs or {}).items()} == {
        "notes": True,
        "spans": True,
        "second_annotator": False,
    }


# --- 3. sample and real releases of one version do not collide ------------------------------------


def test_sample_and_real_release_of_one_version_live_side_by_side(tiny_corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "releases"
    sample = run(ReleaseRequest(load_manifest(tiny_corpus), out))
    real = run(ReleaseRequest(load_manifest(tiny_corpus), out, sources=real_inputs(tiny_corpus, tmp_path / "real")))
    assert (sample.status, real.status) == ("released", "released")
    assert sorted(p.name for p in (out / "tiny").iterdir()) == ["tiny-1.0.0", "tiny-1.0.0+sample"]
    first_lines = card_body(sample.folder).splitlines()[0]
    assert first_lines.startswith("> **Sample release: the data is invented.**")
    assert "notes, spans, second_annotator" in first_lines
    assert "## Tiny span corpus (pipeline test) (tiny 1.0.0+sample)" in card_body(sample.folder)
    assert 'load_dataset("path/to/tiny/tiny-1.0.0+sample")  # the default config, notes' in card_body(sample.folder)


def test_a_changed_sample_release_is_rebuilt_by_removing_it_not_by_a_version_bump(
    tiny_corpus: Path, tmp_path: Path
) -> None:
    run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out"))
    notes = tiny_corpus / "sample" / "notes.tsv"
    notes.write_text(notes.read_text().replace("No complaints.", "No complaints today."))
    with pytest.raises(
        ReleaseError, match=r"1\.0\.0\+sample already exists .* sample release of invented data, so remove"
    ):
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out"))


# --- 4. permissions follow the umask ----------------------------------------------------------------


@pytest.fixture
def umask() -> Iterator[Any]:
    previous = os.umask(0o022)
    try:
        yield os.umask
    finally:
        os.umask(previous)


@pytest.mark.parametrize("mask, folders, files", [(0o022, 0o755, 0o644), (0o027, 0o750, 0o640)])
def test_release_permissions_follow_the_umask(
    tiny_corpus: Path, tmp_path: Path, umask: Any, mask: int, folders: int, files: int
) -> None:
    umask(mask)
    release = run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out")).folder
    paths = [release.parent, release, *release.rglob("*")]
    modes = {p.relative_to(tmp_path).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in paths}
    assert {name: mode for name, mode in modes.items() if (tmp_path / name).is_dir() and mode != folders} == {}
    assert {name: mode for name, mode in modes.items() if (tmp_path / name).is_file() and mode != files} == {}


# --- 6. failures lead to their cause ----------------------------------------------------------------


def test_an_input_with_no_documents_says_so_naming_the_pattern(tmp_path: Path) -> None:
    (tmp_path / "pages").mkdir()
    with pytest.raises(ClincorpError) as empty:
        run(
            ReleaseRequest(
                find_corpus("clicr"), tmp_path / "out", sources={"bmj_html": tmp_path / "pages"}, samples=["umls"]
            )
        )
    message = str(empty.value)
    assert message.startswith("clicr: no documents in the input")
    assert f"source 'bmj_html' at {tmp_path / 'pages'}: one BMJ Case Reports page per case, <case id>.html" in message
    assert not (tmp_path / "out").exists()


def test_a_builder_without_a_count_reports_no_documents_after_reading(tiny_corpus: Path, tmp_path: Path) -> None:
    notes = tiny_corpus / "sample" / "notes.tsv"
    notes.write_text(notes.read_text().splitlines()[0] + "\n")
    with pytest.raises(ClincorpError, match=r"tiny: no documents in the input; expected\n  source 'notes' at .*notes"):
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out", mode="build"))


def test_a_failed_build_says_where_it_is_kept(tiny_corpus: Path, tmp_path: Path) -> None:
    (tiny_corpus / "sample" / "annotator_b" / "spans.tsv").write_text("note_id\tstart\tend\tlabel\n")
    with pytest.raises(GateError) as failed:
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "scratch", mode="build"))
    kept = tmp_path / "scratch" / "tiny" / "tiny-1.0.0+sample"
    assert f"the failed build is kept for inspection at {kept}" in str(failed.value)
    assert (kept / "validation.json").is_file()


def test_releasing_several_corpora_tries_each_and_prints_a_summary(
    tiny_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(tiny_corpus, broken)
    edit_yaml(broken, lambda d: d.update(name="broken"))
    (broken / "sample" / "annotator_b" / "spans.tsv").write_text("note_id\tstart\tend\tlabel\nn1\t0\t10\tproblem\n")
    out = tmp_path / "out"
    assert main(["release", str(broken), str(tiny_corpus), "--out", str(out)]) == 1
    printed = capsys.readouterr()
    assert "error: broken: gate agreement.span_f1 FAILED" in printed.err
    table = printed.out.splitlines()[-3:]
    assert table[0].split() == ["corpus", "version", "status", "folder", "or", "error"]
    assert table[1].split()[:3] == ["broken", "1.0.0", "FAILED"] and "agreement.span_f1 FAILED" in table[1]
    assert table[2].split() == ["tiny", "1.0.0+sample", "released", str(out / "tiny" / "tiny-1.0.0+sample")]
    assert not (out / "broken").exists()


def test_max_rejects_overrides_the_gate_for_one_run_and_is_recorded(
    tiny_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans = tiny_corpus / "sample" / "spans.tsv"
    spans.write_text(spans.read_text() + "n3\t3\t80\tproblem\n")
    command = ["release", str(tiny_corpus), "--out", str(tmp_path / "out"), "--on-error", "quarantine"]
    assert main(command) == 1
    assert "max_rejects FAILED: observed 1, expected <= 0" in capsys.readouterr().err
    assert main([*command, "--max-rejects", "1"]) == 0
    release = tmp_path / "out" / "tiny" / "tiny-1.0.0+sample"
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["overrides"] == {"max_rejects": 1} and manifest["counts"]["rejected"] == 1
    assert "overridden for this run with --max-rejects 1 (corpus.yaml: 0)" in card_body(release)
    with pytest.raises(SystemExit):
        main([*command, "--max-rejects", "-1"])


# --- 7. progress totals, stage lines, a small manifest ---------------------------------------------


def test_progress_has_the_documents_counted_first_and_stages_are_announced(
    tiny_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    edit_yaml(tiny_corpus, lambda d: d.update(builder=f"{__name__}:CountingTinyBuilder"))
    bars: list[Any] = []

    class Recorder:
        def __init__(self, **kwargs: Any) -> None:
            self.total, self.n, self.unit = kwargs.get("total"), 0, kwargs.get("unit")
            bars.append(self)

        def update(self, n: int) -> None:
            self.n += n

        def close(self) -> None:
            pass

    monkeypatch.setattr(rows, "tqdm", Recorder)
    run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out", workers=2))
    [bar] = bars
    assert (bar.total, bar.n, bar.unit) == (3, 3, " documents")
    stages = [line for line in capsys.readouterr().err.splitlines() if line.startswith("tiny: ")]
    assert stages == [
        "tiny: hashing the input files",
        "tiny: building the records in 2 worker processes",
        "tiny: checking 3 expectations",
        "tiny: measuring agreement",
        "tiny: writing the card",
        "tiny: hashing the release files",
        "tiny: running the PHI gate over every file of the release",
        "tiny: hashing the release files",
    ]


@pytest.mark.parametrize("name", CORPORA)
def test_each_builder_counts_the_documents_it_reads(name: str, sample_release: SampleRelease) -> None:
    manifest = find_corpus(name)
    ctx = BuildContext(manifest, resolve_sources(manifest, {}))
    assert load_builder_class(manifest.builder)().count(ctx) == sample_release(name).manifest.counts.read


def test_manifest_summarises_each_source_and_inputs_jsonl_lists_the_files(
    tiny_corpus: Path, tmp_path: Path, sample_release: SampleRelease
) -> None:
    release = sample_release("sdoh").folder
    manifest = json.loads((release / "manifest.json").read_text())
    listed = [json.loads(line) for line in (release / "inputs.jsonl").read_text().splitlines()]
    assert set(manifest["inputs"]) == {"shac", "shac_double"}
    for source, entry in manifest["inputs"].items():
        files = [item for item in listed if item["source"] == source]
        assert set(entry) == {"sample", "files", "bytes", "sha256"}
        assert (entry["files"], entry["bytes"]) == (len(files), sum(item["bytes"] for item in files)) != (0, 0)
    assert "inputs.jsonl" in {output["file"] for output in manifest["outputs"]}
    assert len(json.dumps(manifest["inputs"])) < 500 < len((release / "inputs.jsonl").read_text())


def test_validate_checks_inputs_jsonl_against_the_manifest(tmp_path: Path, sample_release: SampleRelease) -> None:
    release = tmp_path / "release"
    shutil.copytree(sample_release("sdoh").folder, release)
    inputs = release / "inputs.jsonl"
    lines = inputs.read_text().splitlines()
    first = json.loads(lines[0])
    lines[0] = json.dumps({**first, "sha256": "0" * 64})
    inputs.write_text("\n".join(lines) + "\n")
    manifest_path = release / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for output in manifest["outputs"]:  # a consistent outputs hash: only the aggregate can tell
        if output["file"] == "inputs.jsonl":
            output["sha256"] = pipeline.sha256_file(inputs)
    manifest_path.write_text(json.dumps(manifest))
    [files] = [gate for gate in check_release(release) if gate.gate == "manifest"]
    assert not files.success
    [problem] = [d["problem"] for d in files.details]
    assert problem.startswith(f"inputs.jsonl: source {first['source']!r} sha256 is ")
    assert problem.endswith(f", manifest.json says {manifest['inputs'][first['source']]['sha256']}")


def _two_on_one_line(first: dict[str, Any], second: dict[str, Any]) -> list[str]:
    return [json.dumps(first) + json.dumps(second)]


def _without_bytes(first: dict[str, Any], second: dict[str, Any]) -> list[str]:
    return [json.dumps({key: value for key, value in first.items() if key != "bytes"}), json.dumps(second)]


def _bytes_as_text(first: dict[str, Any], second: dict[str, Any]) -> list[str]:
    return [json.dumps({**first, "bytes": str(first["bytes"])}), json.dumps(second)]


def _an_array(first: dict[str, Any], second: dict[str, Any]) -> list[str]:
    return [json.dumps(list(first.values())), json.dumps(second)]


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (_two_on_one_line, "JSON objects on"),
        (_without_bytes, "lacks bytes"),
        (_bytes_as_text, "changed from number to string"),
        (_an_array, "changed from object to array"),
    ],
)
def test_validate_refuses_an_inputs_jsonl_not_made_of_one_object_per_line(
    tmp_path: Path, sample_release: SampleRelease, damage: Any, problem: str
) -> None:
    release = tmp_path / "release"
    shutil.copytree(sample_release("sdoh").folder, release)
    inputs = release / "inputs.jsonl"
    first, second, *rest = inputs.read_text().splitlines()
    inputs.write_text("\n".join([*damage(json.loads(first), json.loads(second)), *rest]) + "\n")
    manifest_path = release / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for output in manifest["outputs"]:
        if output["file"] == "inputs.jsonl":
            output["sha256"] = pipeline.sha256_file(inputs)
    manifest_path.write_text(json.dumps(manifest))
    [detail] = check_release(release)[0].details
    assert detail["problem"].startswith("inputs.jsonl: not one JSON object with source, file, sha256 and bytes")
    assert problem in detail["problem"]


def test_inputs_jsonl_blank_lines_are_read_and_other_keys_refused(
    tmp_path: Path, sample_release: SampleRelease
) -> None:
    """inputs.jsonl holds what it declares: a key beside source, file, sha256 and bytes could carry anything."""
    release = tmp_path / "release"
    shutil.copytree(sample_release("sdoh").folder, release)
    written = (release / "inputs.jsonl").read_text().splitlines()
    copy = tmp_path / "inputs.jsonl"
    copy.write_text("\n \n".join(line + "\r" for line in written) + "\n\n")
    assert read_inputs_file(copy).to_pylist() == [json.loads(line) for line in written]
    copy.write_text("".join(json.dumps({**json.loads(line), "note": [1, {"a": 2}]}) + "\n" for line in written))
    with pytest.raises(pa.ArrowInvalid, match="unexpected field"):
        read_inputs_file(copy)


class RewritingTinyBuilder(TinyBuilder):
    """The tiny builder appending a span to its spans file once it has read it: an input changed mid-build."""

    def generate_shard(self, ctx: BuildContext, chunks: Sequence[LineChunk] = ()) -> Iterator[Row]:
        yield from super().generate_shard(ctx, chunks)
        with ctx.source("spans").open("a", encoding="utf-8") as spans:
            spans.write("n9\t0\t1\tproblem\n")


@pytest.mark.parametrize("workers", [1, 2])
def test_an_input_rewritten_during_the_build_fails_the_release_naming_it(
    tiny_corpus: Path, tmp_path: Path, workers: int
) -> None:
    edit_yaml(tiny_corpus, lambda d: d.update(builder=f"{__name__}:RewritingTinyBuilder"))
    with pytest.raises(SourceError, match="the input file changed while the release was built") as raised:
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out", workers=workers))
    assert raised.value.path == str(tiny_corpus / "sample" / "spans.tsv")
    assert not (tmp_path / "out").exists()


def test_inputs_jsonl_holds_each_input_files_sha256_and_size(sample_release: SampleRelease) -> None:
    outcome = sample_release("sdoh")
    manifest = find_corpus("sdoh")
    sources = resolve_sources(manifest, {})
    listed = [json.loads(line) for line in (outcome.folder / "inputs.jsonl").read_text().splitlines()]
    assert listed == [
        {"source": name, "file": path.relative_to(root).as_posix(), "sha256": sha256(path.read_bytes()).hexdigest(),
         "bytes": path.stat().st_size}
        for name, root in sources.items() if root is not None
        for path in sorted((p for p in root.rglob("*") if p.is_file()), key=lambda p: p.relative_to(root).parts)
    ]  # fmt: skip


def test_a_real_input_with_another_sha256_than_corpus_yaml_expects_fails_naming_it(
    tiny_corpus: Path, tmp_path: Path
) -> None:
    sources = real_inputs(tiny_corpus, tmp_path / "real")
    edit_yaml(tiny_corpus, lambda d: d["sources"]["spans"].update(sha256={"spans.tsv": "0" * 64}))
    with pytest.raises(SourceError, match=r"sha256 is [0-9a-f]{64}, expected 0{64} for source 'spans'") as raised:
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out", sources=sources))
    assert raised.value.path == str(sources["spans"])
