"""Release throughput and peak RSS on a synthetic corpus of nested spans, against a naive baseline.

The pipeline streams records into parquet; the naive baseline holds every record in memory and writes
with ``datasets.Dataset.from_list(...).to_parquet``. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._measure import measure  # noqa: E402

WORDS = ["chest", "pain", "fever", "cough", "aspirin", "ECG", "x-ray", "normal", "given", "denies", "and"]
LABELS = ["problem", "test", "treatment"]


def write_inputs(folder: Path, records: int, spans_per_record: int, seed: int = 13) -> None:
    """notes.tsv and spans.tsv in the tiny corpus's raw format."""
    rng = random.Random(seed)
    with (folder / "notes.tsv").open("w") as notes, (folder / "spans.tsv").open("w") as spans:
        notes.write("note_id\tsplit\ttext\n")
        spans.write("note_id\tstart\tend\tlabel\n")
        for index in range(records):
            words = [rng.choice(WORDS) for _ in range(40)]
            text = " ".join(words)
            split = "train" if index % 10 else "test"
            notes.write(f"n{index}\t{split}\t{text}\n")
            starts = sorted(rng.sample(range(40), spans_per_record))
            offsets = [sum(len(w) + 1 for w in words[:i]) for i in range(40)]
            for word in starts:
                spans.write(f"n{index}\t{offsets[word]}\t{offsets[word] + len(words[word])}\t{rng.choice(LABELS)}\n")


def pipeline_release(corpus: str, inputs: str, out: str) -> int:
    from clinical_corpora.builders.pipeline import run
    from clinical_corpora.core.manifest import load_manifest

    spans = Path(inputs) / "spans.tsv"
    overrides = {"notes": Path(inputs) / "notes.tsv", "spans": spans, "second_annotator": spans}
    outcome = run(load_manifest(Path(corpus)), Path(out), overrides)
    return outcome.manifest["counts"]["written"]


def naive_release(corpus: str, inputs: str, out: str) -> int:
    from datasets import Dataset

    from clinical_corpora.builders.base import BuildContext
    from clinical_corpora.builders.inputs import resolve_sources
    from clinical_corpora.core.manifest import load_manifest
    from tests.tiny_corpus.builder import TinyBuilder

    manifest = load_manifest(Path(corpus))
    sources = resolve_sources(manifest, {"notes": Path(inputs) / "notes.tsv", "spans": Path(inputs) / "spans.tsv"})
    rows = [row.record.model_dump() for row in TinyBuilder().generate(BuildContext(manifest, sources))]
    features = __import__("clinical_corpora.schemas.features", fromlist=["features_for"]).features_for(
        TinyBuilder.CONFIGS["notes"]
    )
    dataset = Dataset.from_list([features.encode_example(row) for row in rows], features=features)
    dataset.to_parquet(str(Path(out) / "naive.parquet"))
    return len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--spans", type=int, default=5, help="spans per record")
    args = parser.parse_args()
    corpus = Path(__file__).resolve().parents[1] / "tests" / "tiny_corpus"
    work = Path(tempfile.mkdtemp(prefix="clincorp-bench-"))
    try:
        write_inputs(work, args.records, args.spans)
        ours = measure(pipeline_release, str(corpus), str(work), str(work / "out"))
        naive = measure(naive_release, str(corpus), str(work), str(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report = {
        "benchmark": "release_pipeline",
        "records": args.records,
        "spans_per_record": args.spans,
        "pipeline": {**ours, "records_per_s": round(args.records / ours["seconds"])},
        "naive_in_memory": {**naive, "records_per_s": round(args.records / naive["seconds"])},
        "speedup_vs_naive": round(naive["seconds"] / ours["seconds"], 2),
        "targets": {"records_per_s": 20_000, "peak_rss_mb": 1024},
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
