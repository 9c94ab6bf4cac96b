"""``clincorp rehydrate``: rebuild the full release from a text-free one and the user's own sources.

The text-free release is opened through the door (``release/opened.py``): every file checked against its sha256,
its layout and its typed manifests. The documents its rows name are streamed from the sources, keeping only those
(``documents.py``); each row's recipes are restored column by column, checked against its record model, and
written through the pipeline's writer (``folder.py``). A strict rehydration then draws the full release's card,
figures and croissant.json again from the restored rows and checks every file against the sha256 the
maintainer's manifest recorded. With ``on_error`` quarantine the records whose documents differ are left out (a
partial rehydration); with ``re_anchor`` their spans are relocated in the user's copy (``reanchor/``). Either is
marked as what it is, with its own counts, card and manifest. ``--re-key`` first finds each document by its
content in a notes table of other ids (``rekey.py``), then re-anchors, and writes ``<folder>.rekey.csv`` beside
the restored folder.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from clinical_corpora.builders.contract.base import make_builder
from clinical_corpora.builders.rehydrate.documents import bad_report, opened_text_free, read_documents
from clinical_corpora.builders.rehydrate.folder import finish_rehydrated, finish_strict, write_rows
from clinical_corpora.builders.rehydrate.reanchor.run import Reanchored, reanchor
from clinical_corpora.builders.rehydrate.rekey import NotesTable, Rekeyed, rekey, unmapped_error
from clinical_corpora.builders.rehydrate.request import RehydrateRequest
from clinical_corpora.builders.rehydrate.restoring import RehydrateError, Restoring
from clinical_corpora.builders.release.folder import publish, release_folder, remove_stale_staging, staged
from clinical_corpora.builders.release.opened import OpenedRelease
from clinical_corpora.builders.text_free.anchors import read_anchors
from clinical_corpora.core.release_manifest import Rehydration, release_digest
from clinical_corpora.core.release_records import (
    ANCHORS_FILE,
    FULL_FOLDER,
    REANCHORED_FILE,
    REHYDRATE_REJECTS_FILE,
    RehydrateReject,
    write_json_lines,
)

Status = Literal["released", "unchanged", "partial", "re-anchored"]
REKEY_SUFFIX = ".rekey.csv"


@dataclass
class RehydrateOutcome:
    folder: Path
    status: Status
    documents: int
    quarantined: list[RehydrateReject] = field(default_factory=list)
    reanchored: Reanchored | None = None


def source_texts(text_free: Path, sources: dict[str, Path] | None = None) -> dict[str, str]:
    """The texts of the documents a text-free release names, as the sources (default: the embedded samples) hold
    them (locator → text)."""
    opened = opened_text_free(text_free)
    return read_documents(opened, RehydrateRequest(text_free, text_free.parent, sources or {})).documents


def rehydrate(request: RehydrateRequest) -> RehydrateOutcome:
    """Restore a text-free release into ``<out>/<corpus>/<corpus>-<version>``: byte-identical or a RehydrateError,
    unless the request quarantines (a partial rehydration) or re-anchors (see the module docstring)."""
    return _rehydrate_opened(opened_text_free(request.text_free), request)


def _rehydrate_opened(opened: OpenedRelease, request: RehydrateRequest) -> RehydrateOutcome:
    found = read_documents(opened, request)
    restoring = Restoring(
        opened.view,
        opened.configs(),
        opened.corpus,
        make_builder(opened.corpus, opened.full_manifest.options),
        opened.full_manifest,
        opened.listed(ANCHORS_FILE),
        found.wanted,
        list(found.documents.values()),
        {locator: number for number, locator in enumerate(found.documents)},
        found.bad,
    )
    if found.bad and not request.re_anchor and request.on_error == "fail":
        raise RehydrateError(
            bad_report(restoring.builder, opened.view, found.bad) + "\n(--on-error quarantine leaves their records out)"
        )
    target = request.out / opened.corpus.name / release_folder(opened.corpus.name, opened.version)
    remove_stale_staging(target.parent)
    with staged(target.parent, target.name) as staging:
        return _restored(request, opened, restoring, staging, target)


@dataclass(frozen=True)
class RekeyedOutcome:
    outcome: RehydrateOutcome
    rekeyed: Rekeyed
    csv: Path


def rehydrate_rekeyed(request: RehydrateRequest, table: NotesTable) -> RekeyedOutcome:
    """The release restored from ``table``'s notes, each document found by its content, then re-anchored where
    its text differs; ``<folder>.rekey.csv`` written beside it."""
    opened = opened_text_free(request.text_free)
    wanted = opened.view.source_documents(opened.configs())
    listed = opened.listed(ANCHORS_FILE)
    anchors = read_anchors(listed, wanted) if listed is not None else {}
    request.stage(f"looking for {len(wanted)} documents among the {len(table.notes)} notes of {table.path}")
    rekeyed = rekey(wanted, anchors, table)
    if not rekeyed.mapped:
        raise unmapped_error(rekeyed)
    outcome = _rehydrate_opened(opened, dataclasses.replace(request, re_anchor=True, documents=rekeyed.texts(table)))
    written = outcome.folder.with_name(outcome.folder.name + REKEY_SUFFIX)
    rekeyed.write_csv(written)
    return RekeyedOutcome(outcome, rekeyed, written)


def _restored(
    request: RehydrateRequest, opened: OpenedRelease, restoring: Restoring, staging: Path, target: Path
) -> RehydrateOutcome:
    """The rows and files written into ``staging``, then moved to ``target``: re-anchored, partial or strict."""
    documents = len(restoring.texts)
    if restoring.bad and request.re_anchor:
        request.stage(f"re-anchoring {len(restoring.bad)} document(s) that differ from the recorded ones")
        report = reanchor(restoring, staging)
        finish_rehydrated(opened, restoring, staging, _rehydration(opened, report), report.write)
        _replace(staging, target, "re-anchored")
        return RehydrateOutcome(target, "re-anchored", documents, reanchored=report)
    request.stage("restoring the rows")
    left = write_rows(restoring, staging, leave_out=request.on_error == "quarantine")
    if left:
        rehydration = _partial(opened, left)
        finish_rehydrated(opened, restoring, staging, rehydration, lambda folder: _write_rejects(folder, left))
        _replace(staging, target, "partial")
        return RehydrateOutcome(target, "partial", documents, left)
    request.stage("drawing the card and checking every file against the full release's sha256")
    finish_strict(opened, restoring, staging)
    return RehydrateOutcome(target, publish(staging, target), documents)


def _write_rejects(folder: Path, left: list[RehydrateReject]) -> None:
    write_json_lines(folder / REHYDRATE_REJECTS_FILE, left)


def _rehydration(opened: OpenedRelease, report: Reanchored) -> Rehydration:
    summary = report.summary()
    return Rehydration(
        mode="re-anchored",
        strings=summary["strings"],
        records_left_out=len(report.left_out),
        left_out=dict(sorted(Counter(entry["record"].split("/")[0] for entry in report.left_out).items())),
        documents_re_anchored=summary["documents_re_anchored"],
        documents_unusable=summary["documents_unusable"],
        maintainer_manifest_sha256=release_digest(opened.folder / FULL_FOLDER),
        text_free_package_version=opened.manifest.package_version,
        report=REANCHORED_FILE,
    )


def _partial(opened: OpenedRelease, left: list[RehydrateReject]) -> Rehydration:
    per_config = Counter(entry.where.split("/")[0] for entry in left)
    return Rehydration(
        mode="partial",
        records_left_out=len(left),
        left_out=dict(sorted(per_config.items())),
        maintainer_manifest_sha256=release_digest(opened.folder / FULL_FOLDER),
        text_free_package_version=opened.manifest.package_version,
        report=REHYDRATE_REJECTS_FILE,
    )


def _replace(staging: Path, target: Path, kind: str) -> None:
    """Move ``staging`` to ``target``, replacing an earlier partial or re-anchored rehydration only (a release
    that is not the maintainer's is never published over one, nor does it replace anything else)."""
    if target.exists() and not _is_rehydration(target):
        raise RehydrateError(f"{target} exists and is not a partial or re-anchored rehydration: give another --out")
    shutil.rmtree(target, ignore_errors=True)
    try:
        staging.rename(target)
    except OSError as error:
        raise RehydrateError(f"cannot write the {kind} rehydration to {target}: {error.strerror or error}") from None


def _is_rehydration(folder: Path) -> bool:
    return (folder / REHYDRATE_REJECTS_FILE).is_file() or (folder / REANCHORED_FILE).is_file()
