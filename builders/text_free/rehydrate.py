"""``clincorp rehydrate``: rebuild the full release from a text-free one and the user's own sources.

Streaming in two passes over the text-free release and one over each source: the wanted locators (and the
sha256 recorded for each) are read from the ``source_documents`` columns, the corpus's builder streams its
sources keeping only those documents, and each row's recipes are restored and written through the same
writer the pipeline uses. Memory holds the corpus's documents, never a whole source (4 GB of NOTEEVENTS
for 638 reports). Every file is then checked against the sha256 the full release's manifest recorded.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features

from clinical_corpora.builders.contract.base import BuildContext, Builder, OnError, make_builder
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.plugins import installed_corpus
from clinical_corpora.builders.release.folder import (
    checked_version,
    copy_into,
    listed_file,
    make_staging,
    outside_reason,
    publish,
    read_json,
    release_folder,
    remove_stale_staging,
    sha256_file,
)
from clinical_corpora.builders.release.writer import SplitWriter, rows_per_row_group
from clinical_corpora.builders.sources.documents import split_locator, text_sha256
from clinical_corpora.builders.text_free.anchors import ANCHORS_FILE
from clinical_corpora.builders.text_free.layout import (
    FULL_FOLDER,
    VARIANT,
    is_full_file,
    read_wanted,
    stored_rows,
)
from clinical_corpora.builders.text_free.reanchor import (
    REPORT_FILE,
    Reanchored,
    document_maps,
    write_reanchored_files,
    write_reanchored_rows,
)
from clinical_corpora.builders.text_free.restore import RecipeError, restore_batch
from clinical_corpora.builders.text_free.tamper import tamper_problems
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.schemas.features import features_for, schema_fingerprint
from clinical_corpora.schemas.licensed import SOURCE_DOCUMENTS, licensed_tree

BATCH_ROWS = 10_000
REJECTS_FILE = "rehydrate-rejects.jsonl"
SHOWN = 10


class RehydrateError(ClincorpError):
    """A text-free release cannot be restored (bad documents, a damaged release, different bytes)."""


@dataclass
class RehydrateOutcome:
    folder: Path
    status: Literal["released", "unchanged", "partial", "re-anchored"]
    documents: int
    quarantined: list[dict[str, Any]] = field(default_factory=list)
    reanchored: Reanchored | None = None


def rehydrate(
    text_free: Path,
    overrides: dict[str, Path],
    out: Path,
    on_error: OnError = "fail",
    on_stage: Callable[[str], None] | None = None,
    re_anchor: bool = False,
    documents: dict[str, str] | None = None,
) -> RehydrateOutcome:
    """Restore ``text_free`` into ``<out>/<corpus>/<corpus>-<version>``; byte-identical or a RehydrateError, unless
    ``on_error`` is quarantine: then rows whose documents differ are left out, listed in the folder's
    rehydrate-rejects.jsonl, and the outcome is ``partial``. With ``re_anchor``, documents that differ are
    re-anchored (``reanchor.py``) and the outcome is ``re-anchored``. ``documents`` (locator → text), when
    given, are the source documents instead of those read from the sources (texts held elsewhere)."""
    stage = on_stage or (lambda line: None)
    manifest = _text_free_manifest(text_free)
    corpus = installed_corpus(manifest.get("corpus"), text_free / "manifest.json")
    full_manifest = read_json(text_free / FULL_FOLDER / "manifest.json")
    builder = make_builder(corpus.builder, full_manifest.get("options"))
    planted = tamper_problems(text_free, corpus, builder)
    if planted:
        raise RehydrateError(
            f"{text_free} holds text this package does not write, planted after the build; not restored:\n  "
            + "\n  ".join(planted)
        )
    target = _target(out, corpus, manifest, full_manifest, text_free)
    view = ReleaseView(text_free)
    features = {config: features_for(builder.CONFIGS[config]) for config in view.configs()}
    if schema_fingerprint(features) != full_manifest.get("schema_fingerprint"):
        raise RehydrateError(
            f"the installed {corpus.name} record models differ from those that built {text_free.name} "
            f"(schema fingerprint); install clinical-corpora {manifest.get('package_version')}"
        )
    ctx = BuildContext(corpus, _sources(corpus, overrides), on_error)
    stage("collecting the documents the release names")
    wanted = _wanted(view)
    if documents is None:
        stage(f"reading {len(wanted)} documents from the sources")
        documents = read_wanted(builder, ctx, wanted)
    else:
        documents = {locator: documents[locator] for locator in wanted if locator in documents}
    bad = _bad_documents(wanted, documents, ctx)
    if bad and re_anchor:
        return _rehydrate_reanchored(
            builder, view, features, documents, wanted, bad, text_free, manifest, target, stage
        )
    if bad and on_error == "fail":
        raise RehydrateError(
            _bad_report(bad, _users(builder, view, bad)) + "\n(--on-error quarantine leaves their records out)"
        )
    remove_stale_staging(target.parent)
    staging = make_staging(target.parent, target.name)
    try:
        stage("restoring the rows")
        quarantined = _write_rows(builder, view, features, documents, bad, staging)
        for name, path in _full_files(text_free, manifest).items():
            copy_into(staging, name, path)
        if quarantined:
            (staging / REJECTS_FILE).write_text("".join(json.dumps(q) + "\n" for q in quarantined), encoding="utf-8")
            _replace_rehydration(staging, target, "a partial rehydration", _is_partial)
            return RehydrateOutcome(target, "partial", len(documents), quarantined)
        stage("checking every file against the full release's sha256")
        _check_outputs(staging, full_manifest, manifest)
        return RehydrateOutcome(target, publish(staging, target), len(documents))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@dataclass(frozen=True)
class SourceDocuments:
    """The documents a text-free release names (locator → recorded sha256) and those the sources hold."""

    corpus: CorpusManifest
    sources: dict[str, Path | None]
    wanted: dict[str, str]
    documents: dict[str, str]
    anchors: Path | None
    """The release's anchors file, when its manifest lists it (checked against its sha256)."""


