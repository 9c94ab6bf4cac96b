"""Run a corpus's expectation suite (great-expectations, pandas) on its flattened release tables."""

from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass
from typing import Any

import pandas as pd

from clinical_corpora.core.manifest import Expectation

_OBSERVED_KEYS = (
    "observed_value",
    "element_count",
    "unexpected_count",
    "unexpected_percent",
    "missing_count",
    "partial_unexpected_list",
)


@dataclass
class ExpectationOutcome:
    """One expectation's verdict and what it observed."""

    table: str
    expectation: str
    kwargs: dict[str, Any]
    success: bool
    observed: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "expectation": self.expectation,
            "kwargs": self.kwargs,
            "success": self.success,
            "observed": self.observed,
        }


def _camel(snake: str) -> str:
    return "".join(part.capitalize() for part in snake.split("_"))


def _import_great_expectations() -> Any:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    import great_expectations as gx  # slow import (~2 s): only when a suite runs

    return gx


def run_suite(expectations: list[Expectation], tables: dict[str, pd.DataFrame]) -> list[ExpectationOutcome]:
    """Validate every expectation against its table; a missing table is a failed expectation."""
    if not expectations:
        return []
    return _run_suite(expectations, _columns_in_use(expectations, tables))


def _columns_in_use(expectations: list[Expectation], tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Each checked table cut down to the columns its expectations name (row order and count kept)."""
    used: dict[str, set[str]] = {}
    for expectation in expectations:
        used.setdefault(expectation.table, set()).update(expectation.columns)
    return {
        name: tables[name][[column for column in tables[name].columns if column in used[name]] or ["_row"]]
        for name in used
        if name in tables
    }


def _run_suite(expectations: list[Expectation], tables: dict[str, pd.DataFrame]) -> list[ExpectationOutcome]:
    gx = _import_great_expectations()
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    source = context.data_sources.add_pandas("release")
    outcomes: list[ExpectationOutcome] = []
    for table_name in dict.fromkeys(e.table for e in expectations):
        wanted = [e for e in expectations if e.table == table_name]
        if table_name not in tables:
            known = ", ".join(sorted(tables))
            outcomes += [
                ExpectationOutcome(
                    e.table, e.expectation, e.kwargs, False, {"error": f"no table {table_name!r}; tables are: {known}"}
                )
                for e in wanted
            ]
            continue
        asset = source.add_dataframe_asset(name=table_name)
        batch = asset.add_batch_definition_whole_dataframe("all").get_batch(
            batch_parameters={"dataframe": tables[table_name]}
        )
        for expectation in wanted:
            outcomes.append(_validate(gx, batch, expectation))
    return outcomes


def _validate(gx: Any, batch: Any, expectation: Expectation) -> ExpectationOutcome:
    try:
        expectation_class = getattr(gx.expectations, _camel(expectation.expectation))
        result = batch.validate(expectation_class(**expectation.kwargs))
    except (AttributeError, TypeError, ValueError) as error:
        return ExpectationOutcome(
            expectation.table,
            expectation.expectation,
            expectation.kwargs,
            False,
            {"error": f"cannot run {expectation.expectation}: {error}"},
        )
    details = result.result or {}
    observed = {key: _plain(details[key]) for key in _OBSERVED_KEYS if key in details}
    if result.exception_info and result.exception_info.get("raised_exception"):
        observed["error"] = result.exception_info.get("exception_message")
    return ExpectationOutcome(
        expectation.table, expectation.expectation, expectation.kwargs, bool(result.success), observed
    )


def _plain(value: Any) -> Any:
    """JSON-friendly copy of an observed value (numpy scalars → Python)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value[:10]]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    return value
