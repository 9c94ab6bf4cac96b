"""A built release's gates and files: the expectation suite, agreement and the card's statistics measured, the
gates judged, then validation.json, the descriptions (``card/describe.py``) and manifest.json written, typed
(``core/release_records.py``, ``core/release_manifest.py``), manifest.json last."""

from __future__ import annotations

from dataclasses import dataclass, replace
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.base import AgreementReport
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.build import Build, write_reader_changes, write_rejects
from clinical_corpora.builders.release.card.describe import FullRelease, describe_full, published
from clinical_corpora.builders.release.checks import check_suite
from clinical_corpora.builders.release.inputs_file import INPUTS_FILE
from clinical_corpora.builders.release.phi import keep_phi_report, phi_policy, run_phi_gate
from clinical_corpora.core.card import CardSection, plain_sections
from clinical_corpora.core.changes import ReleaseChanges
from clinical_corpora.core.hashing import sha256_file
from clinical_corpora.core.release_manifest import (
    Counts,
    GateOverlayRecord,
    GateVerdict,
    InputSummary,
    OutputFile,
    Overrides,
    PhiAllowances,
    PhiReviewed,
    ReleaseManifest,
    reader_changes_summary,
    write_manifest,
)
from clinical_corpora.core.release_records import READER_CHANGES_FILE, REJECTS_FILE, VALIDATION_FILE, ValidationRecord
from clinical_corpora.core.release_records import write_validation as write_validation_file
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.schemas.features import schema_fingerprint
from clinical_corpora.validation.expectations import ExpectationOutcome
from clinical_corpora.validation.gates import GateResult, agreement_gates, expectations_gate, rejects_gate


@dataclass(frozen=True)
class Provenance:
    """What a run knows about the release it writes beyond corpus.yaml."""

    version: str
    invented: list[str]
    inputs: dict[str, InputSummary]
    """The per-source summary of inputs.jsonl."""
    max_rejects: int | None
    gate_overlay: GateOverlayRecord | None = None
    options: dict[str, Any] | None = None
    immutable: bool = True
    changes: ReleaseChanges | None = None
    phi_reviewed: tuple[PhiReviewed, ...] = ()
    """The findings a maintainer reviewed and let through (``--phi-allow FILE``)."""
    phi_report: Path | None = None
    """Where the PHI gate's findings go when it fails (beside the release folder, never in it)."""


@dataclass(frozen=True)
class Measured:
    """What a release knows before its gates: its suite's outcomes, agreement, statistics, and the sections only
    the build could measure."""

    outcomes: list[ExpectationOutcome]
    agreement: AgreementReport | None
    statistics: list[CardSection]
    measured: list[CardSection]
    baselines: list[BaselineScore]


def measure(build: Build) -> Measured:
    """Check the suite, measure agreement (writing rejects.jsonl) and the card's statistics."""
    builder, manifest, ctx, staging = build.builder, build.manifest, build.ctx, build.staging
    view = ReleaseView(staging)
    build.stage(f"checking {len(manifest.gates.expectations)} expectations")
    outcomes = check_suite(builder, view, manifest.gates.expectations)
    build.stage("measuring agreement")
    agreement = builder.agreement(ctx, view)
    if ctx.rejects:  # after agreement: an annotator's quarantined annotations are rejects too
        write_rejects(staging / REJECTS_FILE, ctx.rejects)
    if ctx.reader_changes:
        write_reader_changes(staging / READER_CHANGES_FILE, ctx.reader_changes)
    build.stage("writing the card")
    measured = plain_sections([*builder.measured(), *(agreement.sections if agreement else [])])
    return Measured(outcomes, agreement, builder.statistics(view), measured, builder.baselines(view))