def read_source_documents(text_free: Path, overrides: dict[str, Path]) -> SourceDocuments:
    """The release checked (every listed file against its sha256), then the documents it names read from the
    given sources (the embedded samples when none are given)."""
    manifest = _text_free_manifest(text_free)
    corpus = installed_corpus(manifest.get("corpus"), text_free / "manifest.json")
    full_manifest = read_json(text_free / FULL_FOLDER / "manifest.json")
    builder = make_builder(corpus.builder, full_manifest.get("options"))
    ctx = BuildContext(corpus, _sources(corpus, overrides))
    wanted = _wanted(ReleaseView(text_free))
    return SourceDocuments(
        corpus, ctx.sources, wanted, read_wanted(builder, ctx, wanted), listed_anchors(text_free, manifest)
    )


def listed_anchors(text_free: Path, manifest: dict[str, Any]) -> Path | None:
    """``anchors.parquet`` when the manifest lists it (an unlisted file is never read)."""
    listed = any(entry.get("file") == ANCHORS_FILE for entry in manifest["outputs"])
    return text_free / ANCHORS_FILE if listed else None


def _rehydrate_reanchored(
    builder: Builder,
    view: ReleaseView,
    features: dict[str, Features],
    documents: dict[str, str],
    wanted: dict[str, str],
    bad: dict[str, str],
    text_free: Path,
    manifest: dict[str, Any],
    target: Path,
    stage: Callable[[str], None],
) -> RehydrateOutcome:
    """The release re-anchored into ``target`` (replacing an earlier partial or re-anchored one only)."""
    stage(f"re-anchoring {len(bad)} document(s) that differ from the recorded ones")
    maps = document_maps(listed_anchors(text_free, manifest), wanted, documents, bad)
    remove_stale_staging(target.parent)
    staging = make_staging(target.parent, target.name)
    try:
        stage("restoring the rows")
        report = write_reanchored_rows(builder, view, features, documents, maps, staging)
        full_files = _full_files(text_free, manifest)
        if "manifest.json" not in full_files or "README.md" not in full_files:
            raise RehydrateError(f"{text_free / FULL_FOLDER} lacks the full release's manifest.json or README.md")
        write_reanchored_files(staging, full_files, report, manifest)
        _replace_rehydration(
            staging,
            target,
            "a partial or re-anchored rehydration",
            lambda folder: _is_partial(folder) or (folder / REPORT_FILE).is_file(),
        )
        return RehydrateOutcome(target, "re-anchored", len(documents), reanchored=report)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _replace_rehydration(staging: Path, target: Path, kind: str, is_kind: Callable[[Path], bool]) -> None:
    """Move ``staging`` to ``target``, replacing an earlier rehydration of this ``kind`` only (a release that is
    not the maintainer's is never published over, nor does it replace anything else)."""
    if target.exists() and not is_kind(target):
        raise RehydrateError(f"{target} exists and is not {kind}: give another --out")
    shutil.rmtree(target, ignore_errors=True)
    try:
        staging.rename(target)
    except OSError as error:
        raise RehydrateError(f"cannot write {target}: {error.strerror or error}") from None


