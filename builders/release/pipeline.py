"""raw sources → builder → validated records → parquet → gates → an immutable release folder."""

from __future__ import annotations

import gc
import json
import os
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
from datasets import Features
from tqdm import tqdm

from clinical_corpora.builders.contract.base import AgreementReport, BuildContext, Builder, Reject
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.card.card import CardFacts, SplitSize, render_card, split_sizes
from clinical_corpora.builders.release.card.croissant import CROISSANT_FILE, CroissantRelease, write_croissant
from clinical_corpora.builders.release.card.figures import write_figures
from clinical_corpora.builders.release.card.published import published_section, recomputed_values, release_comparison
from clinical_corpora.builders.release.checks import check_suite
from clinical_corpora.builders.release.folder import (
    BUILD_FLAG,
    check_build_target,
    check_out,
    make_folder,
    make_staging,
    publish,
    read_json,
    release_folder,
    remove_stale_staging,
    replace_build,
    sha256_file,
    write_json,
)
from clinical_corpora.builders.release.inputs import (
    INPUTS_FILE,
    InputHashing,
    invented_sources,
    list_inputs,
    release_version,
    resolve_sources,
    walk_sources,
)
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.release.workers import build_in_process, build_in_workers, document_groups
from clinical_corpora.builders.release.writer import SplitWriter, rows_per_row_group
from clinical_corpora.builders.sources.discovery import walks_given
from clinical_corpora.core.card import CardSection
from clinical_corpora.core.errors import ClincorpError, GateError, SourceError
from clinical_corpora.core.manifest import (
    CorpusManifest,
    apply_gate_overlay,
    load_gate_overlay,
)
from clinical_corpora.schemas.features import features_for, schema_fingerprint
from clinical_corpora.validation.expectations import ExpectationOutcome
from clinical_corpora.validation.gates import (
    GateResult,
    agreement_gates,
    expectations_gate,
    rejects_gate,
    violation_text,
)


@dataclass
class Outcome:
    """What a release or build did."""

    folder: Path
    status: Literal["released", "unchanged", "built"]
    gates: list[GateResult] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Build:
    """One run's corpus (with its ``--gates`` overlay), builder, record features, build context and staging."""

    manifest: CorpusManifest
    builder: Builder
    features: dict[str, Features]
    ctx: BuildContext
    staging: Path


def run(request: ReleaseRequest) -> Outcome:
    """Build, validate and write ``<out>/<corpus>/<corpus>-<version>``: the records written, the expectation suite
    checked (in this process, once the records are written), agreement and the card's statistics measured,
    the gates, card and manifest written, then the release published (or the build kept); raise GateError
    if a gate fails."""
    overlay = _gate_overlay(request.corpus, request.gate_overlay)
    manifest = overlay[0] if overlay is not None else request.corpus
    sources = resolve_sources(manifest, dict(request.sources), request.samples)
    invented = invented_sources(manifest, sources, dict(request.sources))
    version = release_version(manifest, invented)
    corpus_dir, name = request.out / manifest.name, release_folder(manifest.name, version)
    check_out(request.out, corpus_dir)
    if request.mode == "build":
        check_build_target(corpus_dir / name)
    builder = request.builder()
    features = _features(builder, manifest)
    ctx = BuildContext(manifest, sources, request.on_error)
    walks = walk_sources(sources)  # each input folder walked once: listed for hashing, then by the builder
    hashing = InputHashing(manifest, list_inputs(sources, walks), set(request.sources), invented)  # beside the build
    staging = None
    created: list[Path] = []
    try:
        with walks_given({root: walks[name] for name, root in sources.items() if root is not None and name in walks}):
            del walks  # handed over: each goes with its first use
            total = _count_documents(builder, manifest, ctx)
        workers = _capped_workers(manifest, request.workers) or auto_workers(total)
        created = [folder for folder in (request.out, corpus_dir) if not folder.exists()]
        make_folder(corpus_dir)
        remove_stale_staging(corpus_dir)
        staging = make_staging(corpus_dir, name)
        build = _Build(manifest, builder, features, ctx, staging)
        _stage(manifest, "hashing the input files")
        row_counts = _write_rows(build, total, workers)
        _refuse_when_all_rejected(manifest, ctx, row_counts, corpus_dir / f"{name}.rejects.jsonl")
        changes = _changes(request, staging, manifest, version)
        release = _Release(
            version,
            invented,
            hashing.write(staging),  # inputs.jsonl, checked unchanged since listed
            request.max_rejects,
            overlay[1] if overlay else None,
            builder.options.changed(),
            request.mode == "release",
            changes,
        )
        gates = _write_release_files(build, row_counts, release, _measure(build, list(row_counts), release))
        target = corpus_dir / name
        if request.mode == "release":
            return _publish(staging, target, gates, corpus_dir)
        replace_build(staging, target)  # kept for inspection even when a gate fails
        _raise_on_failed_gates(gates, None, kept=target)
        return Outcome(target, "built", gates, read_json(target / "manifest.json"))
    finally:
        hashing.close()
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        _remove_if_empty(created)


