"""Build a corpus's document shards into Arrow record batches, in worker processes when there are several.

A builder's :meth:`~clinical_corpora.builders.contract.base.Builder.shards` lists its documents (the ``datasets``
``gen_kwargs`` model); the lists are cut into contiguous groups, each built by
:meth:`~clinical_corpora.builders.contract.base.Builder.generate_shard` in a worker and returned as record batches
with its read count, rejects and the partial values the builder aggregates. Groups come back in document
order, so the rows, the rejects, the aggregates and the parquet bytes are the same whatever the number of
workers.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import pyarrow as pa
from datasets import Features

from clinical_corpora.builders.contract.base import BuildContext, Builder, Reject, Row, rows_only
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.processes import end_with_parent, fork_context
from clinical_corpora.core.reader_changes import ReaderChange
from clinical_corpora.schemas.features import Converter, row_encoder

ROWS_PER_BATCH = 1_000
"""Encoded rows are held as Python dicts for at most this many rows per config and split, then become Arrow."""

DOCUMENTS_PER_GROUP = 64
"""At most this many documents per worker job, so a job's batches stay small in memory."""

Sink = Callable[[str, str, pa.RecordBatch], None]


@dataclass
class GroupOutput:
    """What one worker job built: record batches per (config, split) in order, read records, rejects, what the
    readers changed and the builder's partial values."""

    batches: list[tuple[str, str, pa.RecordBatch]] = field(default_factory=list)
    read: int = 0
    rejects: list[Reject] = field(default_factory=list)
    reader_changes: list[ReaderChange] = field(default_factory=list)
    partials: list[Any] = field(default_factory=list)


@dataclass
class SentGroup:
    """A group's output on its way from a worker (a process of the pool, or a Ray task): each batch an IPC
    message without its schema, read back against the schema the parent has. A pickled batch carries its
    schema, and (de)serialising a nested config's costs ~1 ms: ~55 µs a note in a job of 64 SDOH notes."""

    output: GroupOutput
    messages: list[tuple[str, str, pa.Buffer]]

    def received(self, schemas: dict[str, pa.Schema]) -> GroupOutput:
        """The output with its batches read back."""
        self.output.batches = [
            (config, split, pa.ipc.read_record_batch(message, schemas[config]))
            for config, split, message in self.messages
        ]
        return self.output


class RowEncoder:
    """Checks each row against the corpus's configs and turns rows into record batches of ~1k rows."""

    def __init__(
        self,
        builder: Builder,
        manifest: CorpusManifest,
        features: dict[str, Features],
        sink: Sink,
        encoding: Encoding | None = None,
    ):
        self.builder = builder
        self.manifest = manifest
        self.sink = sink
        self.splits = {config: set(spec.splits) for config, spec in manifest.configs.items()}
        self.encoders, self.schemas = encoding or encoding_of(features)
        self.buffers: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def add(self, row: Row) -> None:
        if row.split not in self.splits.get(row.config, ()):
            raise ClincorpError(
                f"{self.manifest.builder} wrote config {row.config!r} split {row.split!r}, "
                "which corpus.yaml does not declare"
            )
        model = self.builder.CONFIGS[row.config]
        if not isinstance(row.record, model):
            raise ClincorpError(
                f"{self.manifest.builder} wrote a {type(row.record).__name__} into config "
                f"{row.config!r}, which holds {model.__name__} records"
            )
        buffer = self.buffers.setdefault((row.config, row.split), [])
        buffer.append(self.encoders[row.config](row.record.model_dump()))
        if len(buffer) >= ROWS_PER_BATCH:
            self._emit(row.config, row.split)

    def finish(self) -> None:
        for config, split in list(self.buffers):
            self._emit(config, split)

    def _emit(self, config: str, split: str) -> None:
        rows = self.buffers.pop((config, split))
        if rows:
            self.sink(config, split, pa.RecordBatch.from_pylist(rows, schema=self.schemas[config]))


Encoding = tuple[dict[str, Converter], dict[str, pa.Schema]]
"""Each config's row encoder and Arrow schema."""


