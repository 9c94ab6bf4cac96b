"""Release throughput, fixed and per-record cost and peak RSS, against the Arrow floor and a naive baseline.

The pipeline releases a synthetic corpus of nested spans (``benchmarks/streaming_corpus``, a builder that
streams its notes file in shards of whole lines) with every gate: expectations, agreement against a second
annotator, statistics, card and manifest. In the same run, for the same records:

- the Arrow floor: parse + validate + build Arrow columns + write parquet in one process, GC off, no gate;
- the naive baseline: every record held in memory, ``datasets.Dataset.from_list(...).to_parquet``.

Each is run at every ``--records`` size; the pipeline with every ``--workers`` count. Fixed and per-record
cost come from a line through the smallest and largest size, in wall seconds and in CPU seconds (the
process and its workers: the steadier figure on a shared machine). Peak RSS is the main process's;
``worker_peak_rss_mb`` the largest worker's. Prints JSON.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._measure import measure  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "streaming_corpus"
WORDS = ["chest", "pain", "fever", "cough", "aspirin", "ECG", "x-ray", "normal", "given", "denies", "and"]
LABELS = ["problem", "test", "treatment"]


def write_inputs(folder: Path, records: int, spans_per_record: int, seed: int = 13) -> None:
    """notes.tsv, and annotator B's spans.tsv (one span in ten left out), in the streaming corpus's format."""
    rng = random.Random(seed)
    second: dict[str, list[str]] = {"test": [], "train": []}
    with (folder / "notes.tsv").open("w") as notes:
        notes.write("note_id\tsplit\ttext\tspans\n")
        for index in range(records):
            words = [rng.choice(WORDS) for _ in range(40)]
            offsets = [sum(len(w) + 1 for w in words[:i]) for i in range(40)]
            spans = [
                f"{offsets[word]}:{offsets[word] + len(words[word])}:{rng.choice(LABELS)}"
                for word in sorted(rng.sample(range(40), spans_per_record))
            ]
            split = "train" if index % 10 else "test"
            notes.write(f"n{index}\t{split}\t{' '.join(words)}\t{','.join(spans)}\n")
            second[split].append(f"n{index}\t{','.join(span for span in spans if rng.random() > 0.1)}\n")
    with (folder / "spans.tsv").open("w") as spans_file:
        spans_file.write("note_id\tspans\n")
        for split in sorted(second):
            spans_file.writelines(second[split])


def pipeline_release(inputs: str, out: str, workers: int) -> int:
    from clinical_corpora.builders.release.pipeline import run
    from clinical_corpora.builders.release.request import ReleaseRequest
    from clinical_corpora.core.manifest import load_manifest

    overrides = {"notes": Path(inputs) / "notes.tsv", "second_annotator": Path(inputs) / "spans.tsv"}
    outcome = run(ReleaseRequest(load_manifest(CORPUS), Path(out), sources=overrides, workers=workers))
    return int(outcome.manifest.counts.written)


def _records(inputs: str) -> Any:
    """The builder's validated records, streamed (one process, no gate)."""
    from benchmarks.streaming_corpus.builder import StreamingBuilder
    from clinical_corpora.builders.contract.base import BuildContext
    from clinical_corpora.core.manifest import load_manifest

    manifest = load_manifest(CORPUS)
    ctx = BuildContext(manifest, {"notes": Path(inputs) / "notes.tsv"})
    return (row.record for row in StreamingBuilder().generate(ctx))


