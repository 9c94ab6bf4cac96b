"""Run a corpus's expectation suite (great-expectations, pandas) on its flattened release tables.

Each table's expectations run as one ExpectationSuite per validation, and a batch holds only the columns
those expectations name: great-expectations then computes each metric once for the whole suite instead
of rebuilding its validator per expectation. A table given as :data:`TableBatches` (read batch by batch
from the written parquet) keeps memory bounded: its row-wise expectations (:data:`ROW_WISE`) run once per
batch, their counts and listed rows merged exactly as one whole-table run reports them, and the others
run once over only the columns they name.
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import numbers
import os
from collections.abc import Callable, Iterator
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
# A table too large to hold: given some of its columns, its rows in order as Arrow batches (with ``_split``
# and ``_row`` where the table has them).
TableBatches: TypeAlias = Callable[[list[str]], Iterator[pa.Table]]
# Column (and column pair) map expectations whose verdict on a row depends on that row alone: checked batch by batch.
ROW_WISE = frozenset(
    {
        "expect_column_values_to_be_in_set",
        "expect_column_values_to_not_be_in_set",
        "expect_column_values_to_be_between",
        "expect_column_values_to_match_regex",
        "expect_column_values_to_not_match_regex",
        "expect_column_values_to_not_be_null",
        "expect_column_values_to_be_null",
        "expect_column_value_lengths_to_be_between",
        "expect_column_value_lengths_to_equal",
        "expect_column_pair_values_a_to_be_greater_than_b",
        "expect_column_pair_values_to_be_equal",
    }
)
NO_RESULT = "great-expectations returned no result for this expectation"
WHOLE_ROWS = 10_000  # a table read in batches but no longer than this is validated whole, in one run
WHOLE_BYTES = 16 << 20  # ... and no larger than this as Arrow (long texts: pandas and GX hold several copies)


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


def expectation_class(name: str) -> Any:
    """great-expectations' class for an expectation's snake_case name, from its registry (a name such as
    ``expect_column_kl_divergence_to_be_less_than`` is not its class's name split at capitals); AttributeError
    naming it when great-expectations has none."""
    from great_expectations.exceptions import ExpectationNotFoundError
    from great_expectations.expectations.registry import get_expectation_impl

    try:
        return get_expectation_impl(name)
    except ExpectationNotFoundError:
        raise AttributeError(f"great-expectations has no expectation {name!r}") from None


@dataclass
class _Checked:
    """An outcome and where the rows it lists are: positions ``indices`` of ``rows`` (None: no table)."""

    outcome: ExpectationOutcome
    rows: Table | None = None
    indices: list[int] = field(default_factory=list)


def run_suite(
    expectations: list[Expectation],
    tables: dict[str, Table | TableBatches],
    record_ids: RecordIds | Callable[[], RecordIds] | None = None,
) -> list[ExpectationOutcome]:
    """Validate every expectation against its table; a missing table is a failed expectation.

    Outcomes come in :func:`expectations_in_run_order`. Each lists the rows an expectation found unexpected:
    their split and record id (through the ``_row`` column and ``record_ids``, or a function giving them,
    called only when a row is listed) where the table has them, and the values of the checked columns.
    """
    if not expectations:
        return []
    checked = _run_suite(expectations, tables)
    if callable(record_ids):
        record_ids = record_ids() if any(entry.indices for entry in checked) else {}
    for entry, expectation in zip(checked, expectations_in_run_order(expectations), strict=True):
        if entry.rows is not None:
            entry.outcome.violations = _violations(entry, expectation, record_ids or {})
    return [entry.outcome for entry in checked]


def expectations_in_run_order(expectations: list[Expectation]) -> list[Expectation]:
    """The order ``_run_suite`` checks expectations in: table by table, in first-mention order."""
    return [e for table in dict.fromkeys(e.table for e in expectations) for e in expectations if e.table == table]


def _violations(entry: _Checked, expectation: Expectation, record_ids: RecordIds) -> list[dict[str, Any]]:
    """The offending rows GX named (first MAX_LISTED): where they are and the checked columns' values."""
    table = entry.rows
    assert table is not None
    config = entry.outcome.table.split(".")[0]
    ids = record_ids.get(config)
    columns = _column_names(table)
    listed = []
    for index in entry.indices[:MAX_LISTED]:
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


def _column_names(table: Table) -> list[str]:
    return list(table.columns) if isinstance(table, pd.DataFrame) else table.column_names


def _used_columns(expectations: list[Expectation]) -> list[str]:
    return list(dict.fromkeys(column for expectation in expectations for column in expectation.columns))


def _checked_frame(table: Table, expectations: list[Expectation]) -> pd.DataFrame:
    """The table cut down to the columns its expectations name, as pandas (row order and count kept, the
    index positional so GX's unexpected indices are row positions); only these columns are converted."""
    present = _column_names(table)
    used = set(_used_columns(expectations))
    columns = [column for column in present if column in used] or ["_row" if "_row" in present else present[0]]
    if isinstance(table, pd.DataFrame):
        return table[columns].reset_index(drop=True)
    return table.select(columns).to_pandas()


def _run_suite(expectations: list[Expectation], tables: dict[str, Table | TableBatches]) -> list[_Checked]:
    gx, batch_definition = _great_expectations()
    checked: list[_Checked] = []
    for table_name in dict.fromkeys(e.table for e in expectations):
        wanted = [e for e in expectations if e.table == table_name]
        if table_name not in tables:
            known = ", ".join(sorted(tables))
            error = {"error": f"no table {table_name!r}; tables are: {known}"}
            checked += [_Checked(_outcome(e, False, dict(error))) for e in wanted]
            continue
        table = tables[table_name]
        if isinstance(table, pd.DataFrame | pa.Table):
            checked += _validate_table(gx, batch_definition, table, table_name, wanted)
        else:
            checked += _validate_batches(gx, batch_definition, table, table_name, wanted)
    return checked


def load_great_expectations() -> None:
    """Import great-expectations now (about 2 s), e.g. while another process does other work; a suite run
    later in this process uses it."""
    _great_expectations()


@functools.cache
def _great_expectations() -> tuple[Any, Any]:
    """great-expectations (imported here, when a suite first runs) and one batch definition of an in-memory
    dataframe, made once per process: GX serialises its whole project config each time an asset or batch
    definition is added."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    asset = context.data_sources.add_pandas("release").add_dataframe_asset(name="table")
    definition = asset.add_batch_definition_whole_dataframe("whole table")
    return gx, definition


def _suite(gx: Any, table_name: str, wanted: list[Expectation]) -> tuple[Any, dict[int, ExpectationOutcome]]:
    """A suite of the table's expectations, and a failed outcome for each one GX cannot build (unknown
    name, wrong arguments), which stays out of the suite."""
    failed: dict[int, ExpectationOutcome] = {}
    built = []
    for position, expectation in enumerate(wanted):
        kwargs = expectation.kwargs
        kwargs["meta"] = {**(kwargs.get("meta") or {}), _POSITION: position}
        try:
            built.append(expectation_class(expectation.expectation)(**kwargs))
        except (AttributeError, TypeError, ValueError) as error:
            failed[position] = _outcome(expectation, False, {"error": f"cannot run {expectation.expectation}: {error}"})
    return gx.ExpectationSuite(name=table_name, expectations=built), failed


def _results(batch_definition: Any, frame: pd.DataFrame, suite: Any) -> Iterator[tuple[int, Any]]:
    """(position in the table's expectations, GX result) of one validation of ``frame``."""
    batch = batch_definition.get_batch(batch_parameters={"dataframe": frame})
    validated = batch.validate(suite, result_format=RESULT_FORMAT)
    for result in validated.results:
        yield result.expectation_config.meta[_POSITION], result


def _in_order(checked: dict[int, _Checked], wanted: list[Expectation], rows: Table | None = None) -> list[_Checked]:
    return [
        checked.get(position) or _Checked(_outcome(wanted[position], False, {"error": NO_RESULT}), rows)
        for position in range(len(wanted))
    ]


def _validate_table(
    gx: Any, batch_definition: Any, table: Table, table_name: str, wanted: list[Expectation]
) -> list[_Checked]:
    """One validation of the table (its checked columns) against a suite of its expectations."""
    suite, failed = _suite(gx, table_name, wanted)
    checked = {position: _Checked(outcome, table) for position, outcome in failed.items()}
    if suite.expectations:
        for position, result in _results(batch_definition, _checked_frame(table, wanted), suite):
            outcome = _outcome(wanted[position], bool(result.success), _observed(result))
            checked[position] = _Checked(outcome, table, _listed_indices(result.result or {}))
    return _in_order(checked, wanted, table)


def _validate_batches(
    gx: Any, batch_definition: Any, batches: TableBatches, table_name: str, wanted: list[Expectation]
) -> list[_Checked]:
    """A table of at most WHOLE_ROWS rows and WHOLE_BYTES in one validation, as a whole table; otherwise, in one
    pass over its batches, row-wise expectations batch by batch, merged, and the others in one validation of the
    whole table cut down to the columns they name."""
    parts = iter(batches(_used_columns(wanted)))
    head: list[pa.Table] = []
    for part in parts:
        head.append(part)
        if sum(table.num_rows for table in head) > WHOLE_ROWS or sum(table.nbytes for table in head) > WHOLE_BYTES:
            break
    else:
        return _validate_table(gx, batch_definition, pa.concat_tables(head), table_name, wanted)
    row_wise = [position for position, e in enumerate(wanted) if e.expectation in ROW_WISE]
    others = [e for e in wanted if e.expectation not in ROW_WISE]
    merged = _RowWiseRun(gx, table_name, [wanted[p] for p in row_wise])
    kept = {"_split", "_row", "_parent", *_used_columns(others)}
    columns_of_others: list[pa.Table] = []
    for part in itertools.chain(_taken(head), parts):
        if row_wise:
            merged.add(batch_definition, part)
        if others:
            columns_of_others.append(part.select([name for name in part.column_names if name in kept]))
    checked: dict[int, _Checked] = dict(zip(row_wise, merged.checked(), strict=True)) if row_wise else {}
    if others:
        whole = pa.concat_tables(columns_of_others)
        del columns_of_others
        positions = [position for position in range(len(wanted)) if position not in row_wise]
        checked.update(zip(positions, _validate_table(gx, batch_definition, whole, table_name, others), strict=True))
    return _in_order(checked, wanted)


def _taken(batches: list[pa.Table]) -> Iterator[pa.Table]:
    """The batches in order, each let go of by the list as it is taken."""
    while batches:
        yield batches.pop(0)


class _RowWiseRun:
    """Row-wise expectations validated batch by batch, their results merged as one run over all the rows
    reports them: counts summed, the first offending values and rows (MAX_LISTED) in row order, ``mostly``
    applied to the totals. A batch whose validation raised gives the expectation's outcome as it is."""

    def __init__(self, gx: Any, table_name: str, wanted: list[Expectation]) -> None:
        self.wanted = wanted
        self.suite, self.failed = _suite(gx, table_name, wanted)
        self.mostly = {e.meta[_POSITION]: _mostly(e) for e in self.suite.expectations}
        self.details: dict[int, dict[str, Any]] = {}
        self.errors: dict[int, ExpectationOutcome] = {}
        self.listed: dict[int, list[pa.Table]] = {position: [] for position in range(len(wanted))}
        self.int_nulls: set[str] = set()  # integer columns pandas turned into floats (nulls in some batch)
        self.offset = 0

    def add(self, batch_definition: Any, batch: pa.Table) -> None:
        if self.suite.expectations:
            frame = _checked_frame(batch, self.wanted)
            frame.index = pd.RangeIndex(self.offset, self.offset + len(frame))
            self.int_nulls.update(
                name
                for name in frame.columns
                if pa.types.is_integer(batch.schema.field(name).type) and batch.column(name).null_count
            )
            for position, result in _results(batch_definition, frame, self.suite):
                self._add_result(position, result, batch)
        self.offset += batch.num_rows

    def _add_result(self, position: int, result: Any, batch: pa.Table) -> None:
        if position in self.errors:
            return
        if _exception_message(result.exception_info or {}):
            self.errors[position] = _outcome(self.wanted[position], bool(result.success), _observed(result))
            return
        details = result.result or {}
        merged = self.details.get(position)
        if merged is None:
            self.details[position] = dict(details)
        else:
            for key in ("element_count", "missing_count", "unexpected_count"):
                if key in merged:
                    merged[key] = (merged[key] or 0) + (details.get(key) or 0)
            if "partial_unexpected_list" in merged:
                merged["partial_unexpected_list"] = [
                    *(merged["partial_unexpected_list"] or []),
                    *(details.get("partial_unexpected_list") or []),
                ][:MAX_LISTED]
        indices = _listed_indices(details)
        already = sum(table.num_rows for table in self.listed[position])
        local = [index - self.offset for index in indices][: max(0, MAX_LISTED - already)]
        if local:
            self.listed[position].append(batch.take(pa.array(local, pa.int64())))

    def checked(self) -> list[_Checked]:
        out: list[_Checked] = []
        for position, expectation in enumerate(self.wanted):
            if position in self.failed or position in self.errors:
                out.append(_Checked((self.failed | self.errors)[position], pa.table({})))
                continue
            if position not in self.details:
                out.append(_Checked(_outcome(expectation, False, {"error": NO_RESULT}), pa.table({})))
                continue
            details = self._totals(position)
            rows = pa.concat_tables(self.listed[position]) if self.listed[position] else pa.table({})
            observed = {key: _plain(details[key]) for key in _OBSERVED_KEYS if key in details}
            out.append(_Checked(_outcome(expectation, details["success"], observed), rows, list(range(rows.num_rows))))
        return out

    def _totals(self, position: int) -> dict[str, Any]:
        details = dict(self.details[position])
        total = details.get("element_count") or 0
        unexpected = details.get("unexpected_count")
        nonnull = total - (details.get("missing_count") or 0)
        if unexpected is None or total == 0 or nonnull == 0:
            details["success"] = True
        else:
            details["success"] = (float(nonnull) - float(unexpected)) / float(nonnull) >= self.mostly[position]
        if "unexpected_percent" in details:
            details["unexpected_percent"] = (
                unexpected / nonnull * 100 if unexpected is not None and total > 0 and nonnull > 0 else None
            )
        columns = self.wanted[position].columns
        if set(columns) & self.int_nulls:
            details["partial_unexpected_list"] = [
                _as_in_whole_table(value, columns, self.int_nulls)
                for value in details.get("partial_unexpected_list") or []
            ]
        return details


def _as_in_whole_table(value: Any, columns: list[str], int_nulls: set[str]) -> Any:
    """A listed value as one run over the whole table lists it: pandas holds an integer column with a null
    anywhere as floats (a column pair's values, ``[a, b]``, converted column by column)."""
    if isinstance(value, list | tuple) and len(value) == len(columns) > 1:
        return [_as_in_whole_table(item, [column], int_nulls) for item, column in zip(value, columns, strict=True)]
    integral = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    return float(value) if integral and set(columns) & int_nulls else value


def _mostly(expectation: Any) -> float:
    """The share of non-null rows a GX expectation needs to pass (1.0 unless set)."""
    mostly = getattr(expectation, "mostly", None)
    return 1.0 if mostly is None else float(mostly)


def _listed_indices(details: dict[str, Any]) -> list[int]:
    """The first MAX_LISTED offending rows GX named."""
    return [int(index) for index in details.get("partial_unexpected_index_list") or []]


def _outcome(expectation: Expectation, success: bool, observed: dict[str, Any]) -> ExpectationOutcome:
    return ExpectationOutcome(expectation.table, expectation.expectation, expectation.kwargs, success, observed)


def _observed(result: Any) -> dict[str, Any]:
    details = result.result or {}
    observed = {key: _plain(details[key]) for key in _OBSERVED_KEYS if key in details}
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
