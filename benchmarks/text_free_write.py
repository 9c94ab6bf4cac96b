"""Write rad_coref's text-free release at MIMIC-III scale, against its floor and the row-by-row way; prints JSON.

Generates (in a temp dir) the synthetic NOTEEVENTS.csv.gz and gold BRAT folder of
``benchmarks/rad_coref_build.py`` at ``--scale`` (638 reports of 60 patients whatever the scale: 272k mention
pairs), releases rad_coref from them, reads the release's source documents once, then runs each of these in
a fresh process (time, CPU and peak RSS its own) from the same full release and documents:

- ``full_rows`` (the floor): the full release's rows read batch by batch and written again through the
  pipeline's writer; a text-free release writes as many rows, with recipes in place of text;
- ``text_free_rows``: ``clincorp release --text-free``'s rows (the corpus's ``source_documents`` hook on
  every row, recipes made column-wise per record batch, the writer);
- ``row_by_row`` (the naive baseline, kept here only): the same rows the way they were first written, each
  row turned into nested dicts, one recipe per string, ``RecordBatch.from_pylist``; its bytes are compared;
- ``leak_gate``: the gate over every file of the text-free release (parquet values and metadata, card,
  the full release's files);
- ``release_text_free``: the whole command after a full release (hook pass, NOTEEVENTS read for the wanted
  documents, rows, leak gate, card, manifest).

    python benchmarks/text_free_write.py [--scale 0.25]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._measure import measure
from benchmarks.mimic_notes import LAYOUTS
from benchmarks.rad_coref_build import REPORTS, write_inputs
from benchmarks.row_recipes import row_recipes
from clinical_corpora.builders.contract.base import BuildContext, load_builder_class
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.release.writer import SplitWriter
from clinical_corpora.builders.text_free.layout import BATCH_ROWS
from clinical_corpora.builders.text_free.leak_gate import leak_gate
from clinical_corpora.builders.text_free.recipes import DocumentGroups, Recipes
from clinical_corpora.builders.text_free.release import (
    document_groups,
    release_text_free,
    write_rows,
)
from clinical_corpora.core.locators import text_sha256
from clinical_corpora.schemas.features import features_for
from clinical_corpora.schemas.licensed import SOURCE_DOCUMENTS, licensed_tree, offset_fields, text_free_features

CORPUS = "rad_coref"


def _setting(release: str, inputs: str) -> tuple[Any, BuildContext, ReleaseView, dict[str, Any]]:
    corpus = find_corpus(CORPUS)
    builder = load_builder_class(corpus.builder)()
    overrides = {"noteevents": Path(inputs) / "NOTEEVENTS.csv.gz", "annotations": Path(inputs)}
    view = ReleaseView(Path(release))
    models = {config: builder.CONFIGS[config] for config in corpus.configs if config in view.configs()}
    return builder, BuildContext(corpus, resolve_sources(corpus, overrides)), view, models


def _digest(folder: Path) -> str:
    """One sha256 over every parquet file's path and bytes under ``data/`` (the rows, not anchors.parquet)."""
    digest = hashlib.sha256()
    for path in sorted((folder / "data").rglob("*.parquet")):
        digest.update(path.relative_to(folder).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


def run_full_rows(release: str, inputs: str, out: str) -> int:
    """The floor: every row of the full release read and written again by the pipeline's writer."""
    _, _, view, models = _setting(release, inputs)
    rows = 0
    for config, model in models.items():
        for split in view.splits(config):
            writer = SplitWriter(Path(out) / config, split, features_for(model))
            for shard in view.shards(config, split):
                for batch in pq.ParquetFile(shard).iter_batches(batch_size=BATCH_ROWS):
                    writer.write(batch)
            writer.close()
            rows += writer.rows
    return rows


def run_text_free_rows(release: str, inputs: str, documents: str, out: str) -> str:
    builder, ctx, view, models = _setting(release, inputs)
    groups = DocumentGroups()
    row_groups = {
        shard: document_groups(builder, ctx, config, shard, groups)
        for config in models
        for shard in view.shards(config)
    }
    texts = pickle.loads(Path(documents).read_bytes())
    write_rows(view, models, Recipes(texts, groups), row_groups, Path(out))
    return _digest(Path(out))


def _wanted(builder: Any, ctx: BuildContext, view: ReleaseView, models: dict[str, Any]) -> set[str]:
    """Every document locator the release's rows name, by the builder's own hook."""
    return {
        locator
        for config in models
        for shard in view.shards(config)
        for batch in view.shard_batches(shard, BATCH_ROWS)
        for row in batch.to_pylist()
        for locator in builder.source_documents(ctx, config, row)
    }


def run_row_by_row(release: str, inputs: str, documents: str, out: str) -> str:
    """The rows as the first text-free writer made them: a pass of the hook over dict rows for the wanted
    documents, then per row nested dicts, a recipe per string and ``from_pylist``."""
    builder, ctx, view, models = _setting(release, inputs)
    wanted = _wanted(builder, ctx, view, models)
    texts = {locator: text for locator, text in pickle.loads(Path(documents).read_bytes()).items() if locator in wanted}
    hashes = {locator: text_sha256(text) for locator, text in texts.items()}
    for config, model in models.items():
        tree = licensed_tree(model)
        features = text_free_features(features_for(model), tree)
        for split in view.splits(config):
            writer = SplitWriter(Path(out) / "data" / config, split, features)
            for shard in view.shards(config, split):
                for batch in pq.ParquetFile(shard).iter_batches(batch_size=BATCH_ROWS):
                    rows = batch.to_pylist()
                    for row in rows:
                        locators = builder.source_documents(ctx, config, row)
                        row_texts = [texts[locator] for locator in locators]
                        row_recipes(row, tree, row_texts, offset_fields(model))
                        row[SOURCE_DOCUMENTS] = [{"locator": loc, "sha256": hashes[loc]} for loc in locators]
                    writer.write(pa.RecordBatch.from_pylist(rows, schema=features.arrow_schema))
            writer.close()
    return _digest(Path(out))


def run_leak_gate(text_free: str, documents: str) -> int:
    texts = pickle.loads(Path(documents).read_bytes())
    gate = leak_gate(Path(text_free), texts.items())
    assert gate.success, gate.describe()
    return int(gate.observed["longest_shared_run"])


def run_release_text_free(release: str, inputs: str) -> str:
    corpus = find_corpus(CORPUS)
    overrides = {"noteevents": Path(inputs) / "NOTEEVENTS.csv.gz", "annotations": Path(inputs)}
    outcome = release_text_free(corpus, Path(release), resolve_sources(corpus, overrides))
    return outcome.status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=0.25, help="fraction of MIMIC-III's 2,083,180 notes")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--skip-naive", action="store_true", help="leave out the row-by-row baseline")
    args = parser.parse_args()
    notes = max(REPORTS * 4, int(LAYOUTS["noteevents"][0] * args.scale))
    with tempfile.TemporaryDirectory(prefix="bench_text_free_") as folder_name:
        folder = Path(folder_name)
        inputs = folder / "inputs"
        inputs.mkdir()
        write_inputs(inputs, notes, args.seed)
        corpus = find_corpus(CORPUS)
        overrides = {"noteevents": inputs / "NOTEEVENTS.csv.gz", "annotations": inputs}
        full = run(ReleaseRequest(corpus, folder / "releases", sources=overrides, max_rejects=0)).folder
        builder, ctx, view, models = _setting(str(full), str(inputs))
        wanted = _wanted(builder, ctx, view, models)
        documents = folder / "documents.pickle"
        documents.write_bytes(pickle.dumps(builder.read_wanted(ctx, wanted)))
        rows = {config: sum(view.rows_in(shard) for shard in view.shards(config)) for config in models}
        results: dict[str, Any] = {"full_rows": measure(run_full_rows, str(full), str(inputs), str(folder / "floor"))}
        results["text_free_rows"] = measure(
            run_text_free_rows, str(full), str(inputs), str(documents), str(folder / "batched")
        )
        if not args.skip_naive:
            results["row_by_row"] = measure(
                run_row_by_row, str(full), str(inputs), str(documents), str(folder / "rows")
            )
        results["release_text_free"] = measure(run_release_text_free, str(full), str(inputs))
        text_free = full.parent / f"{full.name}.text-free"
        results["leak_gate"] = measure(run_leak_gate, str(text_free), str(documents))
        floor = results["full_rows"]
        report: dict[str, Any] = {
            "benchmark": "text_free_write",
            "corpus": CORPUS,
            "scale": args.scale,
            "notes": notes,
            "rows": rows,
            "documents": len(wanted),
            "runs": results,
            "text_free_rows_vs_floor": round(results["text_free_rows"]["seconds"] / floor["seconds"], 2),
            "text_free_rows_cpu_vs_floor": round(results["text_free_rows"]["cpu_seconds"] / floor["cpu_seconds"], 2),
            "leak_gate_vs_floor": round(results["leak_gate"]["seconds"] / floor["seconds"], 2),
            "byte_identical_to_the_release": results["text_free_rows"]["result"] == _digest(text_free),
        }
        if "row_by_row" in results:
            naive = results["row_by_row"]
            report["row_by_row_vs_text_free_rows"] = round(naive["seconds"] / results["text_free_rows"]["seconds"], 2)
            report["row_by_row_cpu_vs_text_free_rows"] = round(
                naive["cpu_seconds"] / results["text_free_rows"]["cpu_seconds"], 2
            )
            report["byte_identical_to_row_by_row"] = naive["result"] == results["text_free_rows"]["result"]
        shutil.rmtree(folder / "floor", ignore_errors=True)
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
