"""Rehydrate rad_coref's text-free release against a MIMIC-III-scale NOTEEVENTS; prints JSON.

For each ``--scales`` fraction of MIMIC-III's 2,083,180 notes, generates (in a temp dir) the synthetic
NOTEEVENTS.csv.gz and gold BRAT folder of ``benchmarks/rad_coref_build.py`` (638 annotated reports of 60
patients spread over the whole file, the last row included), releases rad_coref from them and writes its
text-free variant. Then, each in a fresh process (peak RSS is its own):

- ``reader``: ``iter_noteevents`` keeping the 638 ROW_IDs, the floor rehydration cannot beat;
- ``rehydrate``: ``clincorp rehydrate`` of the text-free release (both configs, every mention pair),
  checked byte for byte against the full release.

Rehydration runs at the reader's speed when ``rehydrate_vs_reader`` is near 1, and with flat memory when
its peak RSS does not grow from the smaller scale to the larger.

    python benchmarks/rehydrate.py [--scales 0.05 0.25]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._measure import measure
from benchmarks.mimic_notes import LAYOUTS
from benchmarks.rad_coref_build import REPORTS, write_inputs
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.rehydrate.request import RehydrateRequest
from clinical_corpora.builders.rehydrate.run import rehydrate
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.sources.mimic.notes import iter_noteevents
from clinical_corpora.builders.text_free.release import release_text_free
from clinical_corpora.core.release_records import FULL_FOLDER

FLAT_RSS_TOLERANCE_MB = 50.0


def run_reader(noteevents: str, row_ids: list[int]) -> int:
    return sum(1 for _ in iter_noteevents(noteevents, row_ids))


def run_rehydrate(text_free: str, noteevents: str, out: str) -> str:
    return rehydrate(RehydrateRequest(Path(text_free), Path(out), sources={"noteevents": Path(noteevents)})).status


def _bytes(folder: Path, exclude: str | None = None) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and exclude not in p.parts)


def one_scale(scale: float, seed: int) -> dict[str, object]:
    rows = max(REPORTS * 4, int(LAYOUTS["noteevents"][0] * scale))
    with tempfile.TemporaryDirectory(prefix="bench_rehydrate_") as folder_name:
        folder = Path(folder_name)
        inputs = folder / "inputs"
        inputs.mkdir()
        size, wanted = write_inputs(inputs, rows, seed)
        noteevents = inputs / "NOTEEVENTS.csv.gz"
        corpus = find_corpus("rad_coref")
        overrides = {"noteevents": noteevents, "annotations": inputs}
        full = run(ReleaseRequest(corpus, folder / "releases", sources=overrides, max_rejects=0)).folder
        text_free = release_text_free(corpus, full, resolve_sources(corpus, overrides)).folder
        reader = measure(run_reader, str(noteevents), [int(row_id) for row_id in wanted])
        restored = measure(run_rehydrate, str(text_free), str(noteevents), str(folder / "restored"))
        for outcome in (reader, restored):
            outcome["mb_per_s"] = round(size / 1e6 / outcome["seconds"], 1)
        return {
            "scale": scale,
            "notes": rows,
            "uncompressed_mb": round(size / 1e6, 1),
            "full_release_bytes": _bytes(full),
            "text_free_release_bytes": _bytes(text_free),
            "text_free_data_bytes": _bytes(text_free, FULL_FOLDER),
            "reader": reader,
            "rehydrate": restored,
            "rehydrate_vs_reader": round(restored["seconds"] / reader["seconds"], 2),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", type=float, nargs=2, default=[0.05, 0.25], help="two fractions of 2,083,180")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    results = [one_scale(scale, args.seed) for scale in sorted(args.scales)]
    small, large = (result["rehydrate"] for result in results)
    report = {
        "benchmark": "rehydrate",
        "corpus": "rad_coref",
        "reports": REPORTS,
        "runs": results,
        "peak_rss_growth_mb": round(large["peak_rss_mb"] - small["peak_rss_mb"], 1),  # type: ignore[index]
        "flat_memory": large["peak_rss_mb"] - small["peak_rss_mb"] <= FLAT_RSS_TOLERANCE_MB,  # type: ignore[index]
        "byte_identical": all(result["rehydrate"]["result"] == "released" for result in results),  # type: ignore[index]
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
