"""Pull the rad_coref corpus (638 reports of 60 patients) out of a MIMIC-III-scale NOTEEVENTS; prints JSON.

Generates (in a temp dir) a gzip ``NOTEEVENTS.csv.gz`` shaped like MIMIC-III's (2,083,180 notes at
``--scale 1``, multi-line quoted texts) whose annotated radiology reports are spread over the whole
file (the last row included, so all of it is read), and a gold BRAT folder with about 9 mentions per
report (the seed's 5872 / 638). Then, each in a fresh process (peak RSS is its own):

- ``builder``: ``RadCorefBuilder.generate`` — stream NOTEEVENTS, check and build the 60 patient
  records and every within-patient mention pair (parquet writing and gates are left out; see
  ``benchmarks/release_pipeline.py``);
- ``build_1_worker`` / ``build_2_workers``: ``clincorp build`` of the same inputs (records, parquet,
  gates, card) with ``--workers 1`` and ``2``;
- ``noteevents_pass``: the one sequential pass over NOTEEVENTS keeping the annotated ROW_IDs, the part
  of a build that more workers cannot shorten;
- ``pandas_read_csv``: ``pandas.read_csv`` of the whole file, the naive way to find the reports;
- ``metrics``: all six coreference metrics on one 500-mention patient (``benchmarks/coref_metrics.py``).

Targets (issue 5): >= 100 MB/s of uncompressed CSV, peak RSS <= 1 GB, metrics <= 1 s.

    python benchmarks/rad_coref_build.py [--scale 0.05] [--skip-pandas] [--skip-builds]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._measure import measure
from benchmarks.coref_metrics import synthetic_patient
from benchmarks.mimic_notes import LAYOUTS, _bodies, run_pandas
from clinical_corpora.builders.contract.base import BuildContext
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.sources.mimic.notes import iter_noteevents
from clinical_corpora.corpora.rad_coref.builder import RadCorefBuilder
from clinical_corpora.validation.metrics.coref import score_documents_all

PATIENTS, REPORTS, MENTIONS_PER_REPORT = 60, 638, 9
DESCRIPTIONS = (
    "CHEST (PORTABLE AP)",
    "CT HEAD W/O CONTRAST",
    "CT ABDOMEN W/CONTRAST",
    "CHEST (PA & LAT)",
    "CTA CHEST W&W/O C&RECONS",
    "MR HEAD W & W/O CONTRAST",
    "RENAL U.S.",
)
TARGET_MB_PER_S, TARGET_PEAK_RSS_MB, TARGET_METRIC_SECONDS = 100.0, 1024.0, 1.0
_WORD = re.compile(r"[a-z]{5,}")


def write_inputs(folder: Path, rows: int, seed: int) -> tuple[int, list[str]]:
    """NOTEEVENTS.csv.gz and gold/<SUBJECT_ID>/<ROW_ID>.ann; returns uncompressed bytes and report ROW_IDs."""
    rng = random.Random(seed)
    bodies = _bodies(LAYOUTS["noteevents"][1], 2048, rng)
    step = rows / REPORTS
    annotated = {min(rows - 1, int((k + 1) * step) - 1): k for k in range(REPORTS)}
    header = (
        '"ROW_ID","SUBJECT_ID","HADM_ID","CHARTDATE","CHARTTIME","STORETIME","CATEGORY",'
        '"DESCRIPTION","CGID","ISERROR","TEXT"\n'
    )
    size, lines = 0, [header]
    with gzip.open(folder / "NOTEEVENTS.csv.gz", "wb", compresslevel=1) as stream:
        for index in range(rows):
            body = bodies[rng.randrange(len(bodies))]
            report = annotated.get(index)
            if report is None:
                category = "Radiology" if index % 4 else "Nursing/other"
                lines.append(
                    f"{index + 1},{10_000_000 + index // 4},{100_000 + index},2151-08-04,"
                    f'2151-08-04 18:00:00,,"{category}","Report",,,{body}\n'
                )
            else:
                subject = 20_000_000 + report % PATIENTS
                day = 1 + report // PATIENTS
                lines.append(
                    f"{index + 1},{subject},{300_000 + subject},2151-09-{day:02d},2151-09-{day:02d} 10:00:00,,"
                    f'"Radiology","{DESCRIPTIONS[report % len(DESCRIPTIONS)]}",,,{body}\n'
                )
                _write_ann(
                    folder / "gold" / str(subject) / f"{index + 1}.ann", body[1:-1].replace('""', '"'), subject, rng
                )
            if len(lines) > 3000:
                data = "".join(lines).encode()
                size, lines = size + len(data), []
                stream.write(data)
        data = "".join(lines).encode()
        stream.write(data)
    return size + len(data), [str(index + 1) for index in annotated]


def _write_ann(path: Path, text: str, subject: int, rng: random.Random) -> None:
    words = list(_WORD.finditer(text))
    chosen = sorted(rng.sample(words, min(MENTIONS_PER_REPORT, len(words))), key=lambda match: match.start())
    lines = [
        f"T{n}\t{rng.choice(('Finding', 'Finding', 'Device'))} {m.start()} {m.end()}\t{m[0]}"
        for n, m in enumerate(chosen, 1)
    ]
    lines += [f"#{n}\tAnnotatorNotes T{n}\tchain=P{subject}C{rng.randrange(40)}" for n in range(1, len(chosen) + 1)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def run_builder(folder: str) -> dict[str, int]:
    """Rows the builder yields for the generated inputs, by config."""
    manifest = find_corpus("rad_coref")
    ctx = BuildContext(manifest, {"noteevents": Path(folder) / "NOTEEVENTS.csv.gz", "annotations": Path(folder)})
    counts: dict[str, int] = {}
    for row in RadCorefBuilder().generate(ctx):
        counts[row.config] = counts.get(row.config, 0) + 1
    return counts


def run_build(folder: str, workers: int) -> dict[str, int]:
    """``clincorp build`` of the generated inputs with ``workers`` processes; its record counts."""
    from clinical_corpora.builders.release.pipeline import run
    from clinical_corpora.builders.release.request import ReleaseRequest

    sources = {"noteevents": Path(folder) / "NOTEEVENTS.csv.gz", "annotations": Path(folder)}
    with tempfile.TemporaryDirectory(prefix="bench_rad_coref_out_") as out:  # not in the annotations folder
        outcome = run(
            ReleaseRequest(find_corpus("rad_coref"), Path(out), sources=sources, mode="build", workers=workers)
        )
    return outcome.manifest.counts.model_dump()


def run_noteevents_pass(folder: str, wanted: list[str]) -> int:
    """Notes kept by one pass over NOTEEVENTS (the annotated ROW_IDs)."""
    return sum(1 for _ in iter_noteevents(Path(folder) / "NOTEEVENTS.csv.gz", {int(row_id) for row_id in wanted}))


def run_metrics(mentions: int, seed: int) -> float:
    key, response = synthetic_patient(mentions, seed)
    start = time.perf_counter()
    score_documents_all({"patient": key}, {"patient": response})
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of MIMIC-III's 2,083,180 notes")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--skip-pandas", action="store_true", help="leave out the whole-file pandas baseline")
    parser.add_argument("--skip-builds", action="store_true", help="leave out the 1- and 2-worker builds")
    args = parser.parse_args()
    rows = max(REPORTS * 4, int(LAYOUTS["noteevents"][0] * args.scale))
    with tempfile.TemporaryDirectory(prefix="bench_rad_coref_") as folder:
        generation = measure(write_inputs, Path(folder), rows, args.seed)
        size, wanted = generation["result"]
        results = {
            "builder": measure(run_builder, folder),
            "noteevents_pass": measure(run_noteevents_pass, folder, wanted),
        }
        if not args.skip_builds:
            results["build_1_worker"] = measure(run_build, folder, 1)
            results["build_2_workers"] = measure(run_build, folder, 2)
        if not args.skip_pandas:
            results["pandas_read_csv"] = measure(
                run_pandas, str(Path(folder) / "NOTEEVENTS.csv.gz"), "noteevents", wanted
            )
        for outcome in results.values():
            outcome["mb_per_s"] = round(size / 1e6 / outcome["seconds"], 1)
        metrics = measure(run_metrics, 500, args.seed)
        builder = results["builder"]
        report = {
            "benchmark": "rad_coref_build",
            "notes": rows,
            "reports": REPORTS,
            "patients": PATIENTS,
            "uncompressed_mb": round(size / 1e6, 1),
            "generation_seconds": generation["seconds"],
            **results,
            "metrics_500_mentions_seconds": round(metrics["result"], 4),
            "targets": {
                "min_mb_per_s": TARGET_MB_PER_S,
                "max_peak_rss_mb": TARGET_PEAK_RSS_MB,
                "max_metric_seconds": TARGET_METRIC_SECONDS,
            },
            "meets_targets": builder["result"].get("rad_coref") == PATIENTS
            and builder["mb_per_s"] >= TARGET_MB_PER_S
            and builder["peak_rss_mb"] <= TARGET_PEAK_RSS_MB
            and metrics["result"] <= TARGET_METRIC_SECONDS,
        }
        if "build_2_workers" in results:
            one, two = results["build_1_worker"], results["build_2_workers"]
            report["build_speedup_2_workers"] = round(one["seconds"] / two["seconds"], 2)
            report["noteevents_pass_share_of_1_worker_build"] = round(
                results["noteevents_pass"]["seconds"] / one["seconds"], 3
            )
        if "pandas_read_csv" in results:
            report["speedup_vs_pandas"] = round(results["pandas_read_csv"]["seconds"] / builder["seconds"], 2)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