def _remove_if_empty(created: list[Path]) -> None:
    """Remove the folders a failed run created, when empty (a failed release leaves no empty folder behind)."""
    for folder in reversed(created):
        try:
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        except OSError:  # another run started writing into it meanwhile: it is theirs now
            pass


def default_workers() -> int:
    """Every core this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


DOCUMENTS_PER_WORKER = 64
"""Without ``--workers``, a build uses a worker per this many documents (at most every core): starting and
feeding a worker process costs ~0.1 s, more than a few dozen documents take to build here."""


def _capped_workers(manifest: CorpusManifest, asked: int | None) -> int | None:
    """``--workers``, at most every core this process may use (saying so when it asked for more)."""
    cores = default_workers()
    if asked is not None and asked > cores:
        _stage(manifest, f"--workers {asked} is more than the {cores} cores this process may use: using {cores}")
        return cores
    return asked


def auto_workers(documents: int | None) -> int:
    """The build processes for ``documents`` (every core when the builder cannot count them cheaply)."""
    cores = default_workers()
    return cores if documents is None else max(1, min(cores, documents // DOCUMENTS_PER_WORKER))


@dataclass(frozen=True)
class _Release:
    """What a run knows about the release it writes beyond the corpus.yaml."""

    version: str
    invented: list[str]
    inputs: dict[str, dict[str, Any]]
    """The per-source summary of inputs.jsonl (:func:`~clinical_corpora.builders.release.inputs.summarise_inputs`)."""
    max_rejects: int | None
    gate_overlay: dict[str, Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    immutable: bool = True
    changes: dict[str, Any] | None = None
    """What changed since ``--previous`` (``core.changes.ReleaseChanges`` as JSON), when given."""


def _changes(request: ReleaseRequest, staging: Path, manifest: CorpusManifest, version: str) -> dict[str, Any] | None:
    """The summary of the changes since the previous release, once the records are written."""
    if request.changes_since is None:
        return None
    _stage(manifest, "comparing the records with the previous release")
    return request.changes_since(staging, manifest.name, version).model_dump(mode="json")


def _gate_overlay(manifest: CorpusManifest, path: Path | None) -> tuple[CorpusManifest, dict[str, Any]] | None:
    """The manifest with a ``--gates`` file applied, and what the release records of it."""
    if path is None:
        return None
    overlaid, changes = apply_gate_overlay(manifest, load_gate_overlay(path), path)
    text = path.read_bytes().decode("utf-8")  # recorded byte for byte: validate recomputes the changes
    return overlaid, {"file": path.name, "sha256": sha256_file(path), "text": text, "changes": changes}


def _stage(manifest: CorpusManifest, what: str) -> None:
    """One line on stderr per stage without a progress bar, so a long run never goes quiet."""
    _stage_line(manifest.name, what)


def _stage_line(corpus: str, what: str) -> None:
    print(f"{corpus}: {what}", file=sys.stderr, flush=True)


def _count_documents(builder: Builder, manifest: CorpusManifest, ctx: BuildContext) -> int | None:
    """The builder's cheap document count (the progress total); an input holding no document is an error."""
    total = builder.count(ctx)
    if total == 0:
        raise _no_documents(builder, manifest, ctx)
    return total


