"""raw sources → builder → validated records → parquet → gates → an immutable release folder."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any, Literal

from datasets import Features
from tqdm import tqdm

from clinical_corpora.builders.base import BuildContext, Builder, OnError, load_builder_class
from clinical_corpora.builders.card import render_card
from clinical_corpora.builders.inputs import fingerprint_inputs, resolve_sources, sha256_file
from clinical_corpora.builders.release_view import ReleaseView
from clinical_corpora.builders.writer import SplitWriter
from clinical_corpora.core.errors import ClincorpError, GateError, ReleaseError, SourceError
from clinical_corpora.core.manifest import CorpusManifest, Expectation
from clinical_corpora.schemas.features import features_for, row_encoder, schema_fingerprint
from clinical_corpora.validation.expectations import run_suite
from clinical_corpora.validation.gates import GateResult, agreement_gates, expectations_gate, rejects_gate
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
) -> Outcome:
    """Build, validate and write ``<out>/<corpus>/<version>``; raise GateError if a gate fails."""
    overrides = overrides or {}
    sources = resolve_sources(manifest, overrides)
    inputs = fingerprint_inputs(manifest, sources, set(overrides))
    builder = load_builder_class(manifest.builder)()
    features = _features(builder, manifest)
    corpus_dir = out / manifest.name
    corpus_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{manifest.version}.", dir=corpus_dir))
    try:
        ctx = BuildContext(manifest, sources, on_error)
        row_counts = _write_rows(builder, manifest, features, ctx, staging)
        gates = _write_release_files(builder, manifest, features, ctx, staging, row_counts, inputs)
        target = corpus_dir / manifest.version
        if mode == "release":
            return _publish(staging, target, gates, corpus_dir)
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)  # kept for inspection even when a gate fails
        _raise_on_failed_gates(gates, None)
        return Outcome(target, "built", gates, _read_json(target / "manifest.json"))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _features(builder: Builder, manifest: CorpusManifest) -> dict[str, Features]:
    declared, built = set(manifest.configs), set(builder.CONFIGS)
    if declared != built:
        raise ClincorpError(
            f"{manifest.name}: corpus.yaml declares configs {sorted(declared)} but "
            f"{manifest.builder} builds {sorted(built)}"
        )
    return {name: features_for(builder.CONFIGS[name]) for name in manifest.configs}


def _write_rows(
    builder: Builder, manifest: CorpusManifest, features: dict[str, Features], ctx: BuildContext, staging: Path
) -> dict[str, dict[str, int]]:
    """Stream the builder's rows into per-split parquet writers; returns rows per config and split."""
    writers = {
        (config, split): SplitWriter(staging / "data" / config, split, features[config])
        for config, spec in manifest.configs.items()
        for split in spec.splits
    }
    encoders = {config: row_encoder(config_features) for config, config_features in features.items()}
    seen_ids: dict[str, set[str]] = {config: set() for config in manifest.configs}
    progress = tqdm(
        builder.generate(ctx), desc=f"{manifest.name}: building", unit=" rows", disable=not sys.stderr.isatty()
    )
    for row in progress:
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


def _write_release_files(
    builder: Builder,
    manifest: CorpusManifest,
    features: dict[str, Features],
    ctx: BuildContext,
    staging: Path,
    row_counts: dict[str, dict[str, int]],
    inputs: list[dict[str, Any]],
) -> list[GateResult]:
    """Run the gates and write rejects.jsonl, validation.json, README.md and manifest.json."""
    if ctx.rejects:
        (staging / "rejects.jsonl").write_text(
            "".join(json.dumps({"where": r.where, "kind": r.kind, "reason": r.reason}) + "\n" for r in ctx.rejects),
            encoding="utf-8",
        )
    view = ReleaseView(staging)
    expectations = manifest.gates.expectations
    outcomes = run_suite(expectations, quality_tables(builder, view, expectations))
    agreement = builder.agreement(ctx, view)
    gates = [
        rejects_gate(len(ctx.rejects), manifest.gates.max_rejects),
        expectations_gate(outcomes),
        *agreement_gates(agreement.measures if agreement else None, manifest.gates.agreement),
    ]
    written = sum(sum(splits.values()) for splits in row_counts.values())
    provenance = {
        "builder_version": builder.VERSION,
        "package_version": package_version("clinical-corpora"),
        "inputs": inputs,
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
            "version": manifest.version,
            "expectation_suite": [e.model_dump() for e in manifest.gates.expectations],
            "agreement": agreement.measures if agreement else None,
            "gates": [gate.as_dict() for gate in gates],
        },
    )
    sections = [*builder.statistics(view), *(agreement.sections if agreement else [])]
    (staging / "README.md").write_text(
        render_card(manifest, features, row_counts, sections, gates, provenance), encoding="utf-8"
    )
    _write_json(
        staging / "manifest.json",
        {
            "corpus": manifest.name,
            "version": manifest.version,
            "builder": manifest.builder,
            **provenance,
            "schema_fingerprint": schema_fingerprint(features),
            "outputs": _outputs(staging, row_counts),
            "gates": [{"gate": g.gate, "success": g.success, "observed": g.observed} for g in gates],
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
        for name in ("README.md", "validation.json", "rejects.jsonl")
        if (staging / name).exists()
    ]
    return outputs


def _publish(staging: Path, target: Path, gates: list[GateResult], corpus_dir: Path) -> Outcome:
    """Rename the staging folder to the version folder, unless a gate failed or the version exists."""
    _raise_on_failed_gates(gates, staging / "rejects.jsonl", corpus_dir / f"{target.name}.rejects.jsonl")
    if target.exists():
        if _tree_digest(target) != _tree_digest(staging):
            raise ReleaseError(
                f"{target} already exists with different bytes: releases are immutable; "
                "bump the corpus version in corpus.yaml (and the builder VERSION if its "
                "code changed)"
            )
        return Outcome(target, "unchanged", gates, _read_json(target / "manifest.json"))
    staging.rename(target)
    return Outcome(target, "released", gates, _read_json(target / "manifest.json"))


def _raise_on_failed_gates(gates: list[GateResult], rejects: Path | None, keep_rejects: Path | None = None) -> None:
    failed = [gate for gate in gates if not gate.success]
    if not failed:
        return
    lines = [gate.describe() for gate in failed]
    for gate in failed:
        lines += [
            f"  {d['table']}: {d['expectation']} {d['kwargs']} observed {d['observed']}"
            for d in gate.details
            if not d["success"]
        ]
    if rejects is not None and keep_rejects is not None and rejects.exists():
        shutil.copyfile(rejects, keep_rejects)
        lines.append(f"rejected records and reasons: {keep_rejects}")
    raise GateError("\n".join(lines))


def _tree_digest(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): sha256_file(path) for path in sorted(folder.rglob("*")) if path.is_file()
    }


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    path.write_text(json.dumps(payload, indent=2, sort_keys=False, ensure_ascii=False) + "\n", encoding="utf-8")


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))
