"""Shards built in worker processes: same bytes, rejects, counts and errors as one process; duplicate ids
found on the written parquet; row groups cut at fixed counts; files cut into shards of whole lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasets import Features, Value

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.base import BuildContext
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release import pipeline
from clinical_corpora.builders.release import workers as workers_module
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.release.workers import document_groups
from clinical_corpora.builders.release.writer import ROWS_PER_ROW_GROUP, SplitWriter, rows_per_row_group
from clinical_corpora.builders.sources.line_chunks import chunk_lines, line_chunks
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.core.manifest import load_manifest
from clinical_corpora.schemas.bigbio import QaRecord
from tests.tiny_corpus.builder import TinyBuilder


class OnceTinyBuilder(TinyBuilder):
    """The tiny builder recording each shards() call as a reject, as a builder's checks across documents do."""

    def shards(self, ctx: BuildContext) -> dict[str, Any]:
        ctx.reject(SourceError(ctx.source("notes"), "checked once"), "annotation")
        return super().shards(ctx)


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def add_notes(corpus: Path, *lines: str) -> None:
    with (corpus / "sample" / "notes.tsv").open("a", encoding="utf-8") as notes:
        notes.writelines(line + "\n" for line in lines)


FINE = "n4\ttrain\tFever."  # no span in spans.tsv: a valid note before the broken one
BROKEN = "n5\ttrain\tShort."


def break_note(corpus: Path) -> None:
    """n5's span runs past its text: a record its schema rejects, on line 6 of notes.tsv."""
    add_notes(corpus, FINE, BROKEN)
    with (corpus / "sample" / "spans.tsv").open("a", encoding="utf-8") as spans:
        spans.write("n5\t0\t40\tproblem\n")


def test_quarantine_from_workers_matches_one_process(tiny_corpus: Path, tmp_path: Path) -> None:
    break_note(tiny_corpus)
    manifest = load_manifest(tiny_corpus)
    releases = {}
    for workers in (1, 2):
        build = run(
            ReleaseRequest(
                manifest, tmp_path / f"w{workers}", on_error="quarantine", mode="build", max_rejects=1, workers=workers
            )
        )
        releases[workers] = build.folder
        assert build.manifest.counts.model_dump() == {"read": 5, "written": 4, "rejected": 1, "rejected_annotations": 0}
    [reject] = [json.loads(line) for line in (releases[2] / "rejects.jsonl").read_text().splitlines()]
    assert reject["where"] == "notes/notes.tsv:6" and "ends past the end of the text" in reject["reason"]
    assert tree(releases[1]) == tree(releases[2])


def test_an_error_in_a_worker_names_the_file_and_line(tiny_corpus: Path, tmp_path: Path) -> None:
    break_note(tiny_corpus)
    with pytest.raises(SourceError, match=r"notes\.tsv:6: record does not match its schema"):
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out", workers=2))
    assert not (tmp_path / "out" / "tiny").exists()


@pytest.mark.parametrize("workers", [1, 2])
def test_duplicate_ids_are_quarantined_after_the_first(tiny_corpus: Path, tmp_path: Path, workers: int) -> None:
    notes = (tiny_corpus / "sample" / "notes.tsv").read_text(encoding="utf-8").splitlines()
    add_notes(tiny_corpus, notes[2].replace("\ttrain\t", "\ttest\t"), notes[1])  # n2 again in test, n1 again
    build = run(
        ReleaseRequest(
            load_manifest(tiny_corpus), tmp_path, on_error="quarantine", mode="build", max_rejects=2, workers=workers
        )
    )
    reasons = [json.loads(line) for line in (build.folder / "rejects.jsonl").read_text().splitlines()]
    assert [(r["where"], r["reason"]) for r in reasons] == [
        ("notes/train", "duplicate id 'n2'"),  # the test split comes first: splits in name order
        ("notes/train", "duplicate id 'n1'"),
    ]
    view = ReleaseView(build.folder)
    assert view.column("notes", "id", "test").to_pylist() == ["n3", "n2"]
    assert view.column("notes", "id", "train").to_pylist() == ["n1"]
    assert build.manifest.counts.written == 3 and build.manifest.counts.rejected == 2


def test_a_duplicate_id_fails_the_build_by_default(tiny_corpus: Path, tmp_path: Path) -> None:
    notes = (tiny_corpus / "sample" / "notes.tsv").read_text(encoding="utf-8").splitlines()
    add_notes(tiny_corpus, notes[1])
    with pytest.raises(SourceError, match="notes/train: duplicate id 'n1'"):
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path))


