"""A run's records into the release's parquet shards: built (in worker processes when the builder has shards),
written split by split, duplicate ids rejected, and the rejects kept."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
from tqdm import tqdm

from clinical_corpora.builders.contract.base import BuildContext, Builder
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.build import Build, write_rejects
from clinical_corpora.builders.release.workers import (
    GroupOutput,
    GroupsEngine,
    build_in_process,
    build_in_workers,
    document_groups,
    worker_state,
)
from clinical_corpora.builders.release.writer import SplitWriter, rows_per_row_group
from clinical_corpora.core.errors import ClincorpError, GateError, SourceError
from clinical_corpora.core.manifest import CorpusManifest


def write_rows(
    build: Build, total: int | None, workers: int, engine: GroupsEngine | None = None
) -> dict[str, dict[str, int]]:
    """Build the documents (in ``workers`` processes, or by another ``engine`` running ``workers`` groups at a time,
    when the builder has shards) into per-split parquet writers, then quarantine duplicate ids; returns rows per
    config and split."""
    builder, manifest, ctx = build.builder, build.manifest, build.ctx
    writers = {
        (config, split): SplitWriter(
            build.staging / "data" / config,
            split,
            build.features[config],
            rows_per_group=rows_per_row_group(builder.CONFIGS[config]),
        )
        for config, spec in manifest.configs.items()
        for split in spec.splits
    }
    # shards() runs once: it may check or reject
    documents = builder.shards(ctx) if workers > 1 or engine is not None else {}
    groups = document_groups(documents, workers) if documents else []
    workers = min(workers, max(1, len(groups)))  # a worker per group at most
    build.stage(f"building the records {_where(len(groups), workers, engine)}")
    progress = tqdm(total=total, desc=f"{manifest.name}: building", unit=" documents", disable=not sys.stderr.isatty())
    _build_into(build, writers, documents, _group_outputs(build, groups, workers, engine), progress)
    progress.update(ctx.read - progress.n)
    progress.close()
    if ctx.read == 0:
        raise no_documents(builder, manifest, ctx)
    for writer in writers.values():
        writer.close()
    builder.built()
    pa.default_memory_pool().release_unused()  # the writers' buffers: give them back before the gates run
    drop_duplicate_ids(builder, manifest, ctx, build.staging)
    view = ReleaseView(build.staging)
    counts: dict[str, dict[str, int]] = {config: {} for config in manifest.configs}
    for config, split in writers:
        counts[config][split] = view.split_rows(config, split)
    return counts


def _where(groups: int, workers: int, engine: GroupsEngine | None) -> str:
    if groups <= 1:
        return "in one process"
    return f"as {groups} tasks, {workers} at a time" if engine else f"in {workers} worker processes"


def _group_outputs(
    build: Build, groups: list[dict[str, Any]], workers: int, engine: GroupsEngine | None
) -> Iterator[GroupOutput] | None:
    """Each group's output in group order, from worker processes or the engine; None when there is one group."""
    if len(groups) <= 1:
        return None
    state = worker_state(build.builder, build.manifest, build.features, build.ctx)
    return (engine or build_in_workers)(state, groups, workers)


def _build_into(
    build: Build,
    writers: dict[tuple[str, str], SplitWriter],
    documents: dict[str, Any],
    outputs: Iterator[GroupOutput] | None,
    progress: tqdm,
) -> None:
    """The records of every group (in worker processes or the engine when there are several), then the
    aggregates."""
    builder, ctx = build.builder, build.ctx

    def sink(config: str, split: str, batch: pa.RecordBatch) -> None:
        writers[(config, split)].write(batch)

    if outputs is None:
        rows = builder.generate_documents(ctx, documents) if documents else builder.generate(ctx)
        for _ in build_in_process(builder, build.manifest, build.features, rows, sink):
            progress.update(ctx.read - progress.n)
        return
    partials: list[Any] = []
    for output in outputs:
        ctx.read += output.read
        ctx.rejects += output.rejects
        ctx.reader_changes += output.reader_changes
        partials += output.partials
        for config, split, batch in output.batches:
            sink(config, split, batch)
        progress.update(ctx.read - progress.n)
    for _ in build_in_process(builder, build.manifest, build.features, builder.aggregate(ctx, partials), sink):
        pass


def no_documents(builder: Builder, manifest: CorpusManifest, ctx: BuildContext) -> ClincorpError:
    """The error of a build that read no document, naming each source read and the files expected."""
    named = [name for name in builder.DOCUMENTS if ctx.has_source(name)]
    read = named or [name for name in manifest.sources if ctx.has_source(name) and manifest.sources[name].required]
    lines = [f"{manifest.name}: no documents in the input; expected"]
    for name in read:
        expected = builder.DOCUMENTS.get(name) or " ".join(manifest.sources[name].description.split())
        lines.append(f"  source {name!r} at {ctx.source(name)}: {expected}")
    return ClincorpError("\n".join(lines))


def drop_duplicate_ids(builder: Builder, manifest: CorpusManifest, ctx: BuildContext, staging: Path) -> None:
    """Reject every record whose id an earlier record of its config has (splits in name order, then rows in
    order), reading the written ids column-wise; the splits holding them are rewritten without them."""
    view = ReleaseView(staging)
    for config in manifest.configs:
        id_field = getattr(builder.CONFIGS[config], "id_field", "id")
        if id_field not in view.features(config):
            continue
        drops: dict[str, list[int]] = {}
        for split, position, record_id in view.repeated_ids(config, id_field):
            ctx.reject(SourceError(f"{config}/{split}", f"duplicate id {record_id!r}"))
            drops.setdefault(split, []).append(position)
        for split, positions in drops.items():
            _rewrite_without(view, config, split, positions, builder.CONFIGS[config])


def _rewrite_without(view: ReleaseView, config: str, split: str, drop: list[int], model: type) -> None:
    """Rewrite a split's parquet files without the rows at ``drop`` (positions within the split)."""
    shards = view.shards(config, split)
    folder = shards[0].parent / f".{split}.dedup"
    writer = SplitWriter(folder, split, view.features(config), rows_per_group=rows_per_row_group(model))
    dropped = set(drop)
    position = 0
    for batch in view.batches(config, split):
        keep = pa.array([position + i not in dropped for i in range(batch.num_rows)])
        writer.write(batch.filter(keep))
        position += batch.num_rows
    written = writer.close()
    for shard in shards:
        shard.unlink()
    for path in written:
        path.rename(shards[0].parent / path.name)
    folder.rmdir()


def refuse_when_all_rejected(build: Build, row_counts: dict[str, dict[str, int]], keep_rejects: Path) -> None:
    """A run whose every record was quarantined has nothing to check or release: say so, not a gate's crash."""
    ctx = build.ctx
    if any(rows for splits in row_counts.values() for rows in splits.values()) or not ctx.rejected("record"):
        return
    write_rejects(keep_rejects, ctx.rejects)
    raise GateError(
        f"{build.manifest.name}: all {ctx.read} records read were rejected, so nothing is left to release; "
        f"rejected records and reasons: {keep_rejects}"
    )
