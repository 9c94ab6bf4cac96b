"""``clincorp diff`` of two SDOH releases of several thousand notes, against a columnar read of both (JSON out).

Generates ``--notes`` synthetic SHAC-layout notes (``benchmarks.sdoh_scorer.generate``), releases ``sdoh``
from them (the old release), then writes a new release from its parquet with known edits: every 20th note's
first trigger moved by a character, every 50th note's first event relabelled, every 100th note removed and
as many added (copies under new ids), the manifest rehashed. Then, each in a fresh process (time, CPU and
peak RSS its own):

Each reports ``work_seconds``, timed inside the process after its imports (``seconds`` includes them).

- ``columnar_read`` (the floor): every parquet file of both releases read whole, column-wise, with pyarrow;
- ``diff``: ``diff_releases`` of the two releases, both opened as ``clincorp diff`` opens them
  (``check_seconds``: manifest.json read, every file listed, present, regular and inside the folder), every
  change counted and described (``compare_seconds``, which includes every file hashed against its manifest:
  that check runs in a thread beside the comparison, which returns once it passed);
- ``naive``: both releases as Python rows (``to_pylist``), matched by id in dicts and compared whole (which
  records changed, nothing of what changed in them).

Target: ``diff`` within 2x ``columnar_read``; ``agree`` says the diff's counts are the edits made.

    python benchmarks/diff.py [--notes 5000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")  # as clincorp does, before pyarrow is imported

from benchmarks._measure import measure  # noqa: E402
from benchmarks.sdoh_scorer import generate  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "sdoh"
MOVED_EVERY, RELABELLED_EVERY, REMOVED_EVERY = 20, 50, 100


def release(shac: Path, out: Path) -> Path:
    from clinical_corpora.builders.release.pipeline import run
    from clinical_corpora.builders.release.request import ReleaseRequest
    from clinical_corpora.core.manifest import load_manifest

    return run(ReleaseRequest(load_manifest(CORPUS), out, sources={"shac": shac})).folder


def edited_copy(old: Path, new: Path) -> dict[str, int]:
    """``new``: ``old`` with the known edits in its ``sdoh`` config, rehashed; the edits made."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from datasets import Features

    from clinical_corpora.core.hashing import sha256_file

    shutil.copytree(old, new)
    manifest = json.loads((new / "manifest.json").read_text(encoding="utf-8"))
    made = {"moved": 0, "label changed": 0, "removed": 0, "added": 0}
    number = 0
    for path in sorted((new / "data" / "sdoh").glob("*.parquet")):
        table = pq.read_table(path)
        labels = Features.from_arrow_schema(table.schema)["events"].feature["type"].names
        rows = []
        for row in table.to_pylist():
            number += 1
            if number % REMOVED_EVERY == 0:
                made["removed"] += 1
                rows.append({**row, "id": f"{row['id']}-added"})
                made["added"] += 1
                continue
            if number % MOVED_EVERY == 0 and row["events"]:
                trigger = row["events"][0]["trigger"]
                if trigger["end"] < len(row["text"]):
                    trigger["start"], trigger["end"] = trigger["start"] + 1, trigger["end"] + 1
                    trigger["text"] = row["text"][trigger["start"] : trigger["end"]]
                    made["moved"] += 1
            if number % RELABELLED_EVERY == 0 and row["events"]:
                event = row["events"][0]
                event["type_name"] = "Employment" if event["type_name"] != "Employment" else "Alcohol"
                event["type"] = labels.index(event["type_name"])
                made["label changed"] += 1
            rows.append(row)
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
        entry = next(e for e in manifest["outputs"] if e["file"] == path.relative_to(new).as_posix())
        entry["sha256"], entry["rows"] = sha256_file(path), len(rows)
    (new / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return made


def columnar_read(old: str, new: str) -> dict[str, Any]:
    import pyarrow.parquet as pq

    started = time.perf_counter()
    rows = 0
    for folder in (old, new):
        for path in sorted(Path(folder).glob("data/*/*.parquet")):
            rows += pq.read_table(path).num_rows
    return {"work_seconds": time.perf_counter() - started, "rows": rows}


def run_diff(old: str, new: str) -> dict[str, Any]:
    from clinical_corpora.builders.diff.report import diff_releases, open_release

    started = time.perf_counter()
    opened = open_release(Path(old)), open_release(Path(new))
    checked = time.perf_counter()
    summary = diff_releases(*opened).summary()
    finished = time.perf_counter()
    totals: dict[str, int] = {}
    for split in summary.configs["sdoh"].splits.values():
        for kind in ("added", "removed", "changed"):
            totals[kind] = totals.get(kind, 0) + getattr(split, kind)
        for kinds in split.fields.values():
            for kind, count in kinds.items():
                totals[kind] = totals.get(kind, 0) + count
    return {
        "work_seconds": finished - started,
        "check_seconds": checked - started,
        "compare_seconds": finished - checked,
        "reported": totals,
    }


def naive(old: str, new: str) -> dict[str, Any]:
    import pyarrow.parquet as pq

    def rows(folder: str) -> dict[tuple[str, str], dict[str, Any]]:
        found = {}
        for path in sorted(Path(folder).glob("data/*/*.parquet")):
            for row in pq.read_table(path).to_pylist():
                found[(path.parent.name, str(row.get("id")))] = row
        return found

    started = time.perf_counter()
    before, after = rows(old), rows(new)
    changed = sum(1 for key, row in after.items() if key in before and before[key] != row)
    return {"work_seconds": time.perf_counter() - started, "changed": changed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="clincorp-diff-bench-"))
    try:
        generate(work / "shac", args.notes, args.seed)
        old = release(work / "shac" / "gold", work / "releases")
        new = work / "edited" / "sdoh" / old.name
        made = edited_copy(old, new)
        read = measure(columnar_read, str(old), str(new))
        diffed = measure(run_diff, str(old), str(new))
        baseline = measure(naive, str(old), str(new))
        outcome = diffed["result"]
        size = sum(path.stat().st_size for folder in (old, new) for path in folder.glob("data/*/*.parquet"))
        floor = read["result"]["work_seconds"]
        print(
            json.dumps(
                {
                    "notes": args.notes,
                    "parquet_mb_both_releases": round(size / 2**20, 2),
                    "edits": made,
                    "columnar_read": read,
                    "diff": diffed,
                    "naive": baseline,
                    "diff_over_columnar_read": round(outcome["work_seconds"] / floor, 2),
                    "diff_compare_only_over_columnar_read": round(outcome["compare_seconds"] / floor, 2),
                    "naive_over_diff": round(baseline["result"]["work_seconds"] / outcome["work_seconds"], 2),
                    "agree": all(outcome["reported"].get(kind) == count for kind, count in made.items()),
                },
                indent=2,
            )
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
