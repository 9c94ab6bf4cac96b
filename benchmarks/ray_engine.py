"""SDOH released on Ray against local worker processes, on this machine (JSON out).

Generates ``--notes`` synthetic SHAC-layout notes (``benchmarks.sdoh_scorer.generate``) and runs
``clincorp release sdoh --source shac=<notes>`` as a command three ways: ``--workers 1`` (one process, the
floor of the work itself), ``--workers 2`` (this machine's process pool) and ``--engine ray --workers 2`` (a
Ray started for the run with two CPUs, tasks two at a time). For each: wall seconds; CPU seconds and peak
memory of the command's whole process tree (the release process, its workers, Ray's raylet, object store and
worker processes), sampled from ``/proc`` every 0.1 s, so a process living less than that is missed; and
whether the release's bytes equal those of ``--workers 1``. Ray's own start (``ray.init``: a few seconds,
paid once per command) is measured alone and reported beside the ratios.

    python benchmarks/ray_engine.py --notes 10000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.sdoh_scorer import generate  # noqa: E402

CLINCORP = [sys.executable, "-c", "from clinical_corpora.builders.commands.main import entry; entry()"]
TICKS = os.sysconf("SC_CLK_TCK")
PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20
SAMPLE_SECONDS = 0.1


def _processes() -> dict[int, tuple[int, float, float]]:
    """Every process's parent, CPU seconds and resident MB, from /proc."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            resident = int(Path(entry.path, "statm").read_text().split()[1])
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        found[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS, resident * PAGE_MB)
    return found


def _tree(root: int, processes: dict[int, tuple[int, float, float]]) -> set[int]:
    tree, grew = {root}, True
    while grew:
        grew = False
        for pid, (parent, _, _) in processes.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return tree


def run_sampled(command: list[str]) -> dict[str, float]:
    """Wall seconds, CPU seconds and peak resident MB of ``command``'s process tree (sampled)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    cpu: dict[int, float] = {}
    peak = 0.0
    while process.poll() is None:
        processes = _processes()
        tree = _tree(process.pid, processes)
        for pid in tree:
            cpu[pid] = processes[pid][1]
        peak = max(peak, sum(processes[pid][2] for pid in tree))
        time.sleep(SAMPLE_SECONDS)
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command[3:])} failed: {process.stderr.read().decode()[-2000:]}")
    return {"seconds": round(seconds, 2), "cpu_seconds": round(sum(cpu.values()), 2), "peak_rss_mb": round(peak, 1)}


def tree_digest(folder: Path) -> str:
    """One sha256 over every file's relative path and bytes."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


RAY_START = (
    "import logging, time, ray\n"
    "t = time.perf_counter()\n"
    "ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)\n"
    "ray.get(ray.remote(lambda: 1).remote())\n"
    "ray.shutdown()\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ray-engine-bench-"))
    ways = {
        "workers_1": ["--workers", "1"],
        "workers_2": ["--workers", "2"],
        "ray_2": ["--engine", "ray", "--workers", "2"],
    }
    try:
        generate(work, args.notes, args.seed)
        runs, digests = {}, {}
        for name, options in ways.items():
            out = work / f"out-{name}"
            release = [*CLINCORP, "release", "sdoh", "--source", f"shac={work / 'gold'}", "--out", str(out), *options]
            runs[name] = run_sampled(release)
            digests[name] = tree_digest(out)
        ray_start = run_sampled([sys.executable, "-c", RAY_START])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    floor = runs["workers_1"]
    report = {
        "notes": args.notes,
        "cores": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        **runs,
        "ray_start_alone": ray_start,
        "ratios_to_workers_1": {
            name: {
                measure: round(run[measure] / floor[measure], 2)
                for measure in ("seconds", "cpu_seconds", "peak_rss_mb")
            }
            for name, run in runs.items()
            if name != "workers_1"
        },
        "bytes_identical_to_workers_1": {name: digest == digests["workers_1"] for name, digest in digests.items()},
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
