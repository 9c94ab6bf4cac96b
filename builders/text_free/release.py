"""The text-free variant of a release: what anyone may share, and what rehydration restores from.

It is a pure function of the finished full release and the source documents, written beside it as
``<out>/<corpus>/<corpus>-<version>.text-free/`` by ``clincorp release <corpus> --text-free``. Beside it, not instead
of it: the maintainer keeps the full release (rehydration is checked against its bytes) and the two are
made from the same run's sources, so they cannot drift apart; a separate folder, not a config, because the
Hugging Face Hub hosts a folder and its card, and the card of a text-free folder is a different promise.

- ``data/``: the same configs, splits and rows; every field the record models mark :data:`LicensedText`
  holds a recipe instead (``schemas/licensed.py``), and each row lists its ``source_documents`` (locator
  and sha256). A recipe is found greedily: the whole string as one slice of a document when it is one,
  else the longest slices (``recipes.MIN_SLICE`` characters or more) with the characters no document
  holds between them as literals. Rows are written batch by batch: the corpus's hook names each row's
  documents once (on lazy row views), and recipes are made column-wise (``builders/text_free/recipes.py``);
- ``full/``: the full release's manifest.json, validation.json, inputs.jsonl and rejects.jsonl as they are
  (counts, hashes, gate results, the card sections measured while building; the leak gate checks them like
  every other file), so rehydration restores those bytes, draws the card, figures and croissant.json again
  from the restored rows and that record, and checks every file against the recorded sha256;
- ``anchors.parquet``: per source document, the evidence ``clincorp rehydrate --re-anchor`` relocates spans
  with in a copy that differs (``builders/text_free/anchors.py``: a normalised-text hash and edits, block
  hashes), no text; the leak gate reads it like every other file;
- its own manifest.json, validation.json (the leak gate, ``builders/text_free/leak_gate.py``) and card.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow.parquet as pq
from datasets import Features
from pydantic import BaseModel

from clinical_corpora.builders.contract.base import BuildContext, Builder, make_builder
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.folder import make_staging, publish, release_folder
from clinical_corpora.builders.release.outputs import folder_outputs
from clinical_corpora.builders.release.phi import (
    PHI_ADVICE,
    PhiOutcome,
    keep_phi_report,
    phi_policy,
    phi_report_file,
    run_phi_gate,
)
from clinical_corpora.builders.release.writer import SplitWriter
from clinical_corpora.builders.text_free.anchors import write_anchors
from clinical_corpora.builders.text_free.card import describe_text_free
from clinical_corpora.builders.text_free.layout import (
    BATCH_ROWS,
    TEXT_FREE_SUFFIX,
    VARIANT,
    is_full_file,
)
from clinical_corpora.builders.text_free.lazy_rows import lazy_rows
from clinical_corpora.builders.text_free.leak_gate import leak_gate
from clinical_corpora.builders.text_free.recipes import DocumentGroups, Recipes
from clinical_corpora.core.errors import ClincorpError, GateError
from clinical_corpora.core.locators import split_locator
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.release_manifest import (
    GateVerdict,
    OutputFile,
    PhiAllowances,
    PhiReviewed,
    ReleaseManifest,
    read_manifest,
    write_manifest,
)
from clinical_corpora.core.release_records import (
    ANCHORS_FILE,
    FULL_FOLDER,
    VALIDATION_FILE,
    ValidationRecord,
    write_validation,
)
from clinical_corpora.schemas.bounded import unbounded_strings
from clinical_corpora.schemas.features import features_for, schema_fingerprint
from clinical_corpora.schemas.licensed import licensed_paths, licensed_tree, offset_fields, text_free_features
from clinical_corpora.validation.gates import GateResult


@dataclass
class TextFreeOutcome:
    folder: Path
    status: Literal["released", "unchanged"]
    gate: GateResult


def release_text_free(
    manifest: CorpusManifest,
    full: Path,
    sources: dict[str, Path | None],
    on_stage: Any = None,
    reviewed: Sequence[PhiReviewed] = (),
) -> TextFreeOutcome:
    """Write ``<corpus>-<version>.text-free`` beside the full release ``full`` (built from ``sources``); a GateError
    when the leak gate or the PHI gate fails (nothing is written; the PHI gate lets ``reviewed`` findings through
    and leaves its findings beside the folder it did not write)."""
    stage = on_stage or (lambda line: None)
    full_manifest = read_manifest(full)
    if full_manifest.corpus != manifest.name or full_manifest.kind != "full":
        raise ClincorpError(f"{full} is not a full release of {manifest.name}")
    builder = make_builder(manifest, full_manifest.options)
    view = ReleaseView(full)
    models = {config: builder.CONFIGS[config] for config in manifest.configs if config in view.configs()}
    _refuse_unbounded(manifest, models)
    stage("collecting the source documents the release's text comes from")
    groups = DocumentGroups()
    ctx = BuildContext(manifest, sources)
    row_groups = {
        shard: document_groups(builder, ctx, config, shard, groups)
        for config in models
        for shard in view.shards(config)
    }
    stage(f"reading {len(groups.locators())} source documents")
    documents = _source_documents(builder, ctx, groups.locators())
    target = full.parent / f"{release_folder(manifest.name, full_manifest.version)}{TEXT_FREE_SUFFIX}"
    staging = make_staging(full.parent, target.name)
    try:
        stage("writing the text-free rows")
        recipes = Recipes(documents, groups)
        features = write_rows(view, models, recipes, row_groups, staging)
        stage("writing the anchors that re-anchor spans in copies of the sources that differ")
        write_anchors(staging / ANCHORS_FILE, ((loc, text, recipes.hashes[loc]) for loc, text in documents.items()))
        _copy_full_files(full, full_manifest, staging / FULL_FOLDER)
        stage("running the leak gate")
        ignored = {name for config in features.values() for name in _label_names(config)}
        gate = leak_gate(staging, documents.items(), ignored)
        counts = dict(sorted(Counter(split_locator(locator)[0] for locator in documents).items()))
        licensed = {config: licensed_paths(model) for config, model in models.items()}
        release = _TextFree(full_manifest, features, licensed, counts, [gate])
        hashed = _write_release_files(staging, manifest, builder, release)
        if not gate.success:
            raise GateError(f"{manifest.name}: {gate.describe()}; {gate.details[0]['problem']}")
        stage("running the PHI gate over every file of the text-free release")
        phi = _phi_gate(staging, manifest, reviewed, target)
        _write_release_files(
            staging, manifest, builder, replace(release, gates=[gate, phi.gate], phi=phi.allowances, hashed=hashed)
        )
        return TextFreeOutcome(target, publish(staging, target), gate)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _phi_gate(staging: Path, manifest: CorpusManifest, reviewed: Sequence[PhiReviewed], target: Path) -> PhiOutcome:
    """The PHI gate over the staged text-free release; a GateError naming where its findings are listed."""
    declared = PhiAllowances(allowed_fields=manifest.gates.phi_allowed, reviewed=list(reviewed))
    phi = run_phi_gate(staging, phi_policy(manifest.folder, None, declared))
    report = phi_report_file(target.parent, target.name)
    keep_phi_report(report, phi.findings)
    if not phi.gate.success:
        listed = "\n".join(f"  {detail['problem']}" for detail in phi.gate.details)
        raise GateError(f"{manifest.name} text-free: {phi.gate.describe()}\n{listed}\n{PHI_ADVICE}: {report}")
    return phi


def _refuse_unbounded(manifest: CorpusManifest, models: dict[str, type[BaseModel]]) -> None:
    """A text-free release keeps every field that is not licensed text as it is: refuse a record model with a
    string field that is neither licensed nor bounded (``schemas/bounded.py``), naming the fields."""
    found = [f"{config}.{problem}" for config, model in models.items() for problem in unbounded_strings(model)]
    if found:
        shown = "; ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
        raise ClincorpError(
            f"{manifest.name}: no text-free release: its record models keep strings nothing bounds ({shown}); "
            "mark each as licensed text (LicensedText) or give it a bound (schemas/bounded.py)"
        )


@dataclass(frozen=True)
class _TextFree:
    """What a text-free release's own files record beyond its rows."""

    full: ReleaseManifest
    features: dict[str, Features]
    licensed: dict[str, list[str]]
    documents: dict[str, int]
    gates: list[GateResult]
    """The leak gate, then the PHI gate once it ran."""
    phi: PhiAllowances | None = None
    hashed: tuple[OutputFile, ...] = ()
    """Files hashed by an earlier write and not written since (data shards, anchors, ``full/``)."""


