"""A release's expectation suite, run in this process or in a process of its own.

:class:`ExpectationProcess` starts when it is sent its first written release; it imports great-expectations
at once, so its import and the suites run on another core (on the written parquet: the process reads the
tables itself) while this process measures agreement, writes the card, or builds the next corpus of a
``release --all``; the building process never imports it. The outcomes are those of :func:`check_suite` in
this process.
"""

from __future__ import annotations

import functools
import gc
import multiprocessing
import pickle
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from clinical_corpora.builders.base import Builder, load_builder_class
from clinical_corpora.builders.release_view import ReleaseView
from clinical_corpora.builders.writer import rows_per_row_group
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CorpusManifest, Expectation
from clinical_corpora.validation.expectations import ExpectationOutcome, load_great_expectations, run_suite
from clinical_corpora.validation.tables import fields_checked

Outcomes = Callable[[], list[ExpectationOutcome]]
"""The outcomes of a suite, once it has run (waits for them when it runs in another process)."""


def quality_tables(builder: Builder, view: ReleaseView, expectations: list[Expectation]) -> dict[str, Any]:
    """The flattened configs (the fields the suite reaches), each table read batch by batch from the written
    parquet when its expectations run: a row group's records at a time, and only the fields that table's own
    expectations reach. Plus the builder's derived tables."""
    tables: dict[str, Any] = {}
    for config in view.configs():
        features = view.features(config)
        fields = fields_checked(config, expectations, features)
        records = rows_per_row_group(builder.CONFIGS[config])
        for name in view.table_names(config, fields) if fields else []:
            own = fields_checked(config, [e for e in expectations if e.table == name], features)
            tables[name] = functools.partial(view.table_batches, config, own, name, batch_size=records)
    tables.update(builder.quality_tables(view))
    return tables


def record_ids(builder: Builder, view: ReleaseView) -> dict[str, list[str]]:
    """Each config's record ids in row order, so the expectation suite can name the records it rejects."""
    ids = {}
    for config in view.configs():
        model = builder.CONFIGS.get(config)
        id_field = getattr(model, "id_field", "id")
        if model is not None and id_field in view.features(config):
            ids[config] = [str(value) for value in view.arrow(config, columns=[id_field]).column(0).to_pylist()]
    return ids


def check_suite(builder: Builder, view: ReleaseView, expectations: list[Expectation]) -> list[ExpectationOutcome]:
    """The suite's outcomes on the release ``view`` holds, in this process."""
    return run_suite(expectations, quality_tables(builder, view, expectations), lambda: record_ids(builder, view))


def start_checks(
    checks: ExpectationProcess | None,
    builder: Builder,
    manifest: CorpusManifest,
    view: ReleaseView,
    expectations: list[Expectation],
) -> Outcomes:
    """Check the suite in ``checks`` (given one and a suite), else here and now."""
    if checks is not None and expectations:
        return checks.check(manifest, view.folder, expectations)
    checked = check_suite(builder, view, expectations)
    return lambda: checked


def _serve(connection: Connection, parents: Connection) -> None:
    """The expectation process: import great-expectations, then check each release it is sent, in turn,
    until the sending process closes its end or dies (the copy of that end this process inherited is closed)."""
    parents.close()
    gc.freeze()  # what it inherited is never garbage here: keep it out of the collections the import triggers
    load_great_expectations()
    while True:
        try:
            ticket, builder_class, folder, expectations = connection.recv()
        except EOFError:
            return
        try:
            checked = check_suite(load_builder_class(builder_class)(), ReleaseView(folder), expectations)
            connection.send((ticket, checked, None))
        except Exception as error:  # raised again in the process that waits for these outcomes
            error = error if _picklable(error) else ClincorpError(f"{type(error).__name__}: {error}")
            connection.send((ticket, None, error))


def _picklable(error: Exception) -> bool:
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return False
    return True


class ExpectationProcess:
    """A process, started by the first :meth:`check`, that imports great-expectations and then checks the
    releases it is sent, in the order sent. Closing it ends it, whatever it is doing: a run that failed does
    not wait for its checks."""

    def __init__(self) -> None:
        self._process: multiprocessing.process.BaseProcess | None = None
        self._connection: Connection | None = None
        self._sent = self._answered = 0
        self._received: dict[int, tuple[list[ExpectationOutcome] | None, Exception | None]] = {}
        self._gone = False  # the process died: no more outcomes will come

    def _start(self) -> Connection:
        if self._connection is None:
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else None)
            self._connection, child = context.Pipe()
            self._process = context.Process(
                target=_serve, args=(child, self._connection), name="clincorp-expectations", daemon=True
            )
            self._process.start()
            child.close()
        return self._connection

    def check(self, manifest: CorpusManifest, folder: Path, expectations: list[Expectation]) -> Outcomes:
        """Send the release written in ``folder`` to be checked; the function returned waits for the outcomes."""
        ticket, self._sent = self._sent, self._sent + 1
        try:
            self._start().send((ticket, manifest.builder, folder, expectations))
        except OSError:
            self._gone = True

        def outcomes() -> list[ExpectationOutcome]:
            checked, error = self._wait(ticket)
            if error is not None:
                raise error
            if checked is None:
                raise ClincorpError(
                    f"{manifest.name}: the process checking the expectations died (out of memory?); "
                    "try --workers 1, which checks them in the building process"
                )
            return checked

        return outcomes

    def ready(self) -> bool:
        """Whether every release sent so far has its outcomes here (waiting for them would not block)."""
        while not self._gone and self._answered < self._sent and self._poll():
            self._receive()
        return self._gone or self._answered >= self._sent

    def _poll(self) -> bool:
        try:
            return self._connection is not None and self._connection.poll()
        except (EOFError, OSError):
            return True  # gone: the next receive says so

    def _wait(self, ticket: int) -> tuple[list[ExpectationOutcome] | None, Exception | None]:
        while ticket not in self._received and not self._gone:
            self._receive()
        return self._received.pop(ticket, (None, None))

    def _receive(self) -> None:
        """The next outcomes sent back, kept until asked for (or the process's death noted)."""
        try:
            assert self._connection is not None
            ticket, checked, error = self._connection.recv()
        except (EOFError, OSError):
            self._gone = True
            return
        self._received[ticket] = (checked, error)
        self._answered += 1

    def close(self) -> None:
        if self._connection is not None and self._process is not None:
            self._connection.close()
            self._process.terminate()
            self._process.join()