def encoding_of(features: dict[str, Features]) -> Encoding:
    """Each config's row encoder and Arrow schema; made once per build and inherited by the workers, since
    ``Features.arrow_schema`` alone takes ~5 ms (~80 µs a note in a job of 64 SDOH notes)."""
    encoders = {config: row_encoder(config_features) for config, config_features in features.items()}
    schemas = {config: config_features.arrow_schema for config, config_features in features.items()}
    return encoders, schemas


def build_in_process(
    builder: Builder,
    manifest: CorpusManifest,
    features: dict[str, Features],
    rows: Iterable[Row],
    sink: Sink,
    encoding: Encoding | None = None,
) -> Iterator[None]:
    """Encode ``rows`` (built in this process) into ``sink``; yields after each row (for progress)."""
    encoder = RowEncoder(builder, manifest, features, sink, encoding)
    for row in rows:
        encoder.add(row)
        yield None
    encoder.finish()


def document_groups(documents: dict[str, Any], workers: int) -> list[dict[str, Any]]:
    """The builder's gen_kwargs cut into contiguous groups: list values together, other values as given."""
    lists = {name: value for name, value in documents.items() if isinstance(value, list)}
    lengths = {len(value) for value in lists.values()}
    if len(lengths) > 1:
        raise ClincorpError(f"the shard lists {sorted(lists)} have different lengths {sorted(lengths)}")
    total = lengths.pop() if lengths else 0
    size = max(1, min(DOCUMENTS_PER_GROUP, math.ceil(total / (workers * 4))))
    return [
        {**documents, **{name: value[start : start + size] for name, value in lists.items()}}
        for start in range(0, total, size)
    ]


@dataclass
class WorkerState:
    """What every group's job needs besides its documents: handed to each worker once."""

    builder: Builder
    manifest: CorpusManifest
    features: dict[str, Features]
    sources: dict[str, Any]
    on_error: Any
    encoding: Encoding


_STATE: WorkerState | None = None


def worker_state(
    builder: Builder, manifest: CorpusManifest, features: dict[str, Features], ctx: BuildContext
) -> WorkerState:
    """The state every worker of this build starts with."""
    return WorkerState(builder, manifest, features, ctx.sources, ctx.on_error, encoding_of(features))


def _start_worker(state: WorkerState, parent: int) -> None:
    global _STATE
    end_with_parent(parent)
    _STATE = state


def _build_group(group: dict[str, Any]) -> SentGroup:
    """One job of the pool: :func:`build_group` with the state the worker started with."""
    assert _STATE is not None
    return build_group(_STATE, group)


def build_group(state: WorkerState, group: dict[str, Any]) -> SentGroup:
    """One worker job: the rows of a group of documents as record batches."""
    ctx = BuildContext(state.manifest, state.sources, state.on_error)
    sent = SentGroup(GroupOutput(), [])
    rows = rows_only(state.builder.generate_shard(ctx, **group), sent.output.partials)
    sink: Sink = lambda c, s, b: sent.messages.append((c, s, b.serialize()))  # noqa: E731
    for _ in build_in_process(state.builder, state.manifest, state.features, rows, sink, state.encoding):
        pass
    sent.output.read, sent.output.rejects, sent.output.reader_changes = ctx.read, ctx.rejects, ctx.reader_changes
    return sent


GroupsEngine = Callable[[WorkerState, list[dict[str, Any]], int], Iterator[GroupOutput]]
"""What builds the groups, ``n`` at a time, yielding their outputs in group order: :func:`build_in_workers`
(this machine's processes) or another engine (Ray)."""


def build_in_workers(state: WorkerState, groups: list[dict[str, Any]], workers: int) -> Iterator[GroupOutput]:
    """Each group's output, in group order, built by ``workers`` processes (at most two jobs ahead each)."""
    builder, manifest = state.builder, state.manifest
    context = fork_context()
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker, initargs=(state, os.getpid()))
    try:
        queued = iter(groups)
        running: deque[Future[SentGroup]] = deque(pool.submit(_build_group, g) for g in islice(queued, workers * 2))
        builder.workers_started()  # every worker has started (fork starts them all on the first submit)
        while running:
            try:
                sent = running.popleft().result()
            except BrokenProcessPool:
                raise ClincorpError(
                    f"{manifest.name}: a worker process died while building (out of memory?); try fewer --workers"
                ) from None
            running.extend(pool.submit(_build_group, group) for group in islice(queued, 1))
            yield sent.received(state.encoding[1])
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