def _source_documents(builder: Builder, ctx: BuildContext, wanted: set[str]) -> dict[str, str]:
    """The wanted documents' texts; an error naming those the sources lack."""
    documents = builder.read_wanted(ctx, wanted)
    missing = sorted(wanted - documents.keys())
    if missing:
        raise ClincorpError(
            f"{ctx.manifest.name}: the sources hold no document {', '.join(missing[:10])}"
            + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
            + ": give the sources the full release was built from"
        )
    return documents


def _write_release_files(
    staging: Path, corpus: CorpusManifest, builder: Builder, release: _TextFree
) -> tuple[OutputFile, ...]:
    """validation.json, README.md, croissant.json and manifest.json (last: it lists the sha256 of every other
    file); the entries of the files it did not write, which a later call need not hash again."""
    full, records = release.full, [gate.record() for gate in release.gates]
    write_validation(
        staging,
        ValidationRecord(corpus=corpus.name, version=full.version, variant=VARIANT, agreement=None, gates=records),
    )
    draft = ReleaseManifest(
        corpus=corpus.name,
        version=full.version,
        variant=VARIANT,
        release=True,
        builder=corpus.builder,
        builder_version=full.builder_version,
        package_version=package_version("clinical-corpora"),
        sample=full.sample,
        options=full.options,
        changes=full.changes,
        schema_fingerprint=schema_fingerprint(release.features),
        full_schema_fingerprint=full.schema_fingerprint,
        licensed_fields=release.licensed,
        documents=release.documents,
        outputs=folder_outputs(staging, known=release.hashed),
        gates=[GateVerdict(gate=record.gate, status=record.status, observed=record.observed) for record in records],
        phi=release.phi,
    )
    described = describe_text_free(corpus, builder, draft, full, ReleaseView(staging))
    for name, data in described.items():
        (staging / name).write_bytes(data)
    known = [entry for entry in draft.outputs if entry.file not in described]  # the card and croissant.json are new
    written = folder_outputs(staging, known=known)
    write_manifest(staging, draft.model_copy(update={"outputs": written}))
    return tuple(entry for entry in known if entry.file != VALIDATION_FILE)


