"""SDOH at scale: release a synthetic SHAC-layout corpus and score it, against a naive build (JSON out).

Generates ``--notes`` synthetic social-history notes (gold) and perturbed predictions with
``benchmarks.sdoh_scorer.generate``, then measures, each in a fresh process (its own peak RSS):

- ``release``: ``clinical_corpora.builders.release.pipeline.run`` of the ``sdoh`` corpus with ``--source shac=<gold>``
  (build, parquet, expectation suite, statistics, agreement on the embedded double sample);
- ``naive_build``: the same records held in memory, written with ``Dataset.from_list().to_parquet``
  (no gates);
- ``score``: ``clinical_corpora.corpora.sdoh.scoring.score_folders`` gold against predictions, 1 and 2 workers;
- ``hash_inputs``: the gold's inputs.jsonl lines (``builders.release.inputs.fingerprint_inputs``), against a naive
  pathlib walk hashing each file with ``sha256_file`` and a ``stat`` (the same lines: ``agree``);
- ``card_tables``: the card statistics and quality tables of the release, a batch of notes at a time,
  against every flattened table of the config in pandas at once (the former ``ReleaseView.tables``): peak RSS;
- ``release_peak_rss``: ``clincorp release sdoh --source shac=<gold>`` run as a command at a tenth of
  ``--notes`` and at ``--notes`` (the peak RSS of its largest process: the main one, the workers, the
  hashing and expectation processes), against the naive build at both sizes: the release's should be flat
  (within 15%), the naive build's grows with the notes.

Rates are given per wall second and per CPU second (the machine may be shared). Targets:
>= 2,000 notes/s built, >= 5,000 note pairs/s scored with 2 workers, peak RSS <= 1 GB, the release's peak
RSS within 15% from a tenth of the notes to all of them.

    python benchmarks/sdoh_build.py --notes 50000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")  # as clincorp does, before pyarrow is imported

from benchmarks._measure import measure  # noqa: E402
from benchmarks.sdoh_scorer import generate  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "sdoh"


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (the scoring workers)."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def usage_since(started: float) -> dict[str, float]:
    """CPU seconds since ``started`` (children included) and the children's peak RSS."""
    children_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"cpu_seconds": cpu_seconds() - started, "children_peak_rss_mb": children_kib / 1024}


def pipeline_release(shac: str, out: str) -> dict[str, float]:
    started = cpu_seconds()
    from clinical_corpora.builders.release.pipeline import run
    from clinical_corpora.builders.release.request import ReleaseRequest
    from clinical_corpora.core.manifest import load_manifest

    run(ReleaseRequest(load_manifest(CORPUS), Path(out), sources={"shac": Path(shac)}))
    return usage_since(started)


def naive_build(shac: str, out: str) -> dict[str, float]:
    started = cpu_seconds()
    from datasets import Dataset

    from clinical_corpora.builders.contract.base import BuildContext
    from clinical_corpora.core.manifest import load_manifest
    from clinical_corpora.corpora.sdoh.builder import SdohBuilder
    from clinical_corpora.schemas.features import features_for

    ctx = BuildContext(load_manifest(CORPUS), {"shac": Path(shac)})
    rows = [row.record.model_dump() for row in SdohBuilder().generate(ctx) if row.config == "sdoh"]
    features = features_for(SdohBuilder.CONFIGS["sdoh"])
    Dataset.from_list([features.encode_example(row) for row in rows], features=features).to_parquet(
        str(Path(out) / "naive.parquet")
    )
    return usage_since(started)


def score(gold: str, predicted: str, workers: int) -> dict[str, float]:
    started = cpu_seconds()
    from clinical_corpora.corpora.sdoh.scoring import score_folders

    score_folders(gold, predicted, workers=workers)
    return usage_since(started)


def hash_inputs(shac: str, out: str, naive: bool) -> dict[str, float]:
    """inputs.jsonl lines of the gold folder, written to ``out`` (to compare the two ways)."""
    started = cpu_seconds()
    from clinical_corpora.builders.release.inputs import fingerprint_inputs, resolve_sources
    from clinical_corpora.core.hashing import sha256_file
    from clinical_corpora.core.manifest import load_manifest

    manifest = load_manifest(CORPUS)
    if naive:
        root = Path(shac)
        files = sorted((path for path in root.rglob("*") if path.is_file()), key=lambda p: p.relative_to(root).parts)
        inputs = [
            {
                "source": "shac",
                "file": p.relative_to(root).as_posix(),
                "sha256": sha256_file(p),
                "bytes": p.stat().st_size,
            }
            for p in files
        ]
    else:
        inputs = fingerprint_inputs(manifest, resolve_sources(manifest, {"shac": Path(shac)}), {"shac"})
    Path(out).write_text("".join(json.dumps(item) + "\n" for item in inputs), encoding="utf-8")
    return usage_since(started)


def card_tables(release: str, whole: bool) -> dict[str, float]:
    """The sdoh card statistics and quality tables of a release, a batch of notes at a time or (``whole``, the
    former ``ReleaseView.tables``) from every flattened table of the config in pandas at once."""
    started = cpu_seconds()
    from datasets import Features

    from clinical_corpora.builders.contract.release_view import ReleaseView
    from clinical_corpora.core.manifest import load_manifest
    from clinical_corpora.corpora.sdoh.builder import SdohBuilder
    from clinical_corpora.validation.tables import flatten_config

    def whole_config(view: ReleaseView, config: str, fields: list[str], *_: object) -> Iterator[dict]:
        chosen = Features({name: view.features(config)[name] for name in fields})
        flat = flatten_config(config, view.arrow(config, columns=fields), chosen, view.split_labels(config))
        yield {name: table.to_pandas() for name, table in flat.items()}

    if whole:
        ReleaseView.table_frames = whole_config  # type: ignore[method-assign,assignment]
    view = ReleaseView(Path(release))
    SdohBuilder().statistics(view)
    expectations = load_manifest(CORPUS).gates.expectations
    for name, table in SdohBuilder().quality_tables(view).items():
        if callable(table):  # read as the suite reads it: the columns its expectations name, batch by batch
            for _ in table([column for e in expectations if e.table == name for column in e.columns]):
                pass
    return usage_since(started)


