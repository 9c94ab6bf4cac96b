"""What only a text-free release holds: the full release's own JSON files in ``full/`` (its manifest, validation
record, inputs and rejects, typed and consistent with the text-free release and the installed corpus), the leak
gate it passed when it was written, and its anchors (one per source document its rows name, each checked).

The leak gate itself needs the source documents, which a modeller may not hold; ``clincorp release --text-free``
from the same sources runs it again. Without them, every byte of the release is
either checked here, drawn again (its card, croissant.json) or bounded by its record models (its rows)."""

from __future__ import annotations

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.inputs_file import inputs_problems
from clinical_corpora.builders.release.opened import OpenedRelease
from clinical_corpora.builders.text_free.anchors import read_anchors
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.release_manifest import LeakObserved
from clinical_corpora.core.release_records import (
    ANCHORS_FILE,
    FULL_FOLDER,
    READER_CHANGES_FILE,
    REJECTS_FILE,
    RejectLine,
    read_json_lines,
    reader_changes_problems,
)


def leak_problems(opened: OpenedRelease) -> list[str]:
    """The leak gate validation.json records: passed, within its limit, as manifest.json records it."""
    validation = opened.validation
    gate = next((g for g in validation.gates if g.gate == "leak"), None)
    if validation.variant != "text-free" or (validation.corpus, validation.version) != (
        opened.manifest.corpus,
        opened.manifest.version,
    ):
        return ["validation.json is not the validation record of this text-free release"]
    if gate is None or not isinstance(gate.observed, LeakObserved):
        return ["validation.json records no leak gate"]
    if gate.status != "pass" or gate.observed.longest_shared_run > gate.observed.limit:
        return [f"the leak gate did not pass: longest shared run {gate.observed.longest_shared_run} characters"]
    recorded = [(g.gate, g.status, g.observed) for g in opened.manifest.gates]
    if recorded != [(g.gate, g.status, g.observed) for g in validation.gates]:
        return ["manifest.json gates differ from validation.json's"]
    return []


def full_problems(opened: OpenedRelease) -> list[str]:
    """``full/``: the full release's inputs.jsonl against its manifest's summary, its rejects.jsonl and
    reader-changes.jsonl against its counts (its manifest and validation record are checked by
    ``identity.full_identity_problems``)."""
    problems: list[str] = []
    full, folder = opened.full_manifest, opened.folder / FULL_FOLDER
    problems += [f"{FULL_FOLDER}/{p}" for p in inputs_problems(folder, full.inputs or {})]
    changes = f"{FULL_FOLDER}/{READER_CHANGES_FILE}"
    problems += reader_changes_problems(full, opened.listed(changes), changes)
    listed = opened.listed(f"{FULL_FOLDER}/{REJECTS_FILE}")
    try:
        lines = read_json_lines(listed, RejectLine, f"{FULL_FOLDER}/{REJECTS_FILE}") if listed is not None else []
    except ClincorpError as error:
        return [*problems, str(error)]
    counts = full.counts
    if counts is not None and (counts.rejected + counts.rejected_annotations) != len(lines):
        problems.append(
            f"{FULL_FOLDER}/{REJECTS_FILE} holds {len(lines)} rejects, full/manifest.json counts "
            f"{counts.rejected} records and {counts.rejected_annotations} annotations"
        )
    return problems


def anchors_problems(opened: OpenedRelease) -> list[str]:
    """anchors.parquet: one checked anchor per source document the rows name, and no other."""
    path = opened.listed(ANCHORS_FILE)
    if path is None:
        return [f"{ANCHORS_FILE}: missing"]
    named = opened.view.source_documents(opened.configs())
    try:
        anchors = read_anchors(path, named)
        held = ReleaseView.rows_in(path)
    except ClincorpError as error:
        return [str(error)]
    missing = sorted(set(named) - set(anchors))
    problems = (
        [f"{ANCHORS_FILE}: no anchor of {len(missing)} documents the rows name ({missing[0]}…)"] if missing else []
    )
    if held != len(anchors):
        problems.append(f"{ANCHORS_FILE}: {held - len(anchors)} rows of documents no row names")
    return problems
