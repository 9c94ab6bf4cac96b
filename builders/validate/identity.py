"""A release's manifest against the installed corpus and its own validation.json: which corpus, version and
builder it claims, the ``--gates`` overlay it records (its effect recomputed, so its listed changes cannot lie),
and the verdicts of the gates it records, judged again with the installed corpus's thresholds."""

from __future__ import annotations

from clinical_corpora.builders.contract.base import make_builder
from clinical_corpora.builders.release.opened import OpenedRelease, overlaid
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.release_manifest import GateVerdict, ReleaseManifest
from clinical_corpora.core.release_records import GateRecord, ValidationRecord
from clinical_corpora.validation.gates import agreement_gates, rejects_gate


def identity_problems(manifest: ReleaseManifest, corpus: CorpusManifest) -> list[str]:
    """The corpus, version, sample flag, builder and options a manifest claims, against the installed corpus."""
    problems = []
    if manifest.corpus != corpus.name:
        problems.append(f"manifest.json corpus is {manifest.corpus!r}, the installed corpus is {corpus.name!r}")
    expected = corpus.sample_version if manifest.sample else corpus.version
    if manifest.version != expected:
        kind = "a sample release" if manifest.sample else "a release of real inputs"
        problems.append(
            f"manifest.json version is {manifest.version!r}; {kind} of the installed {corpus.name} is {expected!r}"
        )
    inputs = manifest.inputs or {}
    if inputs and any(entry.sample for entry in inputs.values()) != manifest.sample:
        problems.append(
            f"manifest.json sample is {manifest.sample}, but its inputs "
            f"{'' if manifest.sample else 'do not '}include samples"
        )
    if manifest.builder != corpus.builder:
        problems.append(
            f"manifest.json names builder {manifest.builder!r}, the installed corpus uses {corpus.builder!r}"
        )
    try:
        make_builder(corpus, manifest.options)
    except ClincorpError as error:
        problems.append(f"manifest.json options: {error}")
    return problems


def recorded_gate_problems(
    manifest: ReleaseManifest, validation: ValidationRecord, corpus: CorpusManifest
) -> list[str]:
    """validation.json against manifest.json (same release, same gates) and the max_rejects and agreement
    verdicts it records, judged again with ``corpus``'s thresholds (its overlay applied, and a recorded
    --max-rejects); a gate recorded as failed in a release."""
    problems = []
    if (validation.corpus, validation.version) != (manifest.corpus, manifest.version):
        problems.append(
            f"validation.json is for {validation.corpus} {validation.version}, "
            f"manifest.json for {manifest.corpus} {manifest.version}"
        )
    if manifest.gates != [_verdict(gate) for gate in validation.gates]:
        problems.append("manifest.json gates differ from validation.json's")
    problems += _verdict_problems(manifest, validation, corpus)
    problems += [f"gate {g.gate}: recorded as failed in a release" for g in validation.gates if g.status == "fail"]
    return problems


def _verdict(gate: GateRecord) -> GateVerdict:
    return GateVerdict(gate=gate.gate, status=gate.status, observed=gate.observed)


def _verdict_problems(manifest: ReleaseManifest, validation: ValidationRecord, corpus: CorpusManifest) -> list[str]:
    overridden = manifest.overrides.max_rejects if manifest.overrides is not None else None
    limit = corpus.gates.max_rejects if overridden is None else overridden
    recorded = {gate.gate: gate for gate in validation.gates}
    rejected = recorded["max_rejects"].observed if "max_rejects" in recorded else None
    recomputed = [
        *([rejects_gate(rejected, limit)] if isinstance(rejected, int) else []),
        *agreement_gates(validation.agreement, corpus.gates.agreement),
    ]
    problems = []
    for gate in recomputed:
        found = recorded.get(gate.gate)
        if found is None:
            problems.append(f"gate {gate.gate}: missing from validation.json")
        elif (found.status, found.expected) != (gate.status, gate.expected):
            problems.append(
                f"gate {gate.gate}: validation.json says {found.status} against {found.expected!r}; "
                f"{corpus.name}'s thresholds make it {gate.status} against {gate.expected!r} "
                f"(observed {gate.observed!r})"
            )
    return problems


def full_identity_problems(opened: OpenedRelease, corpus: CorpusManifest) -> list[str]:
    """A text-free release's ``full/manifest.json`` and ``full/validation.json`` against its own manifest and the
    installed corpus: the same corpus, version, builder, options, sample flag and changes."""
    manifest, full = opened.manifest, opened.full_manifest
    problems = [f"full/{problem}" for problem in identity_problems(full, corpus)]
    for field in ("corpus", "version", "builder", "builder_version", "sample", "options", "changes"):
        if getattr(full, field) != getattr(manifest, field):
            problems.append(f"manifest.json {field} differs from the full release's (full/manifest.json)")
    if full.variant is not None or not full.release:
        problems.append("full/manifest.json is not the manifest of a full release")
    if full.schema_fingerprint != manifest.full_schema_fingerprint:
        problems.append("manifest.json full_schema_fingerprint is not full/manifest.json's schema_fingerprint")
    problems += [f"full/{p}" for p in recorded_gate_problems(full, opened.full_validation, overlaid(full, corpus)[0])]
    return problems
