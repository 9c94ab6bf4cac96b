"""A release's expectation suite, run in this process or in a process of its own.

:class:`ExpectationProcess` imports great-expectations when it is sent its first written release, so its
import and the suites run on another core (on the written parquet: the process reads the tables itself)
while this process measures agreement, writes the card, or builds the next corpus of a ``release --all``;
the building process never imports it. A run of several corpora starts it before the first build
(:meth:`ExpectationProcess.prepare`), to import meanwhile what the checks need besides great-expectations
itself: the corpora's builders and great-expectations' third-party dependencies. Releases sent while it
imports great-expectations are checked two at a time: every second one in a copy of it forked with
great-expectations imported, on the core the building process, done by then, leaves idle. The outcomes are
those of :func:`check_suite` in this process.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import multiprocessing
import os
import pickle
import threading
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.base import Builder, load_builder_class
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.writer import rows_per_row_group
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CorpusManifest, Expectation
from clinical_corpora.core.processes import end_with_parent, fork_context
from clinical_corpora.validation.expectations import ExpectationOutcome, load_great_expectations, run_suite
from clinical_corpora.validation.tables import fields_checked

Outcomes = Callable[[], list[ExpectationOutcome]]
"""The outcomes of a suite, once it has run (waits for them when it runs in another process)."""

GREAT_EXPECTATIONS_DEPENDENCIES = (
    "requests",
    "ruamel.yaml",
    "jinja2",
    "mistune",
    "marshmallow",
    "jsonschema",
    "pyparsing",
    "tzlocal",
    "sqlite3",
    "pydantic.v1",
    "smtplib",
    "email.mime.multipart",
    "email.mime.text",
)
"""The modules besides its own that importing great-expectations imports (about 0.2 s): a prepared
expectation process imports them before it may import great-expectations itself."""


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


Request = tuple[int, str, Path, list[Expectation]]
"""What the expectation process is sent: a ticket, the builder class, the release folder and its suite."""

Answer = tuple[int, list[ExpectationOutcome] | None, Exception | None]
"""What it sends back: the ticket and the outcomes or the error (neither: the process checking it died)."""


def _serve(connection: Connection, parents: Connection, builders: Sequence[str]) -> None:
    """The expectation process: import the ``builders`` and great-expectations' dependencies, then, once sent
    the first release, great-expectations; check the releases it is sent, until the sending process closes
    its end or dies (the copy of that end this process inherited is closed)."""
    parents.close()
    end_with_parent()  # the pipe's end may stay open in a worker forked later
    gc.freeze()  # what it inherited is never garbage here: keep it out of the collections the imports trigger
    _prepare(builders, connection)
    try:
        while True:
            waiting = [connection.recv()]
            load_great_expectations()  # the first time, once sent a release: its records are written
            while connection.poll():  # the releases sent meanwhile (a run of several corpora)
                waiting.append(connection.recv())
            _check_waiting(waiting, connection)
    except (EOFError, OSError):  # the sending process is gone (a release sent just before it went is unchecked)
        return


def _check_waiting(waiting: list[Request], connection: Connection) -> None:
    """Check the waiting releases; with several, every second one in a copy of this process forked for them,
    which needs no import of its own and runs on the core the building process no longer needs."""
    if len(waiting) < 2 or not hasattr(os, "fork"):
        for request in waiting:
            connection.send(_answer(request))
        return
    theirs = waiting[1::2]
    answers, answering = multiprocessing.Pipe(duplex=False)
    copy = os.fork()
    if copy == 0:
        try:
            end_with_parent()
            answers.close()
            connection.close()
            for request in theirs:
                answering.send(_answer(request))
        finally:
            os._exit(0)
    answering.close()
    sending = threading.Lock()
    forwarding = threading.Thread(target=_forward, args=(answers, connection, sending, [r[0] for r in theirs]))
    forwarding.start()
    for request in waiting[0::2]:
        answer = _answer(request)
        with sending:
            connection.send(answer)
    forwarding.join()
    os.waitpid(copy, 0)


def _forward(answers: Connection, connection: Connection, sending: threading.Lock, tickets: list[int]) -> None:
    """Send on the forked copy's answers as they come; a ticket it did not answer (it died) is answered with
    neither outcomes nor error, which the waiting process reports as the death of its checking process."""
    left = set(tickets)
    while left:
        try:
            answer = answers.recv()
        except EOFError:
            break
        left.discard(answer[0])
        with sending, contextlib.suppress(OSError):  # gone: the sending process
            connection.send(answer)
    for ticket in sorted(left):
        with sending, contextlib.suppress(OSError):
            connection.send((ticket, None, None))


def _answer(request: Request) -> Answer:
    """The outcomes of one release's suite, or the error checking it raised (to be raised again where the
    outcomes are waited for)."""
    ticket, builder_class, folder, expectations = request
    try:
        return ticket, check_suite(load_builder_class(builder_class)(), ReleaseView(folder), expectations), None
    except Exception as error:
        return ticket, None, error if _picklable(error) else ClincorpError(f"{type(error).__name__}: {error}")


def _prepare(builders: Sequence[str], connection: Connection) -> None:
    """Import what checking needs besides great-expectations: a module that fails here is imported again,
    failing as it would have, when a release needs it. Once a release is waiting, the builders not imported
    yet are left for when their suites run: great-expectations' import comes first."""
    for name in GREAT_EXPECTATIONS_DEPENDENCIES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    for builder in builders:
        if connection.poll():
            return
        with contextlib.suppress(Exception):
            load_builder_class(builder)


def _picklable(error: Exception) -> bool:
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return False
    return True


class ExpectationProcess:
    """A process, started by :meth:`prepare` or the first :meth:`check`, that imports great-expectations once
    sent its first release and checks the releases it is sent, in the order sent. Closing it ends it, whatever
    it is doing: a run that failed does not wait for its checks."""

    def __init__(self) -> None:
        self._process: multiprocessing.process.BaseProcess | None = None
        self._connection: Connection | None = None
        self._sent = self._answered = 0
        self._received: dict[int, tuple[list[ExpectationOutcome] | None, Exception | None]] = {}
        self._gone = False  # the process died: no more outcomes will come

    def prepare(self, builders: Sequence[str]) -> None:
        """Start the process now, importing the ``builders`` (``module:Class``) and great-expectations'
        dependencies while this process builds; not great-expectations, which waits for the first release."""
        self._start(builders)

    def _start(self, builders: Sequence[str] = ()) -> Connection:
        if self._connection is None:
            context = fork_context()
            self._connection, child = context.Pipe()
            self._process = context.Process(
                target=_serve,
                args=(child, self._connection, tuple(builders)),
                name="clincorp-expectations",
                daemon=True,
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
