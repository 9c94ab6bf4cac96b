"""raw sources → builder → validated records → parquet → gates → an immutable release folder."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal

from datasets import Features

from clinical_corpora.builders.contract.base import BuildContext, Builder
from clinical_corpora.builders.release.build import Build, stage_line
from clinical_corpora.builders.release.finish import Provenance, write_release_files
from clinical_corpora.builders.release.folder import (
    check_build_target,
    check_out,
    make_folder,
    make_staging,
    publish,
    release_folder,
    remove_stale_staging,
    replace_build,
)
from clinical_corpora.builders.release.inputs import (
    InputHashing,
    invented_sources,
    list_inputs,
    release_version,
    resolve_sources,
    walk_sources,
)
from clinical_corpora.builders.release.phi import PHI_ADVICE, phi_report_file
from clinical_corpora.builders.release.ray_engine import build_on_ray, cluster_cpus, connected
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.release.rows import no_documents, refuse_when_all_rejected, write_rows
from clinical_corpora.builders.sources.discovery import walks_given
from clinical_corpora.core.changes import ReleaseChanges
from clinical_corpora.core.errors import ClincorpError, GateError
from clinical_corpora.core.hashing import sha256_file
from clinical_corpora.core.manifest import CorpusManifest, apply_gate_overlay, load_gate_overlay
from clinical_corpora.core.release_manifest import GateOverlayRecord, ReleaseManifest, read_manifest
from clinical_corpora.schemas.features import features_for
from clinical_corpora.validation.gates import GateResult, violation_text


@dataclass
class Outcome:
    """What a release or build did."""

    folder: Path
    status: Literal["released", "unchanged", "built"]
    manifest: ReleaseManifest
    gates: list[GateResult] = field(default_factory=list)


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
    ctx = BuildContext(manifest, sources, request.on_error)
    walks = walk_sources(sources)  # each input folder walked once: listed for hashing, then by the builder
    hashing = InputHashing(manifest, list_inputs(sources, walks), set(request.sources), invented)  # beside the build
    staging = None
    created: list[Path] = []
    try:
        with walks_given({root: walks[name] for name, root in sources.items() if root is not None and name in walks}):
            del walks  # handed over: each goes with its first use
            total = _count_documents(builder, manifest, ctx)
        workers = _workers(request, manifest, total)
        created = [folder for folder in (request.out, corpus_dir) if not folder.exists()]
        make_folder(corpus_dir)
        remove_stale_staging(corpus_dir)
        staging = make_staging(corpus_dir, name)
        build = Build(manifest, builder, _features(builder, manifest), ctx, staging)
        build.stage("hashing the input files")
        engine = partial(build_on_ray, request.engine) if request.engine else None
        row_counts = write_rows(build, total, workers, engine)
        refuse_when_all_rejected(build, row_counts, corpus_dir / f"{name}.rejects.jsonl")
        release = Provenance(
            version,
            invented,
            hashing.write(staging),  # inputs.jsonl, checked unchanged since listed
            request.max_rejects,
            overlay[1] if overlay else None,
            builder.options.changed(),
            request.mode == "release",
            _changes(request, build, version),
            tuple(request.phi_reviewed),
            phi_report_file(corpus_dir, name),
        )
        gates = write_release_files(build, release)
        target = corpus_dir / name
        if request.mode == "release":
            return _publish(staging, target, gates, corpus_dir)
        replace_build(staging, target)  # kept for inspection even when a gate fails
        _raise_on_failed_gates(gates, None, kept=target, phi_report=phi_report_file(corpus_dir, name))
        return Outcome(target, "built", read_manifest(target), gates)
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


def _workers(request: ReleaseRequest, manifest: CorpusManifest, total: int | None) -> int:
    """The processes building the shards, or on Ray the tasks running at once (``--workers``, else the cluster's
    CPUs)."""
    if request.engine is not None:
        cpus = cluster_cpus(connected(request.engine))
        stage_line(manifest.name, f"building on Ray ({cpus} CPUs)")
        return request.workers or cpus
    return _capped_workers(manifest, request.workers) or auto_workers(total)


def _capped_workers(manifest: CorpusManifest, asked: int | None) -> int | None:
    """``--workers``, at most every core this process may use (saying so when it asked for more)."""
    cores = default_workers()
    if asked is not None and asked > cores:
        stage_line(
            manifest.name, f"--workers {asked} is more than the {cores} cores this process may use: using {cores}"
        )
        return cores
    return asked


def auto_workers(documents: int | None) -> int:
    """The build processes for ``documents`` (every core when the builder cannot count them cheaply)."""
    cores = default_workers()
    return cores if documents is None else max(1, min(cores, documents // DOCUMENTS_PER_WORKER))


def _changes(request: ReleaseRequest, build: Build, version: str) -> ReleaseChanges | None:
    """The summary of the changes since the previous release, once the records are written."""
    if request.changes_since is None:
        return None
    build.stage("comparing the records with the previous release")
    return request.changes_since(build.staging, build.manifest.name, version)


def _gate_overlay(manifest: CorpusManifest, path: Path | None) -> tuple[CorpusManifest, GateOverlayRecord] | None:
    """The manifest with a ``--gates`` file applied, and what the release records of it."""
    if path is None:
        return None
    overlay = load_gate_overlay(path)
    overlaid, changes = apply_gate_overlay(manifest, overlay, path)
    return overlaid, GateOverlayRecord(file=path.name, sha256=sha256_file(path), overlay=overlay, changes=changes)


def _count_documents(builder: Builder, manifest: CorpusManifest, ctx: BuildContext) -> int | None:
    """The builder's cheap document count (the progress total); an input holding no document is an error."""
    total = builder.count(ctx)
    if total == 0:
        raise no_documents(builder, manifest, ctx)
    return total