def _no_documents(builder: Builder, manifest: CorpusManifest, ctx: BuildContext) -> ClincorpError:
    """The error of a build that read no document, naming each source read and the files expected."""
    named = [name for name in builder.DOCUMENTS if ctx.has_source(name)]
    read = named or [name for name in manifest.sources if ctx.has_source(name) and manifest.sources[name].required]
    lines = [f"{manifest.name}: no documents in the input; expected"]
    for name in read:
        expected = builder.DOCUMENTS.get(name) or " ".join(manifest.sources[name].description.split())
        lines.append(f"  source {name!r} at {ctx.source(name)}: {expected}")
    return ClincorpError("\n".join(lines))


def _features(builder: Builder, manifest: CorpusManifest) -> dict[str, Features]:
    declared, built = set(manifest.configs), set(builder.CONFIGS)
    if declared != built:
        raise ClincorpError(
            f"{manifest.name}: corpus.yaml declares configs {sorted(declared)} but "
            f"{manifest.builder} builds {sorted(built)}"
        )
    return {name: features_for(builder.CONFIGS[name]) for name in manifest.configs}


def _write_rows(build: _Build, total: int | None, workers: int) -> dict[str, dict[str, int]]:
    """Build the documents (in ``workers`` processes when the builder has shards) into per-split parquet
    writers, then quarantine duplicate ids; returns rows per config and split."""
    builder, manifest, features, ctx, staging = build.builder, build.manifest, build.features, build.ctx, build.staging
    writers = {
        (config, split): SplitWriter(
            staging / "data" / config,
            split,
            features[config],
            rows_per_group=rows_per_row_group(builder.CONFIGS[config]),
        )
        for config, spec in manifest.configs.items()
        for split in spec.splits
    }

    def sink(config: str, split: str, batch: pa.RecordBatch) -> None:
        writers[(config, split)].write(batch)

    documents = builder.shards(ctx) if workers > 1 else {}  # shards() runs once: it may check or reject
    groups = document_groups(documents, workers) if documents else []
    workers = min(workers, max(1, len(groups)))  # a worker per group at most
    processes = f"{workers} worker processes" if len(groups) > 1 else "one process"
    _stage(manifest, f"building the records in {processes}")
    progress = tqdm(total=total, desc=f"{manifest.name}: building", unit=" documents", disable=not sys.stderr.isatty())
    gc.freeze()  # what is loaded so far is never garbage: keep it out of every collection (and shared by fork)
    try:
        if len(groups) > 1:
            partials: list[Any] = []
            for output in build_in_workers(builder, manifest, features, ctx, groups, workers):
                ctx.read += output.read
                ctx.rejects += output.rejects
                partials += output.partials
                for config, split, batch in output.batches:
                    sink(config, split, batch)
                progress.update(ctx.read - progress.n)
            for _ in build_in_process(builder, manifest, features, builder.aggregate(ctx, partials), sink):
                pass
        else:
            rows = builder.generate_documents(ctx, documents) if documents else builder.generate(ctx)
            for _ in build_in_process(builder, manifest, features, rows, sink):
                progress.update(ctx.read - progress.n)
    finally:
        gc.unfreeze()
    progress.update(ctx.read - progress.n)
    progress.close()
    if ctx.read == 0:
        raise _no_documents(builder, manifest, ctx)
    for writer in writers.values():
        writer.close()
    builder.built()
    pa.default_memory_pool().release_unused()  # the writers' buffers: give them back before the gates run
    drop_duplicate_ids(builder, manifest, ctx, staging)
    counts: dict[str, dict[str, int]] = {config: {} for config in manifest.configs}
    view = ReleaseView(staging)
    for config, split in writers:
        counts[config][split] = sum(view.rows_in(path) for path in view.shards(config, split))
    return counts


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
            _rewrite_without(view, config, split, view.features(config), positions, builder.CONFIGS[config])


