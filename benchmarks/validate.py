"""``clincorp validate`` against ``datasets.load_dataset`` of the same release (JSON out).

Releases ``--notes`` synthetic SHAC-layout notes (``benchmarks.sdoh_scorer.generate``) as the ``sdoh``
corpus, then measures, each in a fresh process:

- ``validate``: ``clincorp validate`` (file hashes, manifest, schema, every record decoded and validated
  against its record model, the expectation suite);
- ``load_dataset``: what a modeller's first load does, into an empty cache: ``datasets.load_dataset`` of every
  config of the release (parquet into Arrow cache files);
- ``arrow_read``: every parquet file read with pyarrow (the floor of reading the release at all).

Each is a command run to its end, imports included (as a user runs it), in wall and CPU seconds (the
machine may be shared: CPU seconds are the steadier figure). Target: validate within 3x load_dataset.

    python benchmarks/validate.py --notes 20000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")  # as clincorp does, before pyarrow is imported

from benchmarks._measure import measure  # noqa: E402
from benchmarks.sdoh_scorer import generate  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "sdoh"
TARGET = 3.0


def release(shac: str, out: str) -> str:
    from clinical_corpora.builders.release.pipeline import run
    from clinical_corpora.builders.release.request import ReleaseRequest
    from clinical_corpora.core.manifest import load_manifest

    run(ReleaseRequest(load_manifest(CORPUS), Path(out), sources={"shac": Path(shac)}))
    return str(next(Path(out).glob("sdoh/*/manifest.json")).parent)


LOAD = """
import sys
from datasets import load_dataset
for config in sys.argv[3:]:
    load_dataset(sys.argv[1], config, cache_dir=sys.argv[2])
"""
READ = """
import sys
from pathlib import Path
import pyarrow.parquet as pq
for path in sorted(Path(sys.argv[1], "data").rglob("*.parquet")):
    pq.read_table(path)
"""


def command(argv: list[str]) -> dict[str, float]:
    """Wall and CPU seconds of a command run to its end (imports included, as a user runs it)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"seconds": round(wall, 3), "cpu_seconds": round(cpu, 3)}


def configs(folder: str) -> list[str]:
    import yaml

    front = Path(folder, "README.md").read_text(encoding="utf-8").split("---")[1]
    return [config["config_name"] for config in yaml.safe_load(front)["configs"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        generate(Path(work), args.notes, args.seed)
        folder = measure(release, str(Path(work, "gold")), str(Path(work, "out")))["result"]
        clincorp = str(Path(sys.executable).with_name("clincorp"))
        validated = command([clincorp, "validate", folder])
        loaded = command([sys.executable, "-c", LOAD, folder, str(Path(work, "cache")), *configs(folder)])
        floor = command([sys.executable, "-c", READ, folder])
    ratio = validated["seconds"] / loaded["seconds"]
    cpu_ratio = validated["cpu_seconds"] / loaded["cpu_seconds"]
    print(
        json.dumps(
            {
                "notes": args.notes,
                "validate": validated,
                "load_dataset": loaded,
                "arrow_read": floor,
                "validate_over_load_dataset": {"wall": round(ratio, 2), "cpu": round(cpu_ratio, 2)},
                "load_dataset_over_arrow_read": {
                    "wall": round(loaded["seconds"] / floor["seconds"], 2),
                    "cpu": round(loaded["cpu_seconds"] / floor["cpu_seconds"], 2),
                },
                "target": f"validate <= {TARGET}x load_dataset",
                "met": {"wall": ratio <= TARGET, "cpu": cpu_ratio <= TARGET},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