def _features(builder: Builder, manifest: CorpusManifest) -> dict[str, Features]:
    declared, built = set(manifest.configs), set(builder.CONFIGS)
    if declared != built:
        raise ClincorpError(
            f"{manifest.name}: corpus.yaml declares configs {sorted(declared)} but "
            f"{manifest.builder} builds {sorted(built)}"
        )
    return {name: features_for(builder.CONFIGS[name]) for name in manifest.configs}


def _publish(staging: Path, target: Path, gates: list[GateResult], corpus_dir: Path) -> Outcome:
    """Rename the staging folder to the version folder, unless a gate failed or the version exists."""
    stale_rejects = corpus_dir / f"{target.name}.rejects.jsonl"
    report = phi_report_file(corpus_dir, target.name)
    _raise_on_failed_gates(gates, staging / "rejects.jsonl", stale_rejects, phi_report=report)
    status = publish(staging, target)  # "unchanged": there already, or another run released it first
    outcome = Outcome(target, status, read_manifest(target), gates)
    stale_rejects.unlink(missing_ok=True)  # a failed run's rejects do not describe this release
    return outcome


def _raise_on_failed_gates(
    gates: list[GateResult],
    rejects: Path | None,
    keep_rejects: Path | None = None,
    kept: Path | None = None,
    phi_report: Path | None = None,
) -> None:
    failed = [gate for gate in gates if not gate.success]
    if not failed:
        return
    lines = [gate.describe() for gate in failed]
    for gate in failed:
        for d in gate.details:
            if "problem" in d:
                lines.append(f"  {d['problem']}")
            elif not d["success"]:
                lines.append(f"  {d['table']}: {d['expectation']} {d['kwargs']} observed {d['observed']}")
                lines += [f"    {violation_text(v)}" for v in d.get("violations", [])[:5]]
    if rejects is not None and keep_rejects is not None and rejects.exists():
        shutil.copyfile(rejects, keep_rejects)
        lines.append(f"rejected records and reasons: {keep_rejects}")
    elif keep_rejects is not None:
        keep_rejects.unlink(missing_ok=True)  # an earlier run's rejects would be taken for this run's
    if kept is not None:
        lines.append(f"the failed build is kept for inspection at {kept}")
    if phi_report is not None and any(gate.gate == "phi" for gate in failed):
        lines.append(f"{PHI_ADVICE}: {phi_report}")
    raise GateError("\n".join(lines))
