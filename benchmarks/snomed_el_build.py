"""Build the snomed_el corpus end to end from synthetic inputs at the challenge's scale; prints JSON.

Generates (in a temp dir, with the generators of ``benchmarks/mimic_notes.py`` and ``benchmarks/rf2.py``)
a MIMIC-IV-Note ``discharge.csv.gz`` of 331,794 notes, an RF2 Snapshot of 350k concepts, and
``train_annotations.csv`` with 275 word spans on each of 272 notes spread over the file (74,800 spans,
concepts drawn Zipf-like from 6,624 concepts of the three hierarchies). Then runs the whole pipeline
(``clincorp build``: stream and select notes, load RF2, validate records, write parquet, expectations,
card) in a fresh process, with ``--workers 1`` and ``2``, and reports wall time, peak RSS and uncompressed
CSV MB/s; ``sequential_pass`` is what more workers cannot shorten: one pass over the notes file keeping
the annotated notes, plus loading the RF2 snapshot.

    python benchmarks/snomed_el_build.py [--scale 0.1]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._measure import measure
from benchmarks.mimic_notes import LAYOUTS, write_table
from benchmarks.rf2 import write_snapshot

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "snomed_el"
NOTES, SPANS_PER_NOTE, CONCEPTS = 272, 275, 6624
WORD = re.compile(r"[a-z]+")


def write_inputs(folder: Path, scale: float, seed: int) -> dict[str, int]:
    """discharge.csv.gz, rf2/ and train_annotations.csv under ``folder``; returns their sizes."""
    from clinical_corpora.builders.sources.mimic.notes import iter_mimic_iv_notes
    from clinical_corpora.builders.sources.rf2 import load_snapshot

    rows, mean_chars = LAYOUTS["discharge"]
    rows = max(NOTES, int(rows * scale))
    size, wanted = write_table(folder / "discharge.csv.gz", "discharge", rows, mean_chars, seed, NOTES)
    (folder / "rf2").mkdir()
    write_snapshot(folder / "rf2", *(max(1000, int(n * scale)) for n in (350_000, 1_500_000, 1_000_000)), seed)
    terminology = load_snapshot(folder / "rf2")
    rng = random.Random(seed)
    candidates = sorted(concept for concept in terminology.hierarchy if concept in terminology.depth)
    concepts = rng.sample(candidates, min(CONCEPTS, len(candidates)))
    weights = [1 / rank for rank in range(1, len(concepts) + 1)]
    spans = 0
    with (folder / "train_annotations.csv").open("w", encoding="utf-8") as out:
        out.write("note_id,start,end,concept_id\n")
        for note in iter_mimic_iv_notes(folder / "discharge.csv.gz", set(wanted)):
            words = [match.span() for match in WORD.finditer(note.text)]
            chosen = sorted(rng.sample(words, min(SPANS_PER_NOTE, len(words))))
            for (start, end), concept in zip(chosen, rng.choices(concepts, weights, k=len(chosen)), strict=True):
                out.write(f"{note.note_id},{start},{end},{concept}\n")
            spans += len(chosen)
    return {
        "notes_in_file": rows,
        "uncompressed_mb": round(size / 1e6, 1),
        "annotated_notes": len(wanted),
        "annotations": spans,
    }


def run_build(folder: str, workers: int) -> dict[str, int]:
    from clinical_corpora.builders.release.pipeline import run
    from clinical_corpora.builders.release.request import ReleaseRequest
    from clinical_corpora.core.manifest import load_manifest

    sources = {"notes": "discharge.csv.gz", "annotations": "train_annotations.csv", "terminology": "rf2"}
    outcome = run(
        ReleaseRequest(
            load_manifest(CORPUS),
            Path(folder) / f"out-{workers}",
            sources={name: Path(folder) / path for name, path in sources.items()},
            mode="build",
            workers=workers,
        )
    )
    return outcome.manifest.counts.model_dump()


def run_sequential_pass(folder: str) -> int:
    """Annotated notes kept by one pass over the notes file, after loading the RF2 snapshot."""
    from clinical_corpora.builders.sources.mimic.notes import iter_notes, read_span_annotations
    from clinical_corpora.builders.sources.rf2 import load_snapshot

    load_snapshot(Path(folder) / "rf2")
    wanted = {annotation.note_id for annotation in read_span_annotations(Path(folder) / "train_annotations.csv")}
    return sum(1 for _ in iter_notes(Path(folder) / "discharge.csv.gz", wanted))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the notes file and RF2 row counts")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_snomed_el_") as folder:
        # generated in a child process too: a child's peak RSS starts at its parent's high-water mark
        generation = measure(write_inputs, Path(folder), args.scale, args.seed)
        sequential = measure(run_sequential_pass, folder)
        builds = {workers: measure(run_build, folder, workers) for workers in (1, 2)}
    inputs = generation["result"]
    report = {
        "benchmark": "snomed_el_build",
        **inputs,
        "generation_seconds": generation["seconds"],
        "sequential_pass": sequential,
        "build_1_worker": builds[1],
        "build_2_workers": builds[2],
        "build_speedup_2_workers": round(builds[1]["seconds"] / builds[2]["seconds"], 2),
        "sequential_share_of_1_worker_build": round(sequential["seconds"] / builds[1]["seconds"], 3),
        "notes_csv_mb_per_s": {
            name: round(inputs["uncompressed_mb"] / builds[workers]["seconds"], 1)
            for name, workers in (("1_worker", 1), ("2_workers", 2))
        },
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
