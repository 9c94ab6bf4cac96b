"""``clincorp view`` at the real SHAC size: milliseconds per document page, against reading the same release
with ``datasets.load_dataset`` and against a naive viewer that holds every row and page in memory (JSON out).

Generates ``--notes`` synthetic social-history notes in SHAC's BRAT layout (``benchmarks.sdoh_scorer.generate``;
the real SHAC has 4,031 notes), releases them as the ``sdoh`` corpus, then measures, each in a fresh process
(its own peak RSS; wall and CPU seconds, since the machine may be shared):

- ``view``: ``clincorp view`` of the release (a page per note, the index), at a tenth of the notes and at all
  of them: its peak RSS should stay flat (pages written as the rows come, a batch at a time);
- ``naive_view``: the same pages from every row decoded at once (``ReleaseView.rows`` into a list) and every
  page rendered into memory before any is written;
- ``load_dataset``: ``datasets.load_dataset(release, "sdoh")`` into a fresh cache (what a user waits for to
  read the release in Python);
- ``read_rows``: decoding every row of the release without drawing anything (the floor of the viewer's
  reading).

Targets (issue 26): <= 200 ms per document; the real SHAC size (4,031 notes) in under a minute.

    python benchmarks/view.py --notes 4031
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")  # as clincorp does, before pyarrow is imported

from benchmarks._measure import measure  # noqa: E402
from benchmarks.sdoh_scorer import generate  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "sdoh"


def release(shac: str, out: str) -> str:
    from clinical_corpora.builders.release.pipeline import run
    from clinical_corpora.builders.release.request import ReleaseRequest
    from clinical_corpora.core.manifest import load_manifest

    return str(run(ReleaseRequest(load_manifest(CORPUS), Path(out), sources={"shac": Path(shac)})).folder)


def view(folder: str, out: str) -> int:
    from clinical_corpora.builders.view.reading import open_release
    from clinical_corpora.builders.view.writer import write_view

    return write_view(open_release(Path(folder)), Path(out)).documents


def naive_view(folder: str, out: str) -> int:
    """Every row decoded into one list, every page rendered into memory, then written."""
    from clinical_corpora.builders.contract.release_view import ReleaseView
    from clinical_corpora.builders.view.reading import open_release
    from clinical_corpora.builders.view.writer import PageWriter, environment, page_name
    from clinical_corpora.corpora.sdoh.display import note_display

    writer = PageWriter(environment(), open_release(Path(folder)), Path(out))
    notes = list(ReleaseView(Path(folder)).rows("sdoh"))
    taken: set[str] = set()
    pages = {}
    for split, note in notes:
        doc = note_display(split, note)
        name = page_name(doc.id, taken)
        pages[name] = writer.render(doc, name, None, None)[0]
    Path(out).mkdir(parents=True)
    for name, html in pages.items():
        (Path(out) / name).write_text(html, encoding="utf-8")
    return len(pages)


def load(folder: str, cache: str) -> int:
    from datasets import load_dataset

    dataset = load_dataset(folder, "sdoh", cache_dir=cache)
    return sum(len(split) for split in dataset.values())


def read_rows(folder: str) -> int:
    from clinical_corpora.builders.view.reading import open_release

    opened = open_release(Path(folder))
    return sum(1 for _ in opened.rows()("sdoh", None))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=4031)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="view-bench-"))
    try:
        results: dict = {"notes": args.notes, "cpus": os.cpu_count()}
        sizes = sorted({max(1, args.notes // 10), args.notes})
        for size in sizes:
            generate(work / f"shac-{size}", size, args.seed)
            folder = measure(release, str(work / f"shac-{size}" / "gold"), str(work / f"releases-{size}"))["result"]
            run = measure(view, folder, str(work / f"view-{size}"))
            results[f"view_{size}"] = {
                "documents": run["result"],
                "seconds": run["seconds"],
                "cpu_seconds": run["cpu_seconds"],
                "ms_per_document": round(1000 * run["seconds"] / run["result"], 2),
                "cpu_ms_per_document": round(1000 * run["cpu_seconds"] / run["result"], 2),
                "peak_rss_mb": run["peak_rss_mb"],
            }
        folder = str(next((work / f"releases-{args.notes}" / "sdoh").iterdir()))
        naive = measure(naive_view, folder, str(work / "naive"))
        loaded = measure(load, folder, str(work / "hf-cache"))
        floor = measure(read_rows, folder)
        full = results[f"view_{args.notes}"]
        results["naive_view"] = {key: naive[key] for key in ("seconds", "cpu_seconds", "peak_rss_mb")}
        results["load_dataset"] = {"seconds": loaded["seconds"], "cpu_seconds": loaded["cpu_seconds"]}
        results["read_rows"] = {"seconds": floor["seconds"], "cpu_seconds": floor["cpu_seconds"]}
        results["ratios"] = {
            "view_vs_load_dataset": round(full["seconds"] / loaded["seconds"], 2),
            "view_vs_load_dataset_cpu": round(full["cpu_seconds"] / loaded["cpu_seconds"], 2),
            "view_vs_read_rows_cpu": round(full["cpu_seconds"] / floor["cpu_seconds"], 2),
            "naive_peak_rss_vs_view": round(naive["peak_rss_mb"] / full["peak_rss_mb"], 2),
            "view_peak_rss_growth_10x_notes": round(
                full["peak_rss_mb"] / results[f"view_{sizes[0]}"]["peak_rss_mb"], 3
            ),
        }
        results["targets"] = {
            "ms_per_document_at_most_200": full["ms_per_document"] <= 200,
            "shac_size_under_a_minute": full["seconds"] < 60,
        }
        print(json.dumps(results, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
