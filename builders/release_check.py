"""Re-check an existing release folder: file hashes, schema, record models, expectations."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pydantic import BaseModel, ValidationError

from clinical_corpora.builders.base import Builder, load_builder_class
from clinical_corpora.builders.inputs import inputs_problems, sha256_file
from clinical_corpora.builders.pipeline import quality_tables, record_ids
from clinical_corpora.builders.release_view import ReleaseView
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import Expectation
from clinical_corpora.schemas.features import LabelIdError, features_for, row_decoder, schema_fingerprint
from clinical_corpora.validation.expectations import run_suite
from clinical_corpora.validation.gates import GateResult, expectations_gate

MAX_LISTED = 20


Step = Callable[[str], None]
STEPS = 4


def check_release(folder: Path, on_step: Step | None = None) -> list[GateResult]:
    """Every check of a release (see :func:`release_checks`), as a list."""
    return list(release_checks(folder, on_step))


def release_checks(folder: Path, on_step: Step | None = None) -> Iterator[GateResult]:
    """Every check of a release, each verdict as soon as it is known: files, schema, records, then the
    expectation suite (the only step that loads great-expectations). ``on_step`` hears one line per step
    before it runs.

    Stops at the file check when files differ from the manifest, and before the suite when the schema or
    a record is invalid (the builder's derived tables assume valid records). A problem in the release's
    data is a failed gate naming the record and field, never an exception.
    """
    announce = on_step or (lambda line: None)
    manifest = _release_manifest(folder)
    announce(f"step 1/{STEPS}: files against the sha256 hashes in manifest.json")
    files = _guarded("files", "hashes as in manifest.json", lambda: _files_gate(folder, manifest))
    yield files
    if not files.success:
        return
    builder = load_builder_class(manifest["builder"])()
    view = ReleaseView(folder)
    announce(f"step 2/{STEPS}: schema of every parquet file against the record models")
    schema = _guarded(
        "schema",
        "features as the record models",
        lambda: _schema_gate(view, builder.CONFIGS, manifest.get("schema_fingerprint", "")),
    )
    yield schema
    announce(f"step 3/{STEPS}: every record against its record model")
    records = _guarded("records", "every record valid under its model", lambda: _records_gate(view, builder.CONFIGS))
    yield records
    if not (schema.success and records.success):
        return
    announce(f"step 4/{STEPS}: the expectation suite of validation.json (loading great-expectations)")
    yield _guarded("expectations", "all pass", lambda: _expectations_gate(folder, builder, view))


def _release_manifest(folder: Path) -> dict[str, Any]:
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        raise ClincorpError(f"{folder} is not a release: it has no manifest.json")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ClincorpError(f"{manifest_path}: not readable JSON ({error})") from error
    missing = [key for key in ("builder", "outputs") if not isinstance(manifest, dict) or key not in manifest]
    if missing:
        raise ClincorpError(f"{manifest_path}: not a release manifest, it lacks {', '.join(missing)}")
    return manifest


def _guarded(gate: str, expected: str, check: Callable[[], GateResult]) -> GateResult:
    """``check()``, or a failed gate saying why the check could not run (a damaged release must not
    end in a traceback)."""
    try:
        return check()
    except ClincorpError as error:
        return GateResult(gate, False, f"could not check: {error}", expected)
    except Exception as error:  # noqa: BLE001 - any damage to the release is a verdict, not a crash
        return GateResult(gate, False, f"could not check: {type(error).__name__}: {error}", expected)


def _expectations_gate(folder: Path, builder: Builder, view: ReleaseView) -> GateResult:
    try:
        suite = json.loads((folder / "validation.json").read_text(encoding="utf-8"))["expectation_suite"]
        expectations = [Expectation.model_validate(e) for e in suite]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValidationError) as error:
        raise ClincorpError(f"validation.json holds no readable expectation_suite ({error})") from error
    return expectations_gate(
        run_suite(expectations, quality_tables(builder, view, expectations), lambda: record_ids(builder, view))
    )


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
    problems += inputs_problems(folder, manifest)
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
    """Decode and validate every stored row; each problem names the config, split, record id and field."""
    problems, checked = [], 0
    for name, model in configs.items():
        ids: set[str] = set()
        id_field = getattr(model, "id_field", "id")
        decode = row_decoder(view.features(name))
        for shard in view.shards(name):
            split = view.split_of(shard)
            for position, row in enumerate(_stored_rows(shard)):
                checked += 1
                where = f"{name}/{split} record {row.get(id_field)!r} ({shard.name} row {position})"
                problem = _record_problem(model, decode, row)
                if problem is not None:
                    problems.append(f"{where}: {problem}")
                    continue
                record_id = str(row.get(id_field))
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


def _stored_rows(shard: Path) -> Iterator[dict[str, Any]]:
    for batch in pq.ParquetFile(shard).iter_batches(batch_size=1024):
        yield from batch.to_pylist()


def _record_problem(model: type[BaseModel], decode: Callable[[Any], Any], row: dict[str, Any]) -> str | None:
    """Why a stored row is not a valid record (``field spans[2].label: ...``), or None."""
    try:
        model.model_validate(decode(row))
    except LabelIdError as error:
        return f"field {error.field}: {error.problem}"
    except ValidationError as error:
        first = error.errors()[0]
        field = _field_path(first["loc"])
        more = f" (and {error.error_count() - 1} more problems)" if error.error_count() > 1 else ""
        value = "" if first["type"] == "value_error" else f", got {_short(first.get('input'))}"
        return f"{f'field {field}: ' if field else ''}{first['msg']}{value}{more}"
    return None


def _field_path(loc: tuple[int | str, ...]) -> str:
    """``('spans', 2, 'label')`` → ``spans[2].label``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path.lstrip(".")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