def document_groups(
    builder: Builder, ctx: BuildContext, config: str, shard: Path, groups: DocumentGroups
) -> np.ndarray:
    """The number of each stored row's source documents (the corpus's hook reads lazy rows)."""
    numbers = [
        groups.number(builder.source_documents(ctx, config, row))
        for batch in pq.ParquetFile(shard).iter_batches(batch_size=BATCH_ROWS)
        for row in lazy_rows(batch)
    ]
    return np.array(numbers, dtype=np.int32)


def write_rows(
    view: ReleaseView,
    models: dict[str, type[BaseModel]],
    recipes: Recipes,
    row_groups: dict[Path, np.ndarray],
    staging: Path,
) -> dict[str, Features]:
    """Each config's rows with recipes in place of licensed text, batch by batch; returns the text-free
    Features."""
    derived = {}
    for config, model in models.items():
        tree, paired = licensed_tree(model), offset_fields(model)
        derived[config] = features = text_free_features(features_for(model), tree)
        schema = features.arrow_schema
        for split in view.splits(config):
            writer = SplitWriter(staging / "data" / config, split, features)
            for shard in view.shards(config, split):
                first = 0
                for batch in pq.ParquetFile(shard).iter_batches(batch_size=BATCH_ROWS):
                    groups = row_groups[shard][first : first + batch.num_rows]
                    writer.write(recipes.batch(batch, tree, paired, schema, groups))
                    first += batch.num_rows
            writer.close()
    return derived


def _copy_full_files(full: Path, full_manifest: ReleaseManifest, folder: Path) -> None:
    """The full release's own JSON files (manifest, validation, inputs, rejects): ``clincorp rehydrate`` draws its
    card, figures and croissant.json again from the restored rows."""
    folder.mkdir()
    for name in ("manifest.json", *(entry.file for entry in full_manifest.outputs if is_full_file(entry.file))):
        shutil.copyfile(full / name, folder / name)


def _label_names(feature: Any) -> Iterator[str]:
    """Every ClassLabel name inside a feature."""
    names = getattr(feature, "names", None)
    if isinstance(names, list):
        yield from names
    inner = getattr(feature, "feature", None)
    if inner is not None:
        yield from _label_names(inner)
    if isinstance(feature, dict):
        for child in feature.values():
            yield from _label_names(child)