def command_release_peak_rss(shac: str, out: str) -> float:
    """Peak RSS (MB) of ``clincorp release sdoh`` on ``shac``: its largest process, measured by a process of its
    own that waits for nothing else (a child's ru_maxrss is the largest of every child waited for)."""
    clincorp = [sys.executable, "-c", "from clinical_corpora.builders.commands.main import entry; entry()"]
    command = [*clincorp, "release", "sdoh", "--source", f"shac={shac}"]
    measuring = (
        "import resource, subprocess, sys\n"
        f"subprocess.run({[*command, '--out', out]!r}, check=True, stdout=subprocess.DEVNULL, "
        "stderr=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    done = subprocess.run([sys.executable, "-c", measuring], check=True, capture_output=True, text=True)
    return round(int(done.stdout.split()[-1]) / 1024, 1)


def release_peak_rss(work: Path, gold: str, notes: int, seed: int, naive: dict | None) -> dict:
    """The command's peak RSS at a tenth of ``notes`` and at ``notes``, beside the naive build's."""
    sizes: dict = {}
    for size in sorted({max(1, notes // 10), notes}):
        folder = gold
        if size != notes:
            generate(work / f"rss-{size}", size, seed)
            folder = str(work / f"rss-{size}" / "gold")
        sizes[size] = {"release_mb": command_release_peak_rss(folder, str(work / f"rss-out-{size}"))}
        if naive is not None:
            run = naive if size == notes else measure(naive_build, folder, str(work))
            sizes[size]["naive_build_mb"] = max(run["peak_rss_mb"], run["result"]["children_peak_rss_mb"])
    small, large = (sizes[size]["release_mb"] for size in sorted(sizes))
    return {**{str(size): values for size, values in sizes.items()}, "release_growth": round(large / small, 3)}


def rates(run: dict, notes: int, unit: str) -> dict:
    """Throughput by wall clock and by CPU second (the machine may be shared), and peak RSS."""
    return {
        "seconds": run["seconds"],
        f"{unit}_per_s": round(notes / run["seconds"]),
        f"{unit}_per_cpu_s": round(notes / run["result"]["cpu_seconds"]),
        "peak_rss_mb": max(run["peak_rss_mb"], run["result"]["children_peak_rss_mb"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-naive", action="store_true", help="skip the in-memory baseline")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sdoh-bench-"))
    try:
        generate(work, args.notes, args.seed)
        gold, predicted = str(work / "gold"), str(work / "pred")
        release = measure(pipeline_release, gold, str(work / "out"))
        [released] = (work / "out" / "sdoh").iterdir()
        tables = {way: measure(card_tables, str(released), way == "whole") for way in ("batched", "whole")}
        hashing = {
            naive: measure(hash_inputs, gold, str(work / f"inputs-{naive}.jsonl"), naive) for naive in (False, True)
        }
        hashes_agree = (work / "inputs-False.jsonl").read_bytes() == (work / "inputs-True.jsonl").read_bytes()
        scores = {workers: measure(score, gold, predicted, workers) for workers in (1, 2)}
        naive = None if args.skip_naive else measure(naive_build, gold, str(work))
        peak_rss = release_peak_rss(work, gold, args.notes, args.seed, naive)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report: dict = {
        "notes": args.notes,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "release": rates(release, args.notes, "notes"),
        **{f"score_{workers}_workers": rates(run, args.notes, "pairs") for workers, run in scores.items()},
        "hash_inputs": {
            "files": 2 * args.notes,
            "cpu_seconds": round(hashing[False]["result"]["cpu_seconds"], 3),
            "naive_cpu_seconds": round(hashing[True]["result"]["cpu_seconds"], 3),
            "agree": hashes_agree,
        },
        "card_tables": {
            way: {
                "seconds": run["seconds"],
                "cpu_seconds": round(run["result"]["cpu_seconds"], 3),
                "peak_rss_mb": run["peak_rss_mb"],
            }
            for way, run in tables.items()
        },  # fmt: skip
    }
    if naive is not None:
        report["naive_build"] = rates(naive, args.notes, "notes")
        report["release_speedup_vs_naive"] = round(naive["seconds"] / release["seconds"], 2)
        report["memory_ratio_naive_over_release"] = round(
            report["naive_build"]["peak_rss_mb"] / report["release"]["peak_rss_mb"], 2
        )
    report["release_peak_rss"] = peak_rss
    report["targets_met"] = {
        "release_peak_rss_flat_within_15%": peak_rss["release_growth"] <= 1.15,
        "release_notes_per_s>=2000": report["release"]["notes_per_s"] >= 2000,
        "score_2_workers_pairs_per_s>=5000": report["score_2_workers"]["pairs_per_s"] >= 5000,
        "peak_rss<=1GB": max(report[part]["peak_rss_mb"] for part in ("release", "score_1_workers", "score_2_workers"))
        <= 1024,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