def test_workers_flag(tiny_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", str(tiny_corpus), "--out", str(tmp_path / "a"), "--workers", "2"]) == 0
    assert main(["release", str(tiny_corpus), "--out", str(tmp_path / "b"), "--workers", "1"]) == 0
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    with pytest.raises(SystemExit):
        main(["release", str(tiny_corpus), "--workers", "0"])
    assert "expected a number of processes of at least 1, got '0'" in capsys.readouterr().err


@pytest.mark.parametrize(("notes", "workers"), [(1, 2), (3, 2), (3, 1)])
def test_shards_run_once_per_build(tiny_corpus: Path, tmp_path: Path, notes: int, workers: int) -> None:
    path = tiny_corpus / "sample" / "notes.tsv"
    path.write_text("".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[: notes + 1]), encoding="utf-8")
    corpus = tiny_corpus / "corpus.yaml"
    text = corpus.read_text().replace("tests.tiny_corpus.builder:TinyBuilder", f"{__name__}:OnceTinyBuilder")
    corpus.write_text(text.replace("min: 0.8", "min: 0.5"))  # one note's spans agree less
    manifest = load_manifest(tiny_corpus)
    build = run(
        ReleaseRequest(manifest, tmp_path / "out", on_error="quarantine", mode="build", max_rejects=1, workers=workers)
    )
    assert build.manifest.counts.rejected_annotations == 1 and build.manifest.counts.written == notes


def test_groups_are_contiguous_slices_of_the_shard_lists() -> None:
    groups = document_groups({"pages": list(range(10)), "names": list("abcdefghij"), "seed": 7}, workers=2)
    assert [group["pages"] for group in groups] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    assert [group["names"] for group in groups][0] == ["a", "b"] and {group["seed"] for group in groups} == {7}
    with pytest.raises(ClincorpError, match="different lengths"):
        document_groups({"pages": [1, 2], "names": ["a"]}, workers=2)


def test_row_groups_do_not_depend_on_the_batches_written(tmp_path: Path) -> None:
    features = Features({"id": Value("string"), "n": Value("int64")})
    rows = [{"id": f"r{i}", "n": i} for i in range(25_000)]
    written = {}
    for size in (7, 1_000, 25_000):
        writer = SplitWriter(tmp_path / str(size), "train", features, rows_per_shard=12_000)
        for start in range(0, len(rows), size):
            writer.write(pa.RecordBatch.from_pylist(rows[start : start + size], schema=features.arrow_schema))
        written[size] = [path.read_bytes() for path in writer.close()]
    assert written[7] == written[1_000] == written[25_000] and len(written[7]) == 3
    first = pq.ParquetFile(tmp_path / "7" / "train-00000-of-00003.parquet").metadata
    assert [first.row_group(i).num_rows for i in range(first.num_row_groups)] == [10_000, 2_000]


def test_a_config_of_wide_rows_cuts_row_groups_at_its_own_count(tmp_path: Path) -> None:
    """A record model's ``rows_per_row_group`` (1k for wide rows) sets the row groups, whatever the batches."""
    features = Features({"id": Value("string"), "text": Value("string")})
    rows = [{"id": f"r{i}", "text": "word " * (i % 50)} for i in range(2_500)]
    written = {}
    for size in (3, 700, 2_500):
        writer = SplitWriter(tmp_path / str(size), "train", features, rows_per_group=rows_per_row_group(QaRecord))
        for start in range(0, len(rows), size):
            writer.write(pa.RecordBatch.from_pylist(rows[start : start + size], schema=features.arrow_schema))
        written[size] = [path.read_bytes() for path in writer.close()]
    assert written[3] == written[700] == written[2_500] and len(written[3]) == 1
    metadata = pq.ParquetFile(tmp_path / "3" / "train-00000-of-00001.parquet").metadata
    assert [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)] == [1_000, 1_000, 500]
    assert rows_per_row_group(TinyBuilder.CONFIGS["notes"]) == ROWS_PER_ROW_GROUP == 10_000


def test_line_chunks_cover_the_file_in_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "notes.tsv"
    lines = ["header"] + [f"note {i} " + "x" * (i % 7) for i in range(200)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    chunks = line_chunks(path, skip_lines=1, chunk_bytes=50)
    assert len(chunks) > 10
    read = [(number, line.decode()) for chunk in chunks for number, line in chunk_lines(path, chunk)]
    assert read == [(number, text) for number, text in enumerate(lines, start=1)][1:]


def test_workers_are_capped_at_the_cores_and_the_document_groups(
    tiny_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--workers 100000`` on a 4-note corpus: no more processes than cores (said on stderr) or groups."""
    started: list[int] = []
    real_pool = workers_module.ProcessPoolExecutor

    def counting_pool(max_workers: int, **kwargs: Any) -> Any:
        started.append(max_workers)
        return real_pool(max_workers, **kwargs)

    monkeypatch.setattr(workers_module, "ProcessPoolExecutor", counting_pool)
    assert main(["release", str(tiny_corpus), "--out", str(tmp_path / "a"), "--workers", "100000"]) == 0
    cores = pipeline.default_workers()
    assert f"--workers 100000 is more than the {cores} cores this process may use: using {cores}" in (
        capsys.readouterr().err
    )
    assert started == ([min(cores, 4)] if cores > 1 else [])  # the sample's 4 notes are 4 groups
    assert main(["release", str(tiny_corpus), "--out", str(tmp_path / "c"), "--workers", "3"]) == 0
    assert started[-1] <= min(cores, 3)
    assert main(["release", str(tiny_corpus), "--out", str(tmp_path / "b"), "--workers", "1"]) == 0
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
