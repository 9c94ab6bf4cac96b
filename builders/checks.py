"""A release's expectation suite, run in this process or in a process of its own.

:class:`ExpectationProcess`, started once the records are written, imports great-expectations at once, so
its import and the suite run on another core (on the written parquet: the process reads the tables itself)
while this process measures agreement and writes the card; the building process never imports it. The
outcomes are those of :func:`check_suite` in this process.
"""

from __future__ import annotations

import functools
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


def _serve(connection: Connection) -> None:
    """The expectation process: import great-expectations, then check the release it is sent."""
    load_great_expectations()
    try:
        builder_class, folder, expectations = connection.recv()
    except EOFError:
        return
    try:
        connection.send((check_suite(load_builder_class(builder_class)(), ReleaseView(folder), expectations), None))
    except Exception as error:  # raised again in the process that waits for these outcomes
        connection.send((None, error if _picklable(error) else ClincorpError(f"{type(error).__name__}: {error}")))


def _picklable(error: Exception) -> bool:
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return False
    return True


class ExpectationProcess:
    """A process, started now, that imports great-expectations and then checks one release. Closing it ends
    it, whatever it is doing: a run that failed does not wait for its checks."""

    def __init__(self) -> None:
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        self._connection, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child,), name="clincorp-expectations", daemon=True)
        self._process.start()
        child.close()

    def check(self, manifest: CorpusManifest, folder: Path, expectations: list[Expectation]) -> Outcomes:
        """Send the release written in ``folder`` to be checked; the function returned waits for the outcomes."""
        try:
            self._connection.send((manifest.builder, folder, expectations))
            sent = True
        except OSError:
            sent = False

        def outcomes() -> list[ExpectationOutcome]:
            try:
                checked, error = self._connection.recv() if sent else (None, None)
            except (EOFError, OSError):
                checked, error = None, None
            if error is not None:
                raise error
            if checked is None:
                raise ClincorpError(
                    f"{manifest.name}: the process checking the expectations died (out of memory?); "
                    "try --workers 1, which checks them in the building process"
                )
            return checked

        return outcomes

    def close(self) -> None:
        self._connection.close()
        self._process.terminate()
        self._process.join()