def _text_free_manifest(folder: Path) -> dict[str, Any]:
    """The text-free release's manifest, every file it lists checked: inside the folder, a regular file, with
    the sha256 it records."""
    path = folder / "manifest.json"
    if not path.is_file():
        raise RehydrateError(f"{folder} is not a release: it has no manifest.json")
    manifest = read_json(path)
    if not isinstance(manifest, dict) or manifest.get("variant") != VARIANT:
        raise RehydrateError(f"{folder} is not a text-free release (made by clincorp release --text-free)")
    outputs = manifest.get("outputs")
    if not isinstance(outputs, list) or not all(isinstance(entry, dict) for entry in outputs):
        raise RehydrateError(f"{path}: outputs is not a list of files: the release is damaged or forged")
    for entry in outputs:
        file = listed_file(folder, entry.get("file"), path)
        if sha256_file(file) != entry.get("sha256"):
            raise RehydrateError(f"{file} differs from the sha256 in {path}: the release is damaged")
    return manifest


def _target(
    out: Path, corpus: CorpusManifest, manifest: dict[str, Any], full_manifest: dict[str, Any], text_free: Path
) -> Path:
    """``<out>/<corpus>/<corpus>-<version>``, the version checked (a release version, the same in both
    manifests)."""
    version = checked_version(full_manifest.get("version"), text_free / FULL_FOLDER / "manifest.json")
    if manifest.get("version") != version:
        raise RehydrateError(
            f"{text_free / 'manifest.json'}: version {manifest.get('version')!r} is not the full release's "
            f"{version!r}: the release is damaged or forged"
        )
    return out / corpus.name / release_folder(corpus.name, version)


def _full_files(text_free: Path, manifest: dict[str, Any]) -> dict[str, Path]:
    """The full release's own files (manifest, card, validation, figures) kept in ``full/``: exactly those the
    text-free manifest lists there (checked by :func:`_text_free_manifest`), by name."""
    prefix = f"{FULL_FOLDER}/"
    return {
        entry["file"].removeprefix(prefix): text_free / entry["file"]
        for entry in manifest["outputs"]
        if entry["file"].startswith(prefix) and is_full_file(entry["file"].removeprefix(prefix))
    }


def _sources(corpus: CorpusManifest, overrides: dict[str, Path]) -> dict[str, Path | None]:
    """The given sources; with none given, the embedded samples (a sample release's documents)."""
    unknown = sorted(set(overrides) - set(corpus.sources))
    if unknown:
        raise RehydrateError(
            f"{corpus.name} has no source {', '.join(unknown)}; its sources are {', '.join(corpus.sources)}"
        )
    for name, path in overrides.items():
        if not path.exists():
            raise RehydrateError(f"--source {name}={path}: no such file or folder")
    if overrides:
        return {name: overrides.get(name) for name in corpus.sources}
    return {name: corpus.folder / spec.path if spec.path else None for name, spec in corpus.sources.items()}


def _wanted(view: ReleaseView) -> dict[str, str]:
    """Locator → the sha256 recorded for it, read column-wise."""
    wanted: dict[str, str] = {}
    for config in view.configs():
        for shard in view.shards(config):
            for batch in pq.ParquetFile(shard).iter_batches(batch_size=BATCH_ROWS, columns=[SOURCE_DOCUMENTS]):
                locators, hashes = batch.column(0).flatten().flatten()
                wanted.update(zip(locators.to_pylist(), hashes.to_pylist(), strict=True))
    return wanted


def _users(builder: Builder, view: ReleaseView, locators: Collection[str]) -> dict[str, list[str]]:
    """Locator → the records (``config/id``) using it, for the locators named."""
    users: dict[str, list[str]] = defaultdict(list)
    for config in view.configs():
        id_field = getattr(builder.CONFIGS[config], "id_field", "id")
        for shard in view.shards(config):
            for row in stored_rows(shard, [id_field, SOURCE_DOCUMENTS]):
                for document in row[SOURCE_DOCUMENTS]:
                    if document["locator"] in locators:
                        users[document["locator"]].append(f"{config}/{row[id_field]}")
    return users


def _bad_documents(wanted: dict[str, str], documents: dict[str, str], ctx: BuildContext) -> dict[str, str]:
    """Locator → why it cannot restore the text: missing from its source, or a different text."""
    bad = {}
    for locator, sha256 in sorted(wanted.items()):
        if locator not in documents:
            source = split_locator(locator)[0]
            bad[locator] = f"not found in source {source} ({ctx.sources.get(source)})"
        elif text_sha256(documents[locator]) != sha256:
            bad[locator] = (
                f"its text ({len(documents[locator])} characters) differs from the one the release was built from "
                f"(sha256 {sha256[:12]}…): another version of the source, or an edited file"
            )
    return bad


