"""raw sources → builder → validated records → parquet → gates → an immutable release folder."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any, Literal

from datasets import Features
from tqdm import tqdm

from clinical_corpora.builders.base import BuildContext, Builder, OnError, load_builder_class
from clinical_corpora.builders.card import render_card
from clinical_corpora.builders.inputs import (
    INPUTS_FILE,
    fingerprint_inputs,
    invented_sources,
    release_version,
    resolve_sources,
    sha256_file,
    summarise_inputs,
    write_inputs_file,
)
from clinical_corpora.builders.release_view import ReleaseView
from clinical_corpora.builders.writer import SplitWriter
from clinical_corpora.core.errors import ClincorpError, GateError, ReleaseError, SourceError
from clinical_corpora.core.manifest import (
    SAMPLE_TAG,
    CorpusManifest,
    Expectation,
    apply_gate_overlay,
    load_gate_overlay,
)
from clinical_corpora.schemas.features import features_for, row_encoder, schema_fingerprint
from clinical_corpora.validation.expectations import run_suite
from clinical_corpora.validation.gates import (
    GateResult,
    agreement_gates,
    expectations_gate,
    rejects_gate,
    violation_text,
)
from clinical_corpora.validation.tables import fields_checked

Mode = Literal["release", "build"]


@dataclass
class Outcome:
    """What a release or build did."""

    folder: Path
    status: Literal["released", "unchanged", "built"]
    gates: list[GateResult] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)


def run(
    manifest: CorpusManifest,
    out: Path,
    overrides: dict[str, Path] | None = None,
    on_error: OnError = "fail",
    mode: Mode = "release",
    samples: Iterable[str] = (),
    max_rejects: int | None = None,
    gate_overlay: Path | None = None,
) -> Outcome:
    """Build, validate and write ``<out>/<corpus>/<version>``; raise GateError if a gate fails.

    ``samples`` names required sources read from their invented sample beside real ``overrides``; any
    invented input makes a sample release, versioned ``<version>+sample``. ``max_rejects`` overrides the
    corpus's gate for this run (recorded in the manifest and card). ``gate_overlay`` is a ``--gates`` YAML
    file changing corpus.yaml's gates for this run (recorded, with each change, in the manifest and card).
    """
    overrides = overrides or {}
    overlay = _gate_overlay(manifest, gate_overlay)
    if overlay is not None:
        manifest = overlay[0]
    sources = resolve_sources(manifest, overrides, samples)
    invented = invented_sources(manifest, sources, overrides)
    version = release_version(manifest, invented)
    builder = load_builder_class(manifest.builder)()
    features = _features(builder, manifest)
    ctx = BuildContext(manifest, sources, on_error)
    total = _count_documents(builder, manifest, ctx)
    _stage(manifest, "hashing the input files")
    inputs = fingerprint_inputs(manifest, sources, set(overrides))
    corpus_dir = out / manifest.name
    created = [folder for folder in (out, corpus_dir) if not folder.exists()]
    corpus_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{version}.", dir=corpus_dir))
    staging.chmod(0o777 & ~_umask())  # mkdtemp makes 0700 folders; a release gets what the umask gives
    try:
        row_counts = _write_rows(builder, manifest, features, ctx, staging, total)
        release = _Release(version, invented, inputs, max_rejects, overlay[1] if overlay else None)
        gates = _write_release_files(builder, manifest, features, ctx, staging, row_counts, release)
        target = corpus_dir / version
        if mode == "release":
            return _publish(staging, target, gates, corpus_dir)
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)  # kept for inspection even when a gate fails
        _raise_on_failed_gates(gates, None, kept=target)
        return Outcome(target, "built", gates, _read_json(target / "manifest.json"))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        for folder in reversed(created):  # a failed release leaves no empty folder behind
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()


@dataclass(frozen=True)
class _Release:
    """What a run knows about the release it writes beyond the corpus.yaml."""

    version: str
    invented: list[str]
    inputs: list[dict[str, Any]]
    max_rejects: int | None
    gate_overlay: dict[str, Any] | None = None


def _gate_overlay(manifest: CorpusManifest, path: Path | None) -> tuple[CorpusManifest, dict[str, Any]] | None:
    """The manifest with a ``--gates`` file applied, and what the release records of it."""
    if path is None:
        return None
    overlaid, changes = apply_gate_overlay(manifest, load_gate_overlay(path), path)
    return overlaid, {"file": path.name, "sha256": sha256_file(path), "changes": changes}


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _stage(manifest: CorpusManifest, what: str) -> None:
    """One line on stderr per stage without a progress bar, so a long run never goes quiet."""
    print(f"{manifest.name}: {what}", file=sys.stderr, flush=True)


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


def _write_rows(
    builder: Builder,
    manifest: CorpusManifest,
    features: dict[str, Features],
    ctx: BuildContext,
    staging: Path,
    total: int | None = None,
) -> dict[str, dict[str, int]]:
    """Stream the builder's rows into per-split parquet writers; returns rows per config and split."""
    writers = {
        (config, split): SplitWriter(staging / "data" / config, split, features[config])
        for config, spec in manifest.configs.items()
        for split in spec.splits
    }
    encoders = {config: row_encoder(config_features) for config, config_features in features.items()}
    seen_ids: dict[str, set[str]] = {config: set() for config in manifest.configs}
    progress = tqdm(total=total, desc=f"{manifest.name}: building", unit=" documents", disable=not sys.stderr.isatty())
    for row in builder.generate(ctx):
        progress.update(ctx.read - progress.n)
        writer = writers.get((row.config, row.split))
        if writer is None:
            raise ClincorpError(
                f"{manifest.builder} wrote config {row.config!r} split {row.split!r}, "
                "which corpus.yaml does not declare"
            )
        model = builder.CONFIGS[row.config]
        if not isinstance(row.record, model):
            raise ClincorpError(
                f"{manifest.builder} wrote a {type(row.record).__name__} into config "
                f"{row.config!r}, which holds {model.__name__} records"
            )
        record_id = str(getattr(row.record, getattr(model, "id_field", "id")))
        if record_id in seen_ids[row.config]:
            ctx.reject(SourceError(f"{row.config}/{row.split}", f"duplicate id {record_id!r}"))
            continue
        seen_ids[row.config].add(record_id)
        writer.write(encoders[row.config](row.record.model_dump()))
    progress.update(ctx.read - progress.n)
    progress.close()
    if ctx.read == 0:
        raise _no_documents(builder, manifest, ctx)
    counts: dict[str, dict[str, int]] = {config: {} for config in manifest.configs}
    for (config, split), writer in writers.items():
        writer.close()
        counts[config][split] = writer.rows
    return counts


