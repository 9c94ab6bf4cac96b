"""``clincorp rehydrate``: rebuild the full release from a text-free one and the user's own sources.

The text-free release is opened through the door (``release/opened.py``): every file checked against its sha256,
its layout and its typed manifests. The documents its rows name are streamed from the sources, keeping only those
(``documents.py``); each row's recipes are restored column by column, checked against its record model, and
written through the pipeline's writer (``folder.py``). A strict rehydration then draws the full release's card,
figures and croissant.json again from the restored rows and checks every file against the sha256 the
maintainer's manifest recorded. With ``on_error`` quarantine the records whose documents differ are left out (a
partial rehydration); with ``re_anchor`` their spans are relocated in the user's copy (``reanchor/``). Either is
marked as what it is, with its own counts, card and manifest.
"""

from __future__ import annotations

import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from clinical_corpora.builders.contract.base import BuildContext, make_builder
from clinical_corpora.builders.rehydrate.documents import (
    RehydrateError,
    SourceDocuments,
    bad_report,
    given_sources,
    source_documents,
)
from clinical_corpora.builders.rehydrate.folder import Restoring, finish_rehydrated, finish_strict, write_rows
from clinical_corpora.builders.rehydrate.reanchor.run import Reanchored, reanchor
from clinical_corpora.builders.rehydrate.request import RehydrateRequest
from clinical_corpora.builders.release.folder import make_staging, publish, release_folder, remove_stale_staging
from clinical_corpora.builders.release.opened import OpenedRelease, open_release
from clinical_corpora.builders.text_free.card import describe_text_free
from clinical_corpora.core.release_manifest import Rehydration, release_digest
from clinical_corpora.core.release_records import RehydrateReject, write_json_lines
from clinical_corpora.schemas.features import features_for, schema_fingerprint

REJECTS_FILE: Final = "rehydrate-rejects.jsonl"

Status = Literal["released", "unchanged", "partial", "re-anchored"]


@dataclass
class RehydrateOutcome:
    folder: Path
    status: Status
    documents: int
    quarantined: list[RehydrateReject] = field(default_factory=list)
    reanchored: Reanchored | None = None


def opened_text_free(folder: Path) -> OpenedRelease:
    """A text-free release through the door, its record models those of the installed corpus, its full release's
    manifest that of the same release, and its card and croissant.json those the package draws (nothing planted
    in them)."""
    opened = open_release(folder)
    if not opened.text_free:
        raise RehydrateError(f"{folder} is not a text-free release (made by clincorp release --text-free)")
    full = opened.full_manifest
    differing = [
        field
        for field in ("corpus", "version", "builder", "sample", "options", "changes")
        if getattr(full, field) != getattr(opened.manifest, field)
    ]
    if differing or full.kind != "full":
        raise RehydrateError(
            f"{folder}: full/manifest.json is not the manifest of this release's full release ({', '.join(differing)} "
            "differ): the release is damaged or forged"
        )
    builder = make_builder(opened.corpus.builder, full.options)
    for name, data in describe_text_free(opened.corpus, builder, opened.manifest, full, opened.view).items():
        if (folder / name).read_bytes() != data:
            raise RehydrateError(
                f"{folder / name} differs from what the package draws from the release: text planted after the "
                "build? Not restored (clincorp validate says more)"
            )
    features = {config: features_for(builder.CONFIGS[config]) for config in opened.configs()}
    if schema_fingerprint(features) != full.schema_fingerprint:
        raise RehydrateError(
            f"the installed {opened.corpus.name} record models differ from those that built {folder.name} "
            f"(schema fingerprint); install clinical-corpora {opened.manifest.package_version}"
        )
    return opened


def read_documents(opened: OpenedRelease, request: RehydrateRequest) -> SourceDocuments:
    """The documents the release names, from the request's sources (or its given texts)."""
    builder = make_builder(opened.corpus.builder, opened.full_manifest.options)
    ctx = BuildContext(opened.corpus, given_sources(opened.corpus, request.sources), request.on_error)
    request.stage("reading the documents the release names from the sources")
    return source_documents(builder, ctx, opened.view, request.documents)


def source_texts(text_free: Path, sources: dict[str, Path] | None = None) -> dict[str, str]:
    """The texts of the documents a text-free release names, as the sources (default: the embedded samples) hold
    them (locator → text)."""
    opened = opened_text_free(text_free)
    return read_documents(opened, RehydrateRequest(text_free, text_free.parent, sources or {})).documents


def rehydrate(request: RehydrateRequest) -> RehydrateOutcome:
    """Restore a text-free release into ``<out>/<corpus>/<corpus>-<version>``: byte-identical or a RehydrateError,
    unless the request quarantines (a partial rehydration) or re-anchors (see the module docstring)."""
    opened = opened_text_free(request.text_free)
    found = read_documents(opened, request)
    restoring = Restoring(
        opened,
        make_builder(opened.corpus.builder, opened.full_manifest.options),
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
    staging = make_staging(target.parent, target.name)
    try:
        if found.bad and request.re_anchor:
            request.stage(f"re-anchoring {len(found.bad)} document(s) that differ from the recorded ones")
            report = reanchor(restoring, found, staging)
            _replace(staging, target, "re-anchored")
            return RehydrateOutcome(target, "re-anchored", len(found.documents), reanchored=report)
        request.stage("restoring the rows")
        left = write_rows(restoring, staging, leave_out=request.on_error == "quarantine")
        if left:
            finish_rehydrated(
                restoring, staging, _partial(opened, left), lambda folder: write_json_lines(folder / REJECTS_FILE, left)
            )
            _replace(staging, target, "partial")
            return RehydrateOutcome(target, "partial", len(found.documents), left)
        request.stage("drawing the card and checking every file against the full release's sha256")
        finish_strict(restoring, staging)
        return RehydrateOutcome(target, publish(staging, target), len(found.documents))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _partial(opened: OpenedRelease, left: list[RehydrateReject]) -> Rehydration:
    per_config = Counter(entry.where.split("/")[0] for entry in left)
    return Rehydration(
        mode="partial",
        records_left_out=len(left),
        left_out=dict(sorted(per_config.items())),
        maintainer_manifest_sha256=release_digest(opened.folder / "full"),
        text_free_package_version=opened.manifest.package_version,
        report=REJECTS_FILE,
    )


def _replace(staging: Path, target: Path, kind: str) -> None:
    """Move ``staging`` to ``target``, replacing an earlier partial or re-anchored rehydration only (a release
    that is not the maintainer's is never published over one, nor does it replace anything else)."""
    if target.exists() and not _rehydration(target):
        raise RehydrateError(f"{target} exists and is not a partial or re-anchored rehydration: give another --out")
    shutil.rmtree(target, ignore_errors=True)
    try:
        staging.rename(target)
    except OSError as error:
        raise RehydrateError(f"cannot write the {kind} rehydration to {target}: {error.strerror or error}") from None


def _rehydration(folder: Path) -> bool:
    return (folder / REJECTS_FILE).is_file() or (folder / "re-anchored.jsonl").is_file()