def _rewrite_without(
    view: ReleaseView, config: str, split: str, features: Features, drop: list[int], model: type
) -> None:
    """Rewrite a split's parquet files without the rows at ``drop`` (positions within the split)."""
    shards = view.shards(config, split)
    folder = shards[0].parent / f".{split}.dedup"
    writer = SplitWriter(folder, split, features, rows_per_group=rows_per_row_group(model))
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


def _refuse_when_all_rejected(
    manifest: CorpusManifest, ctx: BuildContext, row_counts: dict[str, dict[str, int]], keep_rejects: Path
) -> None:
    """A run whose every record was quarantined has nothing to check or release: say so, not a gate's crash."""
    if any(rows for splits in row_counts.values() for rows in splits.values()) or not ctx.rejected("record"):
        return
    _write_rejects(keep_rejects, ctx.rejects)
    raise GateError(
        f"{manifest.name}: all {ctx.read} records read were rejected, so nothing is left to release; "
        f"rejected records and reasons: {keep_rejects}"
    )


def _write_rejects(path: Path, rejects: list[Reject]) -> None:
    path.write_text(
        "".join(json.dumps({"where": r.where, "kind": r.kind, "reason": r.reason}) + "\n" for r in rejects),
        encoding="utf-8",
    )


@dataclass
class _Measured:
    """What a release knows before its gates: its suite's outcomes, agreement, card sections, and what the
    card and manifest say of its data files (their sizes; each shard's sha256 and rows)."""

    outcomes: list[ExpectationOutcome]
    agreement: AgreementReport | None
    sections: list[CardSection]
    sizes: dict[str, dict[str, SplitSize]]
    shards: list[dict[str, Any]]


def _measure(build: _Build, configs: list[str], release: _Release) -> _Measured:
    """Check the suite, measure agreement (writing rejects.jsonl), the card's statistics and the written
    ``configs``' sizes and hashes."""
    builder, manifest, ctx, staging = build.builder, build.manifest, build.ctx, build.staging
    view = ReleaseView(staging)
    expectations = manifest.gates.expectations
    _stage(manifest, f"checking {len(expectations)} expectations")
    outcomes = check_suite(builder, view, expectations)
    _stage(manifest, "measuring agreement")
    agreement = builder.agreement(ctx, view)
    if ctx.rejects:  # after agreement: an annotator's quarantined annotations are rejects too
        _write_rejects(staging / "rejects.jsonl", ctx.rejects)
    _stage(manifest, "writing the card")
    sections = [*builder.statistics(view), *(agreement.sections if agreement else [])]
    return _Measured(outcomes, agreement, sections, split_sizes(staging), _shard_outputs(staging, configs))


