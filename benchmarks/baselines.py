"""Each corpus's baselines (``clincorp baseline``) on ten times its sample, against reading the same rows with
pyarrow, and sdoh's and odie_anaphora's at the real corpora's size; prints JSON.

For each corpus its sample release is made here, then replicated (``benchmarks/replicated_release.py``: every
record copied under new ids; snomed_el's terminology once). Each baseline runs as ``clincorp baseline`` runs it
(``clinical_corpora.api.baseline``, every split, predictions written), in a fresh process; so does the floor:
the configs the baseline reads, read with ``pyarrow.parquet.read_table(...).to_pylist()`` (every row as Python
values, nothing decoded or predicted). ``items_per_second`` counts the corpus's units (clicr queries, rad_coref
patients, notes otherwise) per wall second; ``times_floor`` is the baseline's wall time over the floor's.
clicr sim-entity is run twice: training word2vec on the train split (``--embedding-min-count 5``, the paper's
750 dimensions), then given the vectors it saved (prediction alone).

At the real size, sdoh's sample is copied up to SHAC's 4,031 notes (Lybarger et al. 2021) and odie_anaphora's to
the i2b2/VA 2011 coreference corpus's 251 notes (Uzuner et al. 2012); target: each baseline under a minute of
wall time on two cores.

    python benchmarks/baselines.py [--copies 10]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._measure import measure  # noqa: E402
from benchmarks.replicated_release import RENAMERS, replicated  # noqa: E402
from clinical_corpora.builders.commands.main import main as clincorp  # noqa: E402

SHAC_NOTES, I2B2_COREFERENCE_NOTES = 4_031, 251
SIM_ENTITY_TRAINING = ("--embedding-min-count", "5", "--save-word-vectors")


@dataclass(frozen=True)
class Corpus:
    """What a corpus's baselines read: ``configs`` (replicated), ``once`` (copied as they are), the config whose
    rows are the items counted, and each baseline's extra arguments."""

    configs: tuple[str, ...]
    items: str
    baselines: dict[str, tuple[str, ...]]
    once: tuple[str, ...] = field(default=())


CORPORA = {
    "clicr": Corpus(("clicr", "clicr_documents"), "clicr", {"maxfreq-entity": (), "rand-entity": ()}),
    "rad_coref": Corpus(("rad_coref",), "rad_coref", {"string-match": ()}),
    "odie_anaphora": Corpus(("odie_anaphora",), "odie_anaphora", {"exact-string": (), "head-match": ()}),
    "snomed_el": Corpus(("snomed_el",), "snomed_el", {"dictionary": ()}, once=("concepts",)),
    "sdoh": Corpus(("sdoh",), "sdoh", {"rules": ()}),
}


def release_sample(corpus: str, out: str) -> str:
    from clinical_corpora.builders.plugins import find_corpus
    from clinical_corpora.builders.release.pipeline import run
    from clinical_corpora.builders.release.request import ReleaseRequest

    return str(run(ReleaseRequest(find_corpus(corpus), Path(out))).folder)


def run_baseline(corpus: str, release: str, name: str, extra: tuple[str, ...], out: str) -> int:
    """The baseline run as the command runs it (imports done before the clock starts); the files it wrote."""
    argv = ["baseline", corpus, release, "--name", name, *extra, "--out", out]
    with open(os.devnull, "w") as quiet:
        stdout, sys.stdout = sys.stdout, quiet
        try:
            status = clincorp(argv)
        finally:
            sys.stdout = stdout
    if status != 0:
        raise RuntimeError(f"clincorp {' '.join(argv)} failed")
    return sum(1 for path in Path(out).iterdir() if path.is_file())


def read_rows(release: str, configs: tuple[str, ...]) -> int:
    """The floor: every row of ``configs`` read with pyarrow as Python values."""
    import pyarrow.parquet as pq

    from clinical_corpora.builders.contract.release_view import ReleaseView

    view = ReleaseView(Path(release))
    return sum(len(pq.read_table(shard).to_pylist()) for config in configs for shard in view.shards(config))


def count_items(release: Path, config: str) -> int:
    from clinical_corpora.builders.contract.release_view import ReleaseView

    return sum(ReleaseView.rows_in(shard) for shard in ReleaseView(release).shards(config))


def timed(corpus: str, release: Path, runs: dict[str, tuple[str, ...]], out: Path) -> dict[str, Any]:
    """Each baseline of ``runs`` and the floor on ``release``, with items per second and the ratio."""
    spec = CORPORA[corpus]
    items = count_items(release, spec.items)
    floor = measure(read_rows, str(release), (*spec.configs, *spec.once))
    report: dict[str, Any] = {"items": items, "read_with_pyarrow": _rates(floor, items)}
    for name, extra in runs.items():
        baseline = name.partition(" ")[0]
        measured = measure(run_baseline, corpus, str(release), baseline, extra, str(out / name.replace(" ", "_")))
        report[name] = {**_rates(measured, items), "times_floor": round(measured["seconds"] / floor["seconds"], 1)}
    return report


def _rates(measured: dict[str, Any], items: int) -> dict[str, Any]:
    return {
        "seconds": measured["seconds"],
        "cpu_seconds": measured["cpu_seconds"],
        "peak_rss_mb": measured["peak_rss_mb"],
        "items_per_second": round(items / measured["seconds"], 1),
    }


def _runs(corpus: str, out: Path) -> dict[str, tuple[str, ...]]:
    runs = dict(CORPORA[corpus].baselines)
    if corpus == "clicr":
        vectors = out / "clicr" / "sim-entity_trained" / "word_vectors.txt"
        runs |= {
            "sim-entity trained": SIM_ENTITY_TRAINING,
            "sim-entity given-vectors": ("--word-vectors", str(vectors)),
        }
    return runs


def at_size(corpus: str, sample: Path, notes: int, folder: Path) -> dict[str, Any]:
    """The corpus's sample copied until it holds at least ``notes`` notes, and its baselines timed on it."""
    spec = CORPORA[corpus]
    copies = math.ceil(notes / count_items(sample, spec.items))
    release = replicated(sample, spec.configs, RENAMERS[corpus], folder / "release", copies, spec.once)
    report = timed(corpus, release, spec.baselines, folder / "predictions")
    slowest = max(report[name]["seconds"] for name in spec.baselines)
    return {"target_notes": notes, **report, "under_a_minute": slowest < 60}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--copies", type=int, default=10, help="how many times each sample is copied")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_baselines_") as temporary:
        folder = Path(temporary)
        os.environ["CLINCORP_CACHE"] = str(folder / "cache")  # the UMLS matcher index, not ~/.cache
        samples = {
            corpus: Path(measure(release_sample, corpus, str(folder / "samples"))["result"]) for corpus in CORPORA
        }
        report: dict[str, Any] = {"benchmark": "baselines", "copies": args.copies, "cores": os.cpu_count()}
        for corpus, spec in CORPORA.items():
            large = replicated(
                samples[corpus], spec.configs, RENAMERS[corpus], folder / "large" / corpus, args.copies, spec.once
            )
            report[corpus] = timed(corpus, large, _runs(corpus, folder / "out"), folder / "out" / corpus)
        report["real_size"] = {
            "sdoh (SHAC)": at_size("sdoh", samples["sdoh"], SHAC_NOTES, folder / "shac"),
            "odie_anaphora (i2b2/VA 2011)": at_size(
                "odie_anaphora", samples["odie_anaphora"], I2B2_COREFERENCE_NOTES, folder / "i2b2"
            ),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