def quality_tables(builder: Builder, view: ReleaseView, expectations: list[Expectation]) -> dict[str, Any]:
    """The flattened configs (the fields the suite reaches) plus the builder's derived tables."""
    tables: dict[str, Any] = {}
    for config in view.configs():
        fields = fields_checked(config, expectations, view.features(config))
        if fields:
            tables.update(view.tables(config, fields))
    tables.update(builder.quality_tables(view))
    return tables


def record_ids(builder: Builder, view: ReleaseView) -> dict[str, list[str]]:
    """Each config's record ids in row order, so the expectation suite can name the records it rejects."""
    ids = {}
    for config in view.configs():
        model = builder.CONFIGS.get(config)
        id_field = getattr(model, "id_field", "id")
        if model is not None and id_field in view.features(config):
            ids[config] = [str(value) for value in view.arrow(config, columns=[id_field]).column(0).to_pylist()]
    return ids


def _write_release_files(
    builder: Builder,
    manifest: CorpusManifest,
    features: dict[str, Features],
    ctx: BuildContext,
    staging: Path,
    row_counts: dict[str, dict[str, int]],
    release: _Release,
) -> list[GateResult]:
    """Run the gates and write rejects.jsonl, inputs.jsonl, validation.json, README.md and manifest.json."""
    write_inputs_file(staging, release.inputs)
    view = ReleaseView(staging)
    expectations = manifest.gates.expectations
    _stage(manifest, f"checking {len(expectations)} expectations")
    outcomes = run_suite(expectations, quality_tables(builder, view, expectations), lambda: record_ids(builder, view))
    _stage(manifest, "measuring agreement")
    agreement = builder.agreement(ctx, view)
    if ctx.rejects:  # after agreement: an annotator's quarantined annotations are rejects too
        (staging / "rejects.jsonl").write_text(
            "".join(json.dumps({"where": r.where, "kind": r.kind, "reason": r.reason}) + "\n" for r in ctx.rejects),
            encoding="utf-8",
        )
    max_rejects = manifest.gates.max_rejects if release.max_rejects is None else release.max_rejects
    gates = [
        rejects_gate(len(ctx.rejects), max_rejects),
        expectations_gate(outcomes),
        *agreement_gates(agreement.measures if agreement else None, manifest.gates.agreement),
    ]
    written = sum(sum(splits.values()) for splits in row_counts.values())
    provenance = {
        "builder_version": builder.VERSION,
        "package_version": package_version("clinical-corpora"),
        "sample": bool(release.invented),
        "inputs": summarise_inputs(release.inputs, release.invented),
        **({"overrides": {"max_rejects": release.max_rejects}} if release.max_rejects is not None else {}),
        **({"gate_overlay": release.gate_overlay} if release.gate_overlay is not None else {}),
        "counts": {
            "read": ctx.read,
            "written": written,
            "rejected": ctx.rejected("record"),
            "rejected_annotations": ctx.rejected("annotation"),
        },
    }
    _write_json(
        staging / "validation.json",
        {
            "corpus": manifest.name,
            "version": release.version,
            "expectation_suite": [e.model_dump() for e in manifest.gates.expectations],
            "agreement": agreement.measures if agreement else None,
            "gates": [gate.as_dict() for gate in gates],
        },
    )
    _stage(manifest, "writing the card")
    sections = [*builder.statistics(view), *(agreement.sections if agreement else [])]
    (staging / "README.md").write_text(
        render_card(manifest, features, row_counts, sections, gates, provenance, release.version), encoding="utf-8"
    )
    _stage(manifest, "hashing the release files")
    _write_json(
        staging / "manifest.json",
        {
            "corpus": manifest.name,
            "version": release.version,
            "builder": manifest.builder,
            **provenance,
            "schema_fingerprint": schema_fingerprint(features),
            "outputs": _outputs(staging, row_counts),
            "gates": [{"gate": g.gate, "status": g.status, "observed": g.observed} for g in gates],
        },
    )
    return gates