def arrow_floor(inputs: str, out: str) -> int:
    """Parse, validate, encode to Arrow and write parquet: the work no release can skip. GC off."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from benchmarks.streaming_corpus.builder import Note
    from clinical_corpora.schemas.features import features_for, row_encoder

    gc.disable()
    features = features_for(Note)
    encode, schema = row_encoder(features), features.arrow_schema
    written, batch = 0, []
    with pq.ParquetWriter(str(Path(out) / "floor.parquet"), schema) as writer:
        for record in _records(inputs):
            batch.append(encode(record.model_dump()))
            if len(batch) == 10_000:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                written, batch = written + len(batch), []
        if batch:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    return written + len(batch)


def naive_release(inputs: str, out: str) -> int:
    """Every record in memory, then ``Dataset.from_list(...).to_parquet``."""
    from datasets import Dataset

    from benchmarks.streaming_corpus.builder import Note
    from clinical_corpora.schemas.features import features_for

    features = features_for(Note)
    rows = [features.encode_example(record.model_dump()) for record in _records(inputs)]
    Dataset.from_list(rows, features=features).to_parquet(str(Path(out) / "naive.parquet"))
    return len(rows)


def _cpu(run: dict[str, Any]) -> float:
    """CPU seconds of the run and its worker processes (steadier than wall time on a shared machine)."""
    return float(run["cpu_seconds"] + run["worker_cpu_seconds"])


def _rate(records: int, run: dict[str, Any]) -> dict[str, Any]:
    return {**run, "records_per_s": round(records / run["seconds"])}


def _line(sizes: list[int], seconds: list[float]) -> dict[str, float]:
    """Fixed seconds and microseconds per record through the smallest and largest size."""
    per_record = (seconds[-1] - seconds[0]) / (sizes[-1] - sizes[0])
    return {"fixed_s": round(seconds[0] - per_record * sizes[0], 2), "per_record_us": round(per_record * 1e6, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, nargs="+", default=[100_000, 400_000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--spans", type=int, default=5, help="spans per record")
    parser.add_argument("--skip-naive", action="store_true", help="leave out the (slow, memory-hungry) baseline")
    args = parser.parse_args()
    sizes = sorted(args.records)
    runs: dict[str, dict[int, dict[str, Any]]] = {f"pipeline_{w}_workers": {} for w in args.workers}
    runs["arrow_floor"], runs["naive_datasets"] = {}, {}
    for records in sizes:
        work = Path(tempfile.mkdtemp(prefix="clincorp-bench-"))
        try:
            write_inputs(work, records, args.spans)
            for workers in args.workers:
                out = work / f"out-{workers}"
                runs[f"pipeline_{workers}_workers"][records] = _rate(
                    records, measure(pipeline_release, str(work), str(out), workers)
                )
            runs["arrow_floor"][records] = _rate(records, measure(arrow_floor, str(work), str(work)))
            if not args.skip_naive:
                runs["naive_datasets"][records] = _rate(records, measure(naive_release, str(work), str(work)))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    report: dict[str, Any] = {"benchmark": "release_pipeline", "spans_per_record": args.spans, "sizes": sizes}
    for name, by_size in runs.items():
        if by_size:
            report[name] = {str(size): run for size, run in by_size.items()}
            if len(sizes) > 1:
                report[name]["cost"] = _line(sizes, [by_size[size]["seconds"] for size in sizes])
                report[name]["cpu_cost"] = _line(sizes, [_cpu(by_size[size]) for size in sizes])
    report["ratios"] = _ratios(runs, sizes, args.workers)
    report["targets"] = {
        "records_per_s_at_100k_2_workers": 20_000,
        "per_record_cost_vs_floor": 2.0,
        "peak_rss_mb": 1024,
        "peak_rss_growth_smallest_to_largest": 0.15,
    }
    print(json.dumps(report, indent=2))


def _ratios(runs: dict[str, dict[int, dict[str, Any]]], sizes: list[int], workers: list[int]) -> dict[str, Any]:
    """Per size: each pipeline's seconds over the floor's and the naive baseline's over it; RSS growth."""
    ratios: dict[str, Any] = {}
    for w in workers:
        pipeline = runs[f"pipeline_{w}_workers"]
        for size in sizes:
            floor_run = runs["arrow_floor"][size]
            entry = {
                "vs_floor": round(pipeline[size]["seconds"] / floor_run["seconds"], 2),
                "cpu_vs_floor": round(_cpu(pipeline[size]) / _cpu(floor_run), 2),
            }
            if size in runs["naive_datasets"]:
                naive = runs["naive_datasets"][size]["seconds"]
                entry["speedup_vs_naive"] = round(naive / pipeline[size]["seconds"], 2)
            ratios[f"{w}_workers_{size}"] = entry
        if len(sizes) > 1:
            first, last = pipeline[sizes[0]]["peak_rss_mb"], pipeline[sizes[-1]]["peak_rss_mb"]
            ratios[f"{w}_workers_peak_rss_growth"] = round(last / first - 1, 3)
            for label, cost in (("", lambda run: run["seconds"]), ("cpu_", _cpu)):
                floor = _line(sizes, [cost(runs["arrow_floor"][s]) for s in sizes])["per_record_us"]
                ours = _line(sizes, [cost(pipeline[s]) for s in sizes])["per_record_us"]
                ratios[f"{w}_workers_{label}per_record_vs_floor"] = round(ours / floor, 2) if floor > 0 else None
    return ratios


if __name__ == "__main__":
    main()
