"""Re-check an existing release folder: file hashes, schema, record models, expectations."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from clinical_corpora.builders.base import load_builder_class
from clinical_corpora.builders.inputs import sha256_file
from clinical_corpora.builders.pipeline import quality_tables
from clinical_corpora.builders.release_view import ReleaseView
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import Expectation
from clinical_corpora.schemas.features import features_for, schema_fingerprint
from clinical_corpora.validation.expectations import run_suite
from clinical_corpora.validation.gates import GateResult, expectations_gate

MAX_LISTED = 20


def check_release(folder: Path) -> list[GateResult]:
    """Every check of a release: files, schema, records, then the expectation suite.

    Stops at the file check when files differ from the manifest, and before the suite when a record
    is invalid (the builder's derived tables assume valid records).
    """
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        raise ClincorpError(f"{folder} is not a release: it has no manifest.json")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    files = _files_gate(folder, manifest)
    if not files.success:
        return [files]
    results = [files]
    builder = load_builder_class(manifest["builder"])()
    view = ReleaseView(folder)
    results.append(_schema_gate(view, builder.CONFIGS, manifest["schema_fingerprint"]))
    results.append(_records_gate(view, builder.CONFIGS))
    if not results[-1].success:
        return results
    suite = json.loads((folder / "validation.json").read_text(encoding="utf-8"))["expectation_suite"]
    expectations = [Expectation.model_validate(e) for e in suite]
    results.append(expectations_gate(run_suite(expectations, quality_tables(builder, view, expectations))))
    return results


def _files_gate(folder: Path, manifest: dict) -> GateResult:
    problems = []
    listed = {output["file"]: output["sha256"] for output in manifest["outputs"]}
    for name, expected in listed.items():
        path = folder / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif sha256_file(path) != expected:
            problems.append(f"{name}: sha256 differs from manifest.json")
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    problems += [f"{name}: not listed in manifest.json" for name in sorted(present - set(listed) - {"manifest.json"})]
    return GateResult(
        "files",
        not problems,
        f"{len(problems)} problems",
        "hashes as in manifest.json",
        [{"problem": p} for p in problems[:MAX_LISTED]],
    )


def _schema_gate(view: ReleaseView, configs: dict, fingerprint: str) -> GateResult:
    expected = {name: features_for(model) for name, model in configs.items()}
    problems = []
    if schema_fingerprint(expected) != fingerprint:
        problems.append("the builder's record models no longer match the release's schema fingerprint")
    for name, features in expected.items():
        for shard in view.shards(name):
            if view.shard_features(shard) != features:
                problems.append(f"{shard.name}: embedded features differ from the {name} record model")
        if not view.shards(name):
            problems.append(f"config {name}: no parquet files")
    return GateResult(
        "schema",
        not problems,
        f"{len(problems)} problems",
        "features as the record models",
        [{"problem": p} for p in problems],
    )


def _records_gate(view: ReleaseView, configs: dict) -> GateResult:
    problems, checked = [], 0
    for name, model in configs.items():
        ids: set[str] = set()
        for split, row in view.rows(name):
            checked += 1
            try:
                record = model.model_validate(row)
            except ValidationError as error:
                problems.append(f"{name}/{split} row {checked}: {error.errors()[0]['msg']}")
                continue
            record_id = str(getattr(record, getattr(model, "id_field", "id")))
            if record_id in ids:
                problems.append(f"{name}/{split}: duplicate id {record_id!r}")
            ids.add(record_id)
    return GateResult(
        "records",
        not problems,
        f"{checked} records, {len(problems)} invalid",
        "every record valid under its model",
        [{"problem": p} for p in problems[:MAX_LISTED]],
    )
