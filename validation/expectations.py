"""Run a corpus's expectation suite (great-expectations, pandas) on its flattened release tables.

Each table's expectations run as one ExpectationSuite in one validation of one batch, and the batch holds
only the columns those expectations name: great-expectations then computes each metric once for the
whole suite instead of rebuilding its validator per expectation.
"""

from __future__ import annotations

import functools
import logging
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import pandas as pd
import pyarrow as pa

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
RESULT_FORMAT = {"result_format": "SUMMARY", "partial_unexpected_count": MAX_LISTED}
_POSITION = "clincorp_position"  # the meta key matching a suite's results to its expectations
RecordIds = dict[str, list[str]]  # config → the id of each record, by its position (``_row``)
Table: TypeAlias = pd.DataFrame | pa.Table  # a checked table: Arrow (converted column by column) or pandas


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
    import great_expectations as gx  # slow import (~2.5 s): only when a suite runs

    return gx


def run_suite(
    expectations: list[Expectation],
    tables: dict[str, Table],
    record_ids: RecordIds | Callable[[], RecordIds] | None = None,
) -> list[ExpectationOutcome]:
    """Validate every expectation against its table; a missing table is a failed expectation.

    Outcomes come in :func:`expectations_in_run_order`. Each lists the rows an expectation found unexpected:
    their split and record id (through the ``_row`` column and ``record_ids``, or a function giving them,
    called only when a row is listed) where the table has them, and the values of the checked columns.
    """
    if not expectations:
        return []
    outcomes = _run_suite(expectations, tables)
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
    outcome: ExpectationOutcome, expectation: Expectation, table: Table, record_ids: RecordIds
) -> list[dict[str, Any]]:
    """The offending rows GX named (first MAX_LISTED): where they are and the checked columns' values."""
    indices = outcome.observed.pop("unexpected_index_list", None) or []
    config = outcome.table.split(".")[0]
    ids = record_ids.get(config)
    columns = list(table.columns) if isinstance(table, pd.DataFrame) else table.column_names
    listed = []
    for index in indices[:MAX_LISTED]:
        violation: dict[str, Any] = {}
        if "_split" in columns:
            violation["split"] = _cell(table, "_split", int(index))
        if "_row" in columns:
            position = int(_cell(table, "_row", int(index)))
            violation["record"] = ids[position] if ids is not None and 0 <= position < len(ids) else position
        else:
            violation["row"] = int(index)
        violation["values"] = {
            column: _cell(table, column, int(index)) for column in expectation.columns if column in columns
        }
        listed.append(violation)
    return listed


def _cell(table: Table, column: str, index: int) -> Any:
    """One value of a table, by row position, JSON-friendly."""
    if isinstance(table, pd.DataFrame):
        return _plain(table[column].iloc[index])
    return _plain(table.column(column)[index].as_py())


def _checked_frame(table: Table, expectations: list[Expectation]) -> pd.DataFrame:
    """The table cut down to the columns its expectations name, as pandas (row order and count kept, the
    index positional so GX's unexpected indices are row positions); only these columns are converted."""
    present = list(table.columns) if isinstance(table, pd.DataFrame) else table.column_names
    used = {column for expectation in expectations for column in expectation.columns}
    columns = [column for column in present if column in used] or ["_row" if "_row" in present else present[0]]
    if isinstance(table, pd.DataFrame):
        return table[columns].reset_index(drop=True)
    return table.select(columns).to_pandas()


def _run_suite(expectations: list[Expectation], tables: dict[str, Table]) -> list[ExpectationOutcome]:
    gx, batch_definition = _great_expectations()
    outcomes: list[ExpectationOutcome] = []
    for table_name in dict.fromkeys(e.table for e in expectations):
        wanted = [e for e in expectations if e.table == table_name]
        if table_name not in tables:
            known = ", ".join(sorted(tables))
            outcomes += [_outcome(e, False, {"error": f"no table {table_name!r}; tables are: {known}"}) for e in wanted]
            continue
        batch = batch_definition.get_batch(batch_parameters={"dataframe": _checked_frame(tables[table_name], wanted)})
        outcomes += _validate_table(gx, batch, table_name, wanted)
    return outcomes


@functools.cache
def _great_expectations() -> tuple[Any, Any]:
    """great-expectations and one batch definition of an in-memory dataframe, made once per process: GX
    serialises its whole project config each time an asset or batch definition is added."""
    gx = _import_great_expectations()
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    asset = context.data_sources.add_pandas("release").add_dataframe_asset(name="table")
    return gx, asset.add_batch_definition_whole_dataframe("whole table")


def _validate_table(gx: Any, batch: Any, table_name: str, wanted: list[Expectation]) -> list[ExpectationOutcome]:
    """One validation of the batch against a suite of the table's expectations; an expectation GX cannot
    build (unknown name, wrong arguments) is a failed outcome and stays out of the suite."""
    outcomes: dict[int, ExpectationOutcome] = {}
    suite = gx.ExpectationSuite(name=table_name)
    for position, expectation in enumerate(wanted):
        kwargs = expectation.kwargs
        kwargs["meta"] = {**(kwargs.get("meta") or {}), _POSITION: position}
        try:
            suite.expectations.append(getattr(gx.expectations, _camel(expectation.expectation))(**kwargs))
        except (AttributeError, TypeError, ValueError) as error:
            outcomes[position] = _outcome(
                expectation, False, {"error": f"cannot run {expectation.expectation}: {error}"}
            )
    if suite.expectations:
        for result in batch.validate(suite, result_format=RESULT_FORMAT).results:
            position = result.expectation_config.meta[_POSITION]
            outcomes[position] = _outcome(wanted[position], bool(result.success), _observed(result))
    missing = {"error": "great-expectations returned no result for this expectation"}
    return [outcomes.get(position) or _outcome(wanted[position], False, missing) for position in range(len(wanted))]


def _outcome(expectation: Expectation, success: bool, observed: dict[str, Any]) -> ExpectationOutcome:
    return ExpectationOutcome(expectation.table, expectation.expectation, expectation.kwargs, success, observed)


def _observed(result: Any) -> dict[str, Any]:
    details = result.result or {}
    observed = {key: _plain(details[key]) for key in _OBSERVED_KEYS if key in details}
    if details.get("partial_unexpected_index_list"):  # the first MAX_LISTED offending rows, for _violations
        observed["unexpected_index_list"] = list(details["partial_unexpected_index_list"])
    error = _exception_message(result.exception_info or {})
    if error:
        observed["error"] = error
    return observed


def _exception_message(info: dict[str, Any]) -> str | None:
    """The message of the exception GX caught: one ``exception_info``, or the first of those it keys by
    metric (``The column "x" in BatchData does not exist.``)."""
    if "raised_exception" in info:
        return info["exception_message"] if info["raised_exception"] else None
    return next((message for entry in info.values() if (message := _exception_message(entry))), None)


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
