"""Run a corpus's expectation suite (great-expectations, pandas) on its flattened release tables."""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
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
MAX_LISTED = 20  # offending rows listed per expectation
RecordIds = dict[str, list[str]]  # config → the id of each record, by its position (``_row``)


@dataclass
class ExpectationOutcome:
    """One expectation's verdict and what it observed."""

    table: str
    expectation: str
    kwargs: dict[str, Any]
    success: bool
    observed: dict[str, Any]
    violations: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready; ``violations`` lists the offending rows (the first MAX_LISTED), also when the
        expectation passed because its ``mostly`` tolerates them."""
        return {
            "table": self.table,
            "expectation": self.expectation,
            "kwargs": self.kwargs,
            "success": self.success,
            "observed": self.observed,
            "violations": self.violations,
        }


def _camel(snake: str) -> str:
    return "".join(part.capitalize() for part in snake.split("_"))


def _import_great_expectations() -> Any:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    import great_expectations as gx  # slow import (~2 s): only when a suite runs

    return gx


def run_suite(
    expectations: list[Expectation],
    tables: dict[str, pd.DataFrame],
    record_ids: RecordIds | Callable[[], RecordIds] | None = None,
) -> list[ExpectationOutcome]:
    """Validate every expectation against its table; a missing table is a failed expectation.

    Each outcome lists the rows an expectation found unexpected: their split and record id (through the
    ``_row`` column and ``record_ids``, or a function giving them, called only when a row is listed) where
    the table has them, and the values of the checked columns.
    """
    if not expectations:
        return []
    outcomes = _run_suite(expectations, _columns_in_use(expectations, tables))
    if callable(record_ids):
        listed = any(outcome.observed.get("unexpected_index_list") for outcome in outcomes)
        record_ids = record_ids() if listed else {}
    for outcome, expectation in zip(outcomes, expectations_in_run_order(expectations), strict=True):
        if outcome.table in tables:
            outcome.violations = _violations(outcome, expectation, tables[outcome.table], record_ids or {})
    return outcomes


def expectations_in_run_order(expectations: list[Expectation]) -> list[Expectation]:
    """The order ``_run_suite`` checks expectations in: table by table, in first-mention order."""
    return [e for table in dict.fromkeys(e.table for e in expectations) for e in expectations if e.table == table]


def _violations(
    outcome: ExpectationOutcome, expectation: Expectation, table: pd.DataFrame, record_ids: RecordIds
) -> list[dict[str, Any]]:
    """The offending rows GX named (first MAX_LISTED): where they are and the checked columns' values."""
    indices = outcome.observed.pop("unexpected_index_list", None) or []
    config = outcome.table.split(".")[0]
    ids = record_ids.get(config)
    listed = []
    for index in indices[:MAX_LISTED]:
        row = table.iloc[int(index)]
        violation: dict[str, Any] = {}
        if "_split" in table.columns:
            violation["split"] = _plain(row["_split"])
        if "_row" in table.columns:
            position = int(row["_row"])
            violation["record"] = ids[position] if ids is not None and 0 <= position < len(ids) else position
        else:
            violation["row"] = int(index)
        violation["values"] = {column: _plain(row[column]) for column in expectation.columns if column in table.columns}
        listed.append(violation)
    return listed


def _columns_in_use(expectations: list[Expectation], tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Each checked table cut down to the columns its expectations name (row order and count kept, the index
    made positional so GX's unexpected indices are row positions)."""
    used: dict[str, set[str]] = {}
    for expectation in expectations:
        used.setdefault(expectation.table, set()).update(expectation.columns)
    return {
        name: tables[name][[column for column in tables[name].columns if column in used[name]] or ["_row"]].reset_index(
            drop=True
        )
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
        result = batch.validate(
            expectation_class(**expectation.kwargs),
            result_format={"result_format": "SUMMARY", "partial_unexpected_count": MAX_LISTED},
        )
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
    if details.get("partial_unexpected_index_list"):  # the first MAX_LISTED offending rows, for _violations
        observed["unexpected_index_list"] = list(details["partial_unexpected_index_list"])
    if result.exception_info and result.exception_info.get("raised_exception"):
        observed["error"] = result.exception_info.get("exception_message")
    return ExpectationOutcome(
        expectation.table, expectation.expectation, expectation.kwargs, bool(result.success), observed
    )


def _plain(value: Any) -> Any:
    """JSON-friendly copy of an observed value (numpy scalars → Python)."""
    if hasattr(value, "tolist") and getattr(value, "ndim", None):
        value = value.tolist()
    elif value is pd.NA or value is pd.NaT:
        return None
    elif hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value[:10]]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    return value
