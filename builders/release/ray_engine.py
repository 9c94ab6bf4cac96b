"""Build a corpus's document shards as Ray tasks (``clincorp release --engine ray``): Ray computes, we write.

Each group of documents (:func:`~clinical_corpora.builders.release.workers.document_groups`) is one Ray core task
running the same job a local worker runs (:func:`~clinical_corpora.builders.release.workers.build_group`); its
record batches come back to this process, which takes them in group order and hands them to our own parquet
writer, so a release built on Ray is byte-identical to ``--workers 1``. Ray Data's own writers are not used:
they name files with a uuid and do not keep block order by default. At most two tasks per slot run ahead of
the group being written, so memory stays that of a window of groups, not of the corpus.

A task whose worker dies (a killed process, a lost node) or that raises an ``OSError`` (a network filesystem's
hiccup) is run again by Ray, up to ``max_retries`` times; a task that still fails fails the release with an error
naming its group and documents. The job's state (the builder with what :meth:`Builder.shards` loaded, the
features, the row encoders) goes to Ray's object store once and is read once per Ray worker process.
"""

from __future__ import annotations

import logging
import os
import socket
from collections import deque
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from types import ModuleType
from typing import Any

from clinical_corpora.builders.release.request import GroupJob, RayEngine
from clinical_corpora.builders.release.workers import GroupOutput, SentGroup, WorkerState, build_group
from clinical_corpora.core.errors import ClincorpError

RAY_EXTRA = "pip install clinical-corpora[ray]"


def require_ray() -> ModuleType:
    """The ``ray`` module; a ClincorpError naming the extra to install when it is missing."""
    try:
        import ray
    except ImportError:
        raise ClincorpError(f"--engine ray needs Ray, which is not installed: {RAY_EXTRA}") from None
    return ray


def connected(engine: RayEngine) -> ModuleType:
    """The ``ray`` module, connected to the engine's cluster (or to the Ray this process already runs)."""
    ray = require_ray()
    # every task's output we need is fetched; after a failure named, the tasks ahead of it are dropped and
    # their errors are not printed again as Ray's "unhandled" tracebacks
    os.environ.setdefault("RAY_IGNORE_UNHANDLED_ERRORS", "1")
    if ray.is_initialized():
        return ray
    address = engine.address or os.environ.get("RAY_ADDRESS")
    try:
        if address:
            _answers(address)
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
        else:
            ray.init(
                num_cpus=engine.num_cpus, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False
            )
    except (ConnectionError, ValueError, RuntimeError) as error:
        raise ClincorpError(f"could not connect to Ray at {address or 'a new local instance'}: {error}") from None
    return ray


CONNECT_SECONDS = 10
"""How long a cluster's address may take to answer: Ray itself waits on an address that never answers for
minutes, retrying."""


def _answers(address: str) -> None:
    """A ClincorpError unless something listens at a ``host:port`` address (``ray://host:port`` too; ``auto``
    and other forms are left to Ray)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as error:
        raise ClincorpError(
            f"no Ray cluster answers at {address} ({error.strerror or error}): check --ray-address or RAY_ADDRESS"
        ) from None


def cluster_cpus(ray: ModuleType) -> int:
    """The CPUs of the cluster this process is connected to (at least one)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def build_on_ray(
    engine: RayEngine, state: WorkerState, groups: list[dict[str, Any]], slots: int
) -> Iterator[GroupOutput]:
    """Each group's output, in group order, built by Ray tasks (at most ``2 × slots`` running ahead)."""
    ray = connected(engine)
    task = ray.remote(max_retries=engine.max_retries, retry_exceptions=[OSError])(_run_group)
    shared = [ray.put(state)]  # in a list, so each task gets the reference and reads it once per worker
    state.builder.workers_started()  # the object store holds its copy now
    queued = enumerate(groups)
    running: deque[tuple[int, Any]] = deque()

    def submit(count: int) -> None:
        running.extend(
            (index, task.remote(engine.job or build_group, shared, group)) for index, group in islice(queued, count)
        )

    submit(slots * 2)
    try:
        while running:
            index, reference = running.popleft()
            sent = _result(ray, reference, _group_name(groups, index, state.manifest.name))
            submit(1)
            yield sent.received(state.encoding[1])
    finally:  # on an error, the few tasks ahead end on their own: their references (and the state's) go now
        running.clear()
        shared.clear()


def _result(ray: ModuleType, reference: Any, group: str) -> SentGroup:
    """A task's output; an error of ours raised as it is, any other naming the group that failed."""
    try:
        sent: SentGroup = ray.get(reference)
    except ray.exceptions.RayTaskError as error:
        if isinstance(error.cause, ClincorpError):
            raise error.cause from None
        cause = error.cause if error.cause is not None else error
        unread = isinstance(cause, ray.exceptions.RaySystemError)  # a Ray worker could not read the task
        hint = " (is this clinical-corpora installed on every node?)" if unread else ""
        raise ClincorpError(f"{group} failed on Ray: {type(cause).__name__}: {_first_line(cause)}{hint}") from None
    except ray.exceptions.RayError as error:
        raise ClincorpError(f"{group} failed on Ray for good: {_first_line(error)}") from None
    return sent


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else "(no message)"


def _group_name(groups: list[dict[str, Any]], index: int, corpus: str) -> str:
    """``corpus: shard group 3 of 6 (documents 5-6 of 12, first 'note-5')``."""
    documents = [next((value for value in group.values() if isinstance(value, list)), []) for group in groups]
    start, size = sum(len(listed) for listed in documents[:index]), len(documents[index])
    first = _document_name(documents[index][0]) if size else None
    named = f", first {first!r}" if first else ""
    total = sum(len(listed) for listed in documents)
    return (
        f"{corpus}: shard group {index + 1} of {len(groups)} (documents {start + 1}-{start + size} of {total}{named})"
    )


def _document_name(document: Any) -> str | None:
    """A document's id or file name, when it has one we can say without its text."""
    if isinstance(document, tuple) and document:
        document = document[0]
    if isinstance(document, Path):
        return document.name
    named = getattr(document, "id", document)
    return named[:80] if isinstance(named, str) else None


_CACHED: dict[str, WorkerState] = {}
"""The job state this Ray worker process read from the object store, by its reference (the latest build's only)."""


def _run_group(job: GroupJob, shared: list[Any], group: dict[str, Any]) -> SentGroup:
    """One Ray task: ``job`` on one group, with the build's state read once per worker process."""
    import ray

    key = shared[0].hex()
    if key not in _CACHED:
        _CACHED.clear()
        _CACHED[key] = ray.get(shared[0])
    return job(_CACHED[key], group)