def write_release_files(build: Build, release: Provenance) -> list[GateResult]:
    """Run the gates and write validation.json, the card, its figures, croissant.json and manifest.json; then the
    PHI gate over every file written, and those files again with its verdict."""
    measured = measure(build)
    manifest, ctx = build.manifest, build.ctx
    view = ReleaseView(build.staging)
    max_rejects = manifest.gates.max_rejects if release.max_rejects is None else release.max_rejects
    measures = measured.agreement.measures if measured.agreement else None
    shards = _shard_outputs(view, list(manifest.configs))
    draft = _manifest(build, release, shards, [])
    recorded = ValidationRecord(
        corpus=manifest.name,
        version=release.version,
        expectation_suite=list(manifest.gates.expectations),
        agreement={name: float(value) for name, value in measures.items()} if measures is not None else None,
        gates=[],
        measured_sections=measured.measured or None,
        baselines=measured.baselines or None,
    )
    full = FullRelease(manifest, build.builder, draft, recorded, view, measured.statistics)
    gates = [
        rejects_gate(len(ctx.rejects), max_rejects),
        expectations_gate(measured.outcomes),
        *agreement_gates(measures, manifest.gates.agreement),
        published(full)[1],
    ]
    _write_described(build, full, gates)
    build.stage("running the PHI gate over every file of the release")
    declared = PhiAllowances(allowed_fields=manifest.gates.phi_allowed, reviewed=list(release.phi_reviewed))
    phi = run_phi_gate(build.staging, phi_policy(manifest.folder, build.builder.CONFIGS, declared))
    keep_phi_report(release.phi_report, phi.findings)
    _write_described(
        build, replace(full, manifest=draft.model_copy(update={"phi": phi.allowances})), [*gates, phi.gate]
    )
    return [*gates, phi.gate]


def _write_described(build: Build, full: FullRelease, gates: list[GateResult]) -> None:
    """validation.json with ``gates``, the card, figures and croissant.json drawn from it, manifest.json last."""
    staging = build.staging
    validation = full.validation.model_copy(update={"gates": [gate.record() for gate in gates]})
    write_validation_file(staging, validation)
    draft = full.manifest.model_copy(update={"gates": [_verdict(gate) for gate in gates]})
    files = describe_full(replace(full, manifest=draft, validation=validation))
    for name, data in files.items():
        (staging / name).parent.mkdir(exist_ok=True)
        (staging / name).write_bytes(data)
    build.stage("hashing the release files")
    names = ["README.md", "croissant.json", VALIDATION_FILE, REJECTS_FILE, READER_CHANGES_FILE, INPUTS_FILE]
    names += [name for name in files if name.startswith("figures/")]
    others = [OutputFile(file=name, sha256=sha256_file(staging / name)) for name in names if (staging / name).exists()]
    shards = [entry for entry in draft.outputs if entry.file.startswith("data/")]
    write_manifest(staging, draft.model_copy(update={"outputs": [*shards, *others]}))


def _manifest(build: Build, release: Provenance, shards: list[OutputFile], gates: list[GateVerdict]) -> ReleaseManifest:
    manifest, ctx = build.manifest, build.ctx
    written = sum(shard.rows or 0 for shard in shards)
    return ReleaseManifest(
        corpus=manifest.name,
        version=release.version,
        release=release.immutable,
        builder=manifest.builder,
        builder_version=manifest.version,
        package_version=package_version("clinical-corpora"),
        sample=bool(release.invented),
        inputs=release.inputs,
        overrides=Overrides(max_rejects=release.max_rejects) if release.max_rejects is not None else None,
        gate_overlay=release.gate_overlay,
        options=release.options or None,
        changes=release.changes,
        counts=Counts(
            read=ctx.read,
            written=written,
            rejected=ctx.rejected("record"),
            rejected_annotations=ctx.rejected("annotation"),
        ),
        reader_changes=reader_changes_summary(ctx.reader_changes),
        schema_fingerprint=schema_fingerprint(build.features),
        outputs=shards,
        gates=gates,
    )


def _shard_outputs(view: ReleaseView, configs: list[str]) -> list[OutputFile]:
    """The manifest's entry of each data file: path, sha256 and rows."""
    return [
        OutputFile(file=path.relative_to(view.folder).as_posix(), sha256=sha256_file(path), rows=view.rows_in(path))
        for config in configs
        for path in view.shards(config)
    ]


def _verdict(gate: GateResult) -> GateVerdict:
    return GateVerdict(gate=gate.gate, status=gate.status, observed=gate.observed)
