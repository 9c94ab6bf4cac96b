"""A release's expectation suite, run on its written parquet (by the release, by validate): each config's
flattened tables read batch by batch, and the records' ids to name the rows the suite rejects."""

from __future__ import annotations

import functools
from typing import Any

from clinical_corpora.builders.contract.base import Builder
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.writer import rows_per_row_group
from clinical_corpora.core.manifest import Expectation
from clinical_corpora.validation.expectations import ExpectationOutcome, run_suite
from clinical_corpora.validation.tables import fields_checked


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
    """The suite's outcomes on the release ``view`` holds."""
    return run_suite(expectations, quality_tables(builder, view, expectations), lambda: record_ids(builder, view))
