"""Writing a rehydrated folder: the rows restored through the pipeline's writer (checked against their record
models), the full release's own files, and either its descriptions drawn again from the restored rows and every
file checked against the full release's sha256 (a strict rehydration: the maintainer's release, byte for byte),
or the rehydration's own card and manifest (a partial or re-anchored one: what it holds, marked as such)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.rehydrate.restoring import RehydrateError, Restoring
from clinical_corpora.builders.rehydrate.rows import RestoredRows
from clinical_corpora.builders.release.card.describe import FullRelease, describe_full
from clinical_corpora.builders.release.card.rehydrated import describe_rehydrated
from clinical_corpora.builders.release.opened import OpenedRelease, differing_files, overlaid
from clinical_corpora.builders.release.outputs import folder_files, folder_outputs
from clinical_corpora.builders.release.writer import SplitWriter, rows_per_row_group
from clinical_corpora.core.errors import record_name
from clinical_corpora.core.release_manifest import MANIFEST_FILE, Counts, Rehydration, ReleaseManifest, write_manifest
from clinical_corpora.core.release_records import FULL_FOLDER, FULL_JSON_FILES, RehydrateReject
from clinical_corpora.schemas.licensed import SOURCE_DOCUMENTS, licensed_tree

BATCH_ROWS = 10_000


def write_rows(restoring: Restoring, staging: Path, leave_out: bool) -> list[RehydrateReject]:
    """Every row restored (column by column) through the pipeline's writer, split by split, and checked against its
    record model; rows whose documents are bad, or that are not valid records, are left out and returned when
    ``leave_out``, else a RehydrateError names the first."""
    view = restoring.view
    left: list[RehydrateReject] = []
    for config, features in restoring.features().items():
        model = restoring.builder.CONFIGS[config]
        rows, tree = RestoredRows(model, features), licensed_tree(model)
        for split in view.splits(config):
            writer = SplitWriter(staging / "data" / config, split, features, rows_per_group=rows_per_row_group(model))
            for shard in view.shards(config, split):
                for batch in view.shard_batches(shard, BATCH_ROWS):
                    where = f"{config}/{split}"
                    batch = _without_bad_rows(batch, restoring.bad, where, rows.id_field, left)
                    restored = restoring.restore(batch, tree, features.arrow_schema, where, rows.id_field)
                    writer.write(_checked(restored, rows, where, left if leave_out else None))
            writer.close()
    return left


def _checked(
    batch: pa.RecordBatch, rows: RestoredRows, where: str, left: list[RehydrateReject] | None
) -> pa.RecordBatch:
    """The restored rows that are valid records; the others left out into ``left``, or an error (None)."""
    problems = rows.problems(batch)
    if not problems:
        return batch
    if left is None:
        position, problem = problems[0]
        raise RehydrateError(
            f"{where} record {rows.record(batch, position)!r} restores as no valid record ({problem}): the "
            "release is damaged or forged (its recipes do not give the text its offsets name)"
        )
    for position, problem in problems:
        left.append(RehydrateReject(where=f"{where} [{rows.record(batch, position)}]", reason=problem, documents=[]))
    return rows.without(batch, [position for position, _ in problems])


def _without_bad_rows(
    batch: pa.RecordBatch, bad: dict[str, str], where: str, id_field: str, left: list[RehydrateReject]
) -> pa.RecordBatch:
    if not bad:
        return batch
    keep = []
    for row_id, row_documents in zip(
        batch.column(id_field).to_pylist(), batch.column(SOURCE_DOCUMENTS).to_pylist(), strict=True
    ):
        broken = [document["locator"] for document in row_documents if document["locator"] in bad]
        keep.append(not broken)
        if broken:
            reason = "; ".join(bad[locator] for locator in broken)
            left.append(
                RehydrateReject(where=f"{where} [{record_name(row_id)}]", reason=reason[:2000], documents=broken)
            )
    return batch.filter(pa.array(keep))


def copy_full_json(opened: OpenedRelease, staging: Path) -> None:
    """The full release's validation.json, inputs.jsonl and rejects.jsonl, as ``full/`` holds them."""
    for name in FULL_JSON_FILES:
        listed = opened.listed(f"{FULL_FOLDER}/{name}")
        if listed is not None:
            shutil.copyfile(listed, staging / name)


def finish_strict(opened: OpenedRelease, restoring: Restoring, staging: Path) -> None:
    """The full release's descriptions drawn again from the restored rows, its manifest and JSON files, and
    every file against the sha256 its manifest records."""
    full = restoring.full
    copy_full_json(opened, staging)
    shutil.copyfile(opened.folder / FULL_FOLDER / "manifest.json", staging / "manifest.json")
    view = ReleaseView(staging)
    corpus = overlaid(full, opened.corpus)[0]
    statistics = restoring.builder.statistics(view)
    drawn = describe_full(FullRelease(corpus, restoring.builder, full, opened.full_validation, view, statistics))
    for name, data in drawn.items():
        (staging / name).parent.mkdir(exist_ok=True)
        (staging / name).write_bytes(data)
    differing = differing_files(staging, full)
    extra = sorted(set(folder_files(staging)) - {entry.file for entry in full.outputs} - {MANIFEST_FILE})
    if differing or extra:
        raise RehydrateError(
            f"the rehydrated {', '.join([*differing, *extra])} differ from the maintainer's full release (sha256 "
            f"in full/manifest.json) although every document matched its hash: this package writes them "
            f"differently from clinical-corpora {full.package_version}, which made the release"
        )


def finish_rehydrated(
    opened: OpenedRelease, restoring: Restoring, staging: Path, rehydration: Rehydration, report: Callable[[Path], None]
) -> None:
    """A partial or re-anchored rehydration's own files: the full release's JSON files, its report (written by
    ``report``), its card and croissant.json drawn from its rows, and its manifest: the maintainer's, marked,
    with its own counts and files."""
    copy_full_json(opened, staging)
    report(staging)
    view = ReleaseView(staging)
    shards = folder_outputs(staging, within="data/")
    full = restoring.full
    counts = full.counts or Counts(read=0, written=0, rejected=0, rejected_annotations=0)
    draft = full.model_copy(
        update={
            "variant": rehydration.mode,
            "rehydration": rehydration,
            "counts": counts.model_copy(update={"written": sum(entry.rows or 0 for entry in shards)}),
            "outputs": shards,
        }
    )
    draft = ReleaseManifest.model_validate(draft.model_dump())  # checked as what is written is read back
    for name, data in describe_rehydrated(restoring.corpus, restoring.builder, draft, view).items():
        (staging / name).write_bytes(data)
    write_manifest(staging, draft.model_copy(update={"outputs": folder_outputs(staging, known=shards)}))