def _write_release_files(
    build: _Build, row_counts: dict[str, dict[str, int]], release: _Release, measured: _Measured
) -> list[GateResult]:
    """Run the gates and write validation.json, README.md and manifest.json."""
    manifest, features, ctx, staging = build.manifest, build.features, build.ctx, build.staging
    agreement, sections = measured.agreement, measured.sections
    max_rejects = manifest.gates.max_rejects if release.max_rejects is None else release.max_rejects
    measures = agreement.measures if agreement else None
    recomputed = recomputed_values(sections, measures)
    comparisons, published = release_comparison(manifest, recomputed, release.inputs, bool(release.invented))
    gates = [
        rejects_gate(len(ctx.rejects), max_rejects),
        expectations_gate(measured.outcomes),
        *agreement_gates(measures, manifest.gates.agreement),
        published,
    ]
    sections = [*sections, published_section(manifest, comparisons, bool(release.invented))]
    written = sum(sum(splits.values()) for splits in row_counts.values())
    provenance = {
        "builder_version": manifest.version,
        "package_version": package_version("clinical-corpora"),
        "sample": bool(release.invented),
        "inputs": release.inputs,
        **({"overrides": {"max_rejects": release.max_rejects}} if release.max_rejects is not None else {}),
        **({"gate_overlay": release.gate_overlay} if release.gate_overlay is not None else {}),
        **({"options": release.options} if release.options else {}),
        **({"changes": release.changes} if release.changes is not None else {}),
        "counts": {
            "read": ctx.read,
            "written": written,
            "rejected": ctx.rejected("record"),
            "rejected_annotations": ctx.rejected("annotation"),
        },
    }
    write_json(
        staging / "validation.json",
        {
            "corpus": manifest.name,
            "version": release.version,
            "expectation_suite": [e.model_dump() for e in manifest.gates.expectations],
            "agreement": agreement.measures if agreement else None,
            "gates": [gate.as_dict() for gate in gates],
        },
    )
    figures = write_figures(staging, sections)
    card = CardFacts(manifest, release.version, features, row_counts, sections, gates, provenance, measured.sizes)
    (staging / "README.md").write_text(render_card(card), encoding="utf-8")
    splits = {config: [split for split, rows in counts.items() if rows] for config, counts in row_counts.items()}
    write_croissant(staging, CroissantRelease(manifest, release.version, features, splits, release.inputs))
    _stage(manifest, "hashing the release files")
    write_json(
        staging / "manifest.json",
        {
            "corpus": manifest.name,
            "version": release.version,
            BUILD_FLAG: release.immutable,
            "builder": manifest.builder,
            **provenance,
            "schema_fingerprint": schema_fingerprint(features),
            "outputs": [*measured.shards, *_file_outputs(staging, figures)],
            "gates": [{"gate": g.gate, "status": g.status, "observed": g.observed} for g in gates],
        },
    )
    return gates


def _shard_outputs(staging: Path, configs: Iterable[str]) -> list[dict[str, Any]]:
    """The manifest's entry of each data file: path, sha256 and rows."""
    view = ReleaseView(staging)
    return [
        {"file": path.relative_to(staging).as_posix(), "sha256": sha256_file(path), "rows": view.rows_in(path)}
        for config in configs
        for path in view.shards(config)
    ]


def _file_outputs(staging: Path, figures: list[str]) -> list[dict[str, Any]]:
    """The manifest's entry of each other file of the release (the card's ``figures`` among them), written last."""
    return [
        {"file": name, "sha256": sha256_file(staging / name)}
        for name in ("README.md", CROISSANT_FILE, "validation.json", "rejects.jsonl", INPUTS_FILE, *figures)
        if (staging / name).exists()
    ]


def _publish(staging: Path, target: Path, gates: list[GateResult], corpus_dir: Path) -> Outcome:
    """Rename the staging folder to the version folder, unless a gate failed or the version exists."""
    stale_rejects = corpus_dir / f"{target.name}.rejects.jsonl"
    _raise_on_failed_gates(gates, staging / "rejects.jsonl", stale_rejects)
    status = publish(staging, target)  # "unchanged": there already, or another run released it first
    outcome = Outcome(target, status, gates, read_json(target / "manifest.json"))
    stale_rejects.unlink(missing_ok=True)  # a failed run's rejects do not describe this release
    return outcome


def _raise_on_failed_gates(
    gates: list[GateResult], rejects: Path | None, keep_rejects: Path | None = None, kept: Path | None = None
) -> None:
    failed = [gate for gate in gates if not gate.success]
    if not failed:
        return
    lines = [gate.describe() for gate in failed]
    for gate in failed:
        for d in gate.details:
            if not d["success"]:
                lines.append(f"  {d['table']}: {d['expectation']} {d['kwargs']} observed {d['observed']}")
                lines += [f"    {violation_text(v)}" for v in d.get("violations", [])[:5]]
    if rejects is not None and keep_rejects is not None and rejects.exists():
        shutil.copyfile(rejects, keep_rejects)
        lines.append(f"rejected records and reasons: {keep_rejects}")
    elif keep_rejects is not None:
        keep_rejects.unlink(missing_ok=True)  # an earlier run's rejects would be taken for this run's
    if kept is not None:
        lines.append(f"the failed build is kept for inspection at {kept}")
    raise GateError("\n".join(lines))
