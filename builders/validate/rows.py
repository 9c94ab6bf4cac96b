"""A release's shards and counts: every shard is one of a config and split its corpus declares, and the counts
its manifest records (rows written, records read and rejected) are those its files hold."""

from __future__ import annotations

from pathlib import PurePosixPath

from clinical_corpora.builders.contract.base import make_builder
from clinical_corpora.builders.contract.release_view import SHARD_PATTERN
from clinical_corpora.builders.release.inputs_file import inputs_problems
from clinical_corpora.builders.release.opened import OpenedRelease
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.release_manifest import Counts, ReleaseManifest
from clinical_corpora.core.release_records import (
    READER_CHANGES_FILE,
    REHYDRATE_REJECTS_FILE,
    REJECTS_FILE,
    RehydrateReject,
    RejectLine,
    read_json_lines,
    reader_changes_problems,
)


def shard_problems(manifest: ReleaseManifest, corpus: CorpusManifest) -> list[str]:
    """Each shard of a config or split the corpus does not declare, and each declared split without one."""
    problems: list[str] = []
    splits: dict[str, set[str]] = {config: set() for config in corpus.configs}
    for entry in manifest.outputs:
        parts = PurePosixPath(entry.file).parts
        if parts[0] != "data":
            continue
        match = SHARD_PATTERN.match(parts[-1])
        if match is None or parts[1] not in corpus.configs:
            problems.append(f"{entry.file}: not a shard of a config of {corpus.name}")
        else:
            splits[parts[1]].add(match["split"])
    for config, spec in corpus.configs.items():
        unknown = splits[config] - set(spec.splits)
        if unknown or (manifest.kind == "full" and splits[config] != set(spec.splits)):
            problems.append(
                f"config {config}: splits {sorted(splits[config])} in the release, "
                f"{corpus.name}'s corpus.yaml declares {sorted(spec.splits)}"
            )
    return problems


def count_problems(opened: OpenedRelease, corpus: CorpusManifest) -> list[str]:
    """counts.written against the rows of the shards, counts.read against the records read and rejected, the
    rejects against rejects.jsonl, the readers' changes against reader-changes.jsonl, and the inputs summary
    against inputs.jsonl."""
    manifest = opened.manifest
    counts = manifest.counts
    assert counts is not None, "a release that is not text-free counts its records"
    written = sum(entry.rows or 0 for entry in manifest.outputs)
    problems = []
    if counts.written != written:
        problems.append(f"manifest.json counts.written is {counts.written}, the parquet files hold {written} rows")
    problems += _read_problems(manifest, counts, corpus)
    problems += rejects_problems(opened, counts)
    problems += reader_changes_problems(manifest, opened.listed(READER_CHANGES_FILE), READER_CHANGES_FILE)
    problems += inputs_problems(opened.folder, manifest.inputs or {})
    return problems


def _read_problems(manifest: ReleaseManifest, counts: Counts, corpus: CorpusManifest) -> list[str]:
    """counts.read against the rows of the builder's ``RECORD_CONFIG`` (one per record read) plus the records
    rejected (or left out by a rehydration); not checked for a builder that declares none."""
    config = make_builder(corpus).RECORD_CONFIG
    if config is None:
        return []
    released = sum(entry.rows or 0 for entry in manifest.outputs if entry.file.startswith(f"data/{config}/"))
    left_out = manifest.rehydration.left_out.get(config, 0) if manifest.rehydration is not None else 0
    if counts.read == released + counts.rejected + left_out:
        return []
    return [
        f"manifest.json counts.read is {counts.read}, but {released} records were released (config {config}, one "
        f"row per record read) and {counts.rejected} rejected"
        + (f", {left_out} left out by the rehydration" if left_out else "")
    ]


def rejects_problems(opened: OpenedRelease, counts: Counts) -> list[str]:
    """counts.rejected and rejected_annotations against rejects.jsonl (typed lines), and a partial rehydration's
    records left out against its rehydrate-rejects.jsonl."""
    found = {"record": 0, "annotation": 0}
    path = opened.listed(REJECTS_FILE)
    try:
        for line in read_json_lines(path, RejectLine, REJECTS_FILE) if path is not None else []:
            found[line.kind] += 1
        partial = opened.listed(REHYDRATE_REJECTS_FILE)
        left = len(read_json_lines(partial, RehydrateReject, REHYDRATE_REJECTS_FILE)) if partial is not None else None
    except ClincorpError as error:
        return [str(error)]
    problems = [
        f"manifest.json counts.{key} is {getattr(counts, key)}, {REJECTS_FILE} holds {found[kind]}"
        for key, kind in (("rejected", "record"), ("rejected_annotations", "annotation"))
        if getattr(counts, key) != found[kind]
    ]
    rehydration = opened.manifest.rehydration
    if left is not None and rehydration is not None and left != rehydration.records_left_out:
        problems.append(
            f"manifest.json records_left_out is {rehydration.records_left_out}, {REHYDRATE_REJECTS_FILE} lists {left}"
        )
    return problems