def _bad_report(bad: dict[str, str], users: dict[str, list[str]]) -> str:
    lines = [f"{len(bad)} source document(s) cannot restore the release:"]
    for locator, reason in list(bad.items())[:SHOWN]:
        by_config: dict[str, list[str]] = defaultdict(list)
        for record in users[locator]:
            config, _, record_id = record.partition("/")
            by_config[config].append(record_id)
        used = "; ".join(
            f"{config} {', '.join(ids[:3])}" + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
            for config, ids in by_config.items()
        )
        lines.append(f"  {locator}: {reason}; used by {used}")
    if len(bad) > SHOWN:
        lines.append(f"  … and {len(bad) - SHOWN} more")
    return "\n".join(lines)


def _write_rows(
    builder: Builder,
    view: ReleaseView,
    features: dict[str, Features],
    documents: dict[str, str],
    bad: dict[str, str],
    staging: Path,
) -> list[dict[str, Any]]:
    """Every row restored (column by column) through the pipeline's writer, split by split; returns the rows
    left out because a document of theirs is bad."""
    texts = list(documents.values())
    index = {locator: number for number, locator in enumerate(documents)}
    quarantined: list[dict[str, Any]] = []
    for config, config_features in features.items():
        model = builder.CONFIGS[config]
        tree, id_field, schema = licensed_tree(model), getattr(model, "id_field", "id"), config_features.arrow_schema
        for split in view.splits(config):
            writer = SplitWriter(
                staging / "data" / config, split, config_features, rows_per_group=rows_per_row_group(model)
            )
            for shard in view.shards(config, split):
                for batch in pq.ParquetFile(shard).iter_batches(batch_size=BATCH_ROWS):
                    if bad:
                        batch = _without_bad_rows(batch, bad, f"{config}/{split}", id_field, quarantined)
                    try:
                        writer.write(restore_batch(batch, tree, schema, texts, index))
                    except RecipeError as error:
                        raise _recipe_error(error, batch, f"{config}/{split}", id_field) from None
            writer.close()
    return quarantined


def _recipe_error(error: RecipeError, batch: pa.RecordBatch, where: str, id_field: str) -> RehydrateError:
    """A recipe out of range, named by its record and field."""
    record = batch.column(id_field)[error.row].as_py()
    return RehydrateError(
        f"{where} record {record!r}: the recipe of {error.field} names {error.problem}: "
        "the release is damaged or forged"
    )


def _without_bad_rows(
    batch: pa.RecordBatch, bad: dict[str, str], where: str, id_field: str, quarantined: list[dict[str, Any]]
) -> pa.RecordBatch:
    keep = []
    for row_id, row_documents in zip(
        batch.column(id_field).to_pylist(), batch.column(SOURCE_DOCUMENTS).to_pylist(), strict=True
    ):
        broken = [document["locator"] for document in row_documents if document["locator"] in bad]
        keep.append(not broken)
        if broken:
            reason = "; ".join(bad[locator] for locator in broken)
            quarantined.append({"where": f"{where} [{row_id}]", "reason": reason, "documents": broken})
    return batch.filter(pa.array(keep))


def _check_outputs(folder: Path, full_manifest: dict[str, Any], manifest: dict[str, Any]) -> None:
    """Every file the full release's manifest lists, with the sha256 it records."""
    outputs = full_manifest.get("outputs")
    entries: list[Any] = outputs if isinstance(outputs, list) else [outputs]
    for entry in entries:
        name = entry.get("file") if isinstance(entry, dict) else None
        if not isinstance(name, str) or outside_reason(folder, name) is not None:
            raise RehydrateError(
                f"{FULL_FOLDER}/manifest.json lists {name!r} among its files: not a file of a release folder, "
                "the release is damaged or forged"
            )
    differing = [
        entry["file"]
        for entry in entries
        if not (folder / entry["file"]).is_file() or sha256_file(folder / entry["file"]) != entry.get("sha256")
    ]
    if differing:
        raise RehydrateError(
            f"the rehydrated {', '.join(differing)} differ from the maintainer's full release (sha256 in "
            f"full/manifest.json) although every document matched its hash: this package writes them "
            f"differently from clinical-corpora {manifest.get('package_version')}, which made the release"
        )


def _is_partial(folder: Path) -> bool:
    return (folder / REJECTS_FILE).is_file()
