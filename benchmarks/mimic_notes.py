"""Select a few hundred notes from a synthetic MIMIC note table at full scale; prints JSON.

Generates (in a temp dir) a gzip CSV shaped like MIMIC-IV-Note ``discharge.csv.gz`` (331,794 notes)
or MIMIC-III ``NOTEEVENTS.csv.gz`` (2,083,180 notes), with multi-line quoted texts, then selects
``--select`` ids spread over the whole file (the last row included, so the whole file is read) with
the streaming reader, and compares against ``pandas.read_csv`` of the whole file (the naive
baseline), the stdlib ``csv`` module over a gzip stream, and ISA-L decompression alone (the floor:
no reader can be faster than inflating the file). Each run is a fresh process: peak RSS is its own.
Targets: >= 300 MB/s of uncompressed CSV, >= 3x pandas, peak RSS <= 300 MB for the reader.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas
from isal import igzip

from benchmarks._measure import measure
from clinical_corpora.builders.sources.mimic.notes import iter_mimic_iv_notes, iter_noteevents

LAYOUTS = {
    # rows at full scale, mean characters of text (discharge.csv ≈ 3.3 GB, NOTEEVENTS.csv ≈ 3.9 GB)
    "discharge": (331_794, 10_000),
    "noteevents": (2_083_180, 1_900),
}
SECTIONS = [
    "Chief Complaint:",
    "History of Present Illness:",
    "Physical Exam:",
    "Pertinent Results:",
    "Brief Hospital Course:",
    "Discharge Instructions:",
]
TARGET_MB_PER_S = 300.0
TARGET_SPEEDUP_VS_PANDAS = 3.0
TARGET_PEAK_RSS_MB = 300.0


def _bodies(mean_chars: int, count: int, rng: random.Random) -> list[str]:
    """A pool of note texts, already quoted as CSV fields (quotes doubled)."""
    vocabulary = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 11))) for _ in range(6000)]
    bodies = []
    for _ in range(count):
        parts = [" \nName:  ___   Unit No:   ___\n \nAdmission Date:  ___   Discharge Date:   ___\n \n"]
        length = sum(map(len, parts))
        target = rng.randint(mean_chars // 2, mean_chars * 3 // 2)
        while length < target:
            line = (
                f'{rng.choice(SECTIONS)}\n{" ".join(rng.choices(vocabulary, k=rng.randint(6, 30)))}, "noted" ___.\n \n'
            )
            parts.append(line)
            length += len(line)
        bodies.append('"' + "".join(parts).replace('"', '""') + '"')
    return bodies


def write_table(path: Path, layout: str, rows: int, mean_chars: int, seed: int, select: int) -> tuple[int, list[str]]:
    """Write the gzip CSV; return its uncompressed size and ``select`` ids spread over it (last row included)."""
    rng = random.Random(seed)
    bodies = _bodies(mean_chars, 2048, rng)
    ids: list[str] = []
    size = 0
    with gzip.open(path, "wb", compresslevel=1) as stream:
        if layout == "discharge":
            header = "note_id,subject_id,hadm_id,note_type,note_seq,charttime,storetime,text\n"
        else:
            header = (
                '"ROW_ID","SUBJECT_ID","HADM_ID","CHARTDATE","CHARTTIME","STORETIME",'
                '"CATEGORY","DESCRIPTION","CGID","ISERROR","TEXT"\n'
            )
        lines = [header]
        for index in range(rows):
            subject = 10_000_000 + index // 4
            if layout == "discharge":
                row_id = f"{subject}-DS-{index % 4 + 1}"
                lines.append(
                    f"{row_id},{subject},{20_000_000 + index},DS,{index % 4 + 1},"
                    "2180-05-07 00:00:00,2180-05-09 15:26:00,"
                )
            else:
                row_id = str(index + 1)
                category = "Radiology" if index % 4 else "Nursing/other"
                lines.append(
                    f'{row_id},{subject},{100_000 + index},2151-08-04,2151-08-04 18:00:00,,"{category}","Report",,,'
                )
            lines.append(bodies[rng.randrange(len(bodies))])
            lines.append("\n")
            ids.append(row_id)
            if len(lines) > 3000:
                data = "".join(lines).encode()
                size += len(data)
                stream.write(data)
                lines = []
        data = "".join(lines).encode()
        size += len(data)
        stream.write(data)
    step = len(ids) / select
    return size, sorted({ids[min(len(ids) - 1, int((k + 1) * step) - 1)] for k in range(select)})


def run_reader(path: str, layout: str, wanted: list[str]) -> int:
    if layout == "discharge":
        return sum(1 for _ in iter_mimic_iv_notes(path, set(wanted)))
    return sum(1 for _ in iter_noteevents(path, row_ids={int(row_id) for row_id in wanted}))


def run_pandas(path: str, layout: str, wanted: list[str]) -> int:
    table = pandas.read_csv(path, dtype=str, keep_default_na=False)
    id_column = "note_id" if layout == "discharge" else "ROW_ID"
    return int(table[id_column].isin(set(wanted)).sum())


def run_isal_decompression(path: str, layout: str, wanted: list[str]) -> int:
    """The floor: inflate the whole file with ISA-L, nothing else."""
    with igzip.open(path, "rb") as stream:
        while stream.read(1 << 20):
            pass
    return len(wanted)


def run_stdlib_csv(path: str, layout: str, wanted: list[str]) -> int:
    wanted_set = set(wanted)
    csv.field_size_limit(1 << 30)
    with gzip.open(path, "rt", encoding="utf-8", newline="") as stream:
        reader = csv.reader(stream)
        next(reader)
        return sum(1 for row in reader if row[0] in wanted_set)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layout", choices=sorted(LAYOUTS), default="discharge")
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the real table's row count")
    parser.add_argument("--select", type=int, default=272)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--skip-pandas", action="store_true", help="leave out the whole-file pandas baseline")
    args = parser.parse_args()

    full_rows, mean_chars = LAYOUTS[args.layout]
    rows = max(args.select, int(full_rows * args.scale))
    with tempfile.TemporaryDirectory(prefix="bench_mimic_notes_") as folder:
        path = Path(folder) / ("discharge.csv.gz" if args.layout == "discharge" else "NOTEEVENTS.csv.gz")
        # generated in a child process too: a child's peak RSS starts at its parent's high-water mark
        generation = measure(write_table, path, args.layout, rows, mean_chars, args.seed, args.select)
        size, wanted = generation["result"]

        runs = {"isal_decompression_floor": run_isal_decompression, "reader": run_reader, "stdlib_csv": run_stdlib_csv}
        if not args.skip_pandas:
            runs["pandas_read_csv"] = run_pandas
        results = {}
        for name, function in runs.items():
            outcome = measure(function, str(path), args.layout, wanted)
            outcome["found"] = outcome.pop("result")
            outcome["mb_per_s"] = round(size / 1e6 / outcome["seconds"], 1)
            results[name] = outcome

        reader = results["reader"]
        report = {
            "benchmark": "mimic_notes",
            "layout": args.layout,
            "rows": rows,
            "selected": len(wanted),
            "uncompressed_mb": round(size / 1e6, 1),
            "compressed_mb": round(path.stat().st_size / 1e6, 1),
            "generation_seconds": generation["seconds"],
            **results,
            "reader_over_floor_speed": round(results["isal_decompression_floor"]["seconds"] / reader["seconds"], 2),
            "targets": {
                "min_mb_per_s": TARGET_MB_PER_S,
                "min_speedup_vs_pandas": TARGET_SPEEDUP_VS_PANDAS,
                "max_peak_rss_mb": TARGET_PEAK_RSS_MB,
            },
        }
        if "pandas_read_csv" in results:
            baseline = results["pandas_read_csv"]
            report["speedup_vs_pandas"] = round(baseline["seconds"] / reader["seconds"], 2)
            report["peak_rss_ratio_vs_pandas"] = round(reader["peak_rss_mb"] / baseline["peak_rss_mb"], 3)
        report["speedup_vs_stdlib_csv"] = round(results["stdlib_csv"]["seconds"] / reader["seconds"], 2)
        report["meets_targets"] = (
            reader["found"] == len(wanted)
            and reader["mb_per_s"] >= TARGET_MB_PER_S
            and report.get("speedup_vs_pandas", TARGET_SPEEDUP_VS_PANDAS) >= TARGET_SPEEDUP_VS_PANDAS
            and reader["peak_rss_mb"] <= TARGET_PEAK_RSS_MB
        )
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
