"""``clincorp release --all`` on the embedded samples: wall and CPU time with a breakdown, and the cost of
one expectation when a table's suite runs in one great-expectations validation against the naive way
(one validation per expectation), on the same tables in the same run. Prints JSON.

The release runs as ``clincorp release --all`` does by default (a build process per 64 documents, so one for
each sample; the corpora one after another, each suite checked in the building process once its records are
written), in a fresh process. Breakdown (wall and CPU seconds of that process; on a shared machine CPU is the
steadier): ``imports`` (the CLI, the pipeline and every corpus, before any build), ``great_expectations_import``
(its import and context, when the first suite runs), ``expectations`` (the suites, without that import) and
``build`` (everything else: reading, records, parquet, agreement, cards, hashing). ``worker_cpu_seconds``: the
CPU of the other processes (build workers, hashing).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._measure import measure  # noqa: E402

TARGET_SECONDS = 3.0
STAGES = ("great_expectations_import", "expectations")


def _now() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(begin: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = _now()
    return wall - begin[0], cpu - begin[1]


def release_all(out: str) -> dict[str, Any]:
    """Release every corpus from its samples, timing (wall and CPU, this process) the imports,
    great-expectations' import and the expectation suites."""
    start = _now()
    from clinical_corpora.builders.commands.main import main
    from clinical_corpora.builders.plugins import all_corpora
    from clinical_corpora.validation import expectations

    all_corpora()
    spent = {"imports": _since(start), **dict.fromkeys(STAGES, (0.0, 0.0))}

    def timed(stage: str, function: Any) -> Any:
        def run(*args: Any) -> Any:
            begin = _now()
            try:
                return function(*args)
            finally:
                took = _since(begin)
                spent[stage] = (spent[stage][0] + took[0], spent[stage][1] + took[1])

        return run

    importer, suite_runner = expectations._great_expectations, expectations._run_suite
    expectations._great_expectations = timed("great_expectations_import", importer)
    expectations._run_suite = timed("expectations", suite_runner)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        status = main(["release", "--all", "--out", out])
    total = _since(start)
    gx_import, suites = spent["great_expectations_import"], spent["expectations"]
    spent["expectations"] = (suites[0] - gx_import[0], suites[1] - gx_import[1])  # the suites include the import
    spent["build"] = tuple(total[i] - sum(value[i] for value in spent.values()) for i in (0, 1))
    return {
        "exit_status": status,
        "breakdown_seconds": {stage: round(value[0], 3) for stage, value in spent.items()},
        "breakdown_cpu_seconds": {stage: round(value[1], 3) for stage, value in spent.items()},
    }


def per_expectation_cost(releases: str, repeats: int) -> dict[str, Any]:
    """CPU seconds per expectation over every corpus's suite (best of ``repeats``): one validation per table
    (ours) against one validation per expectation (naive, as before), on the same tables,
    great-expectations already imported."""
    import pandas as pd
    import pyarrow as pa

    from clinical_corpora.builders.contract.base import make_builder
    from clinical_corpora.builders.contract.release_view import ReleaseView
    from clinical_corpora.builders.plugins import all_corpora
    from clinical_corpora.builders.release.checks import quality_tables
    from clinical_corpora.validation import expectations

    gx, _ = expectations._great_expectations()
    suites = []
    for manifest in all_corpora():
        view = ReleaseView(Path(releases) / manifest.name / f"{manifest.name}-{manifest.sample_version}")
        suite = manifest.gates.expectations
        suites.append((suite, quality_tables(make_builder(manifest), view, suite)))
    count = sum(len(suite) for suite, _ in suites)

    def ours() -> None:
        for suite, tables in suites:
            expectations.run_suite(suite, tables)

    def naive() -> None:
        """As before: per corpus a new context, per table an asset, per expectation a validation."""
        from great_expectations.data_context.types.base import ProgressBarsConfig

        for suite, tables in suites:
            context = gx.get_context(mode="ephemeral")
            context.variables.progress_bars = ProgressBarsConfig(globally=False)
            source = context.data_sources.add_pandas("naive")
            for name in dict.fromkeys(e.table for e in suite):
                frame = tables[name]
                if callable(frame):  # a flattened config, read batch by batch: whole, its checked columns
                    frame = pa.concat_tables(frame([c for e in suite if e.table == name for c in e.columns]))
                frame = frame if isinstance(frame, pd.DataFrame) else frame.to_pandas()
                asset = source.add_dataframe_asset(name=name)
                batch = asset.add_batch_definition_whole_dataframe("all").get_batch(
                    batch_parameters={"dataframe": frame}
                )
                for e in suite:
                    if e.table == name:
                        batch.validate(
                            expectations.expectation_class(e.expectation)(**e.kwargs),
                            result_format={"result_format": "SUMMARY", "partial_unexpected_count": 20},
                        )

    timings = {}
    for label, function in (("one_validation_per_table", ours), ("one_validation_per_expectation", naive)):
        best = float("inf")
        for _ in range(repeats):
            begin = time.process_time()
            function()
            best = min(best, time.process_time() - begin)
        timings[label] = {"cpu_seconds": round(best, 3), "ms_per_expectation": round(1000 * best / count, 2)}
    return {"expectations": count, **timings}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="clincorp-bench-"))
    try:
        release = measure(release_all, str(work / "releases"))
        cost = measure(per_expectation_cost, str(work / "releases"), 5)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    suites = cost["result"]
    report = {
        "benchmark": "release_all_samples",
        "release_all": _run(release),
        "per_expectation": suites,
        "suite_speedup_vs_naive": round(
            suites["one_validation_per_expectation"]["cpu_seconds"] / suites["one_validation_per_table"]["cpu_seconds"],
            2,
        ),
        # the floor: the imports alone, before any build or check
        "floor_cpu_seconds": round(
            sum(
                release["result"]["breakdown_cpu_seconds"][stage] for stage in ("imports", "great_expectations_import")
            ),
            3,
        ),
        "target_seconds": TARGET_SECONDS,
        "within_target": release["seconds"] <= TARGET_SECONDS,
    }
    print(json.dumps(report, indent=2))


def _run(measured: dict[str, Any]) -> dict[str, Any]:
    keys = ("seconds", "cpu_seconds", "worker_cpu_seconds", "peak_rss_mb", "worker_peak_rss_mb")
    return {**{key: measured[key] for key in keys}, **measured["result"]}


if __name__ == "__main__":
    main()