def _outputs(staging: Path, row_counts: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    view = ReleaseView(staging)
    outputs = [
        {"file": path.relative_to(staging).as_posix(), "sha256": sha256_file(path), "rows": view.rows_in(path)}
        for config in row_counts
        for path in view.shards(config)
    ]
    outputs += [
        {"file": name, "sha256": sha256_file(staging / name)}
        for name in ("README.md", "validation.json", "rejects.jsonl", INPUTS_FILE)
        if (staging / name).exists()
    ]
    return outputs


def _publish(staging: Path, target: Path, gates: list[GateResult], corpus_dir: Path) -> Outcome:
    """Rename the staging folder to the version folder, unless a gate failed or the version exists."""
    _raise_on_failed_gates(gates, staging / "rejects.jsonl", corpus_dir / f"{target.name}.rejects.jsonl")
    if target.exists():
        differs = _tree_digest(target) != _tree_digest(staging)
        if differs and target.name.endswith(SAMPLE_TAG):
            raise ReleaseError(
                f"{target} already exists with different bytes: it is a sample release of invented data, "
                "so remove it (or release into another --out) to rebuild it"
            )
        if differs:
            raise ReleaseError(
                f"{target} already exists with different bytes: releases are immutable; "
                "bump the corpus version in corpus.yaml (and the builder VERSION if its "
                "code changed)"
            )
        return Outcome(target, "unchanged", gates, _read_json(target / "manifest.json"))
    staging.rename(target)
    return Outcome(target, "released", gates, _read_json(target / "manifest.json"))


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
    if kept is not None:
        lines.append(f"the failed build is kept for inspection at {kept}")
    raise GateError("\n".join(lines))


def _tree_digest(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): sha256_file(path) for path in sorted(folder.rglob("*")) if path.is_file()
    }


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    path.write_text(json.dumps(payload, indent=2, sort_keys=False, ensure_ascii=False) + "\n", encoding="utf-8")


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))
