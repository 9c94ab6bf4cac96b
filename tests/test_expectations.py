"""The expectation suite runs one great-expectations validation per table, on the named columns only; a table
read in batches gives the outcomes of the whole table."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from clinical_corpora.core.manifest import Expectation
from clinical_corpora.validation import expectations as expectations_module
from clinical_corpora.validation.expectations import run_suite


def expectation(table: str, name: str, **kwargs: Any) -> Expectation:
    return Expectation.model_validate({"table": table, "expectation": name, **kwargs})


SUITE = [
    expectation("c", "expect_table_row_count_to_be_between", min_value=1),
    expectation("c.spans", "expect_column_values_to_be_between", column="start", min_value=0),
    expectation("c", "expect_column_values_to_not_be_null", column="id"),
    expectation("c.spans", "expect_column_values_to_be_in_set", column="label", value_set=["problem"]),
]
TABLES = {
    "c": pa.table({"_split": ["train", "test"], "_row": [0, 1], "id": ["a", None], "text": ["x" * 50, "y"]}),
    "c.spans": pa.table(
        {"_split": ["train", "test"], "_row": [0, 1], "start": [3, -1], "label": ["problem", "test"], "end": [4, 0]}
    ),
}


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], list[str]]]:
    """Each great-expectations validation run: its expectations and the columns of its batch."""
    from great_expectations.datasource.fluent.interfaces import Batch

    seen: list[tuple[list[str], list[str]]] = []
    validate = Batch.validate

    def spy(self: Batch, expect: Any, **kwargs: Any) -> Any:
        names = [type(e).__name__ for e in getattr(expect, "expectations", [expect])]
        seen.append((names, list(self.data.dataframe.columns)))
        return validate(self, expect, **kwargs)

    monkeypatch.setattr(Batch, "validate", spy)
    return seen


def test_a_table_s_expectations_run_in_one_validation_of_its_named_columns(
    validations: list[tuple[list[str], list[str]]],
) -> None:
    outcomes = run_suite(SUITE, TABLES, {"c": ["note-a", "note-b"]})
    assert validations == [
        (["ExpectTableRowCountToBeBetween", "ExpectColumnValuesToNotBeNull"], ["id"]),
        (["ExpectColumnValuesToBeBetween", "ExpectColumnValuesToBeInSet"], ["start", "label"]),
    ]
    verdicts = [(o.table, o.expectation, o.success) for o in outcomes]
    assert verdicts == [
        ("c", "expect_table_row_count_to_be_between", True),
        ("c", "expect_column_values_to_not_be_null", False),
        ("c.spans", "expect_column_values_to_be_between", False),
        ("c.spans", "expect_column_values_to_be_in_set", False),
    ]
    assert outcomes[1].violations == [{"split": "test", "record": "note-b", "values": {"id": None}}]
    assert outcomes[2].violations == [{"split": "test", "record": "note-b", "values": {"start": -1}}]
    assert outcomes[3].observed["partial_unexpected_list"] == ["test"]


def test_arrow_and_pandas_tables_give_the_same_outcomes() -> None:
    arrow = run_suite(SUITE, TABLES, {"c": ["note-a", "note-b"]})
    pandas = run_suite(SUITE, {name: table.to_pandas() for name, table in TABLES.items()}, {"c": ["note-a", "note-b"]})
    assert [o.as_dict() for o in arrow] == [o.as_dict() for o in pandas]


def in_batches(table: pa.Table, size: int) -> Any:
    """``table`` as :data:`TableBatches`: the asked columns and the keys, ``size`` rows at a time."""

    def batches(columns: list[str]) -> Any:
        kept = [name for name in table.column_names if name in {"_split", "_row", *columns}]
        for start in range(0, max(table.num_rows, 1), size):
            yield table.slice(start, size).select(kept)

    return batches


@pytest.mark.parametrize("limit", ["WHOLE_ROWS", "WHOLE_BYTES"])
def test_a_table_read_in_batches_gives_the_outcomes_of_the_whole_table(
    monkeypatch: pytest.MonkeyPatch, limit: str
) -> None:
    monkeypatch.setattr(expectations_module, limit, 0)  # even this small table is checked batch by batch
    rows = 97  # more offending rows than are listed, a null in some batches only, a tolerated share
    spans = pa.table(
        {
            "_split": ["train" if row % 3 else "test" for row in range(rows)],
            "_row": list(range(rows)),
            "start": [None if row % 40 == 7 else (row % 5) - 2 for row in range(rows)],
            "label": ["problem" if row % 4 else "test" for row in range(rows)],
            "code": [f"C{row:03}" if row % 9 else "bad" for row in range(rows)],
            "end": [None if row % 31 == 5 else (row % 7) - 1 for row in range(rows)],
        }
    )
    suite = [
        expectation("c.spans", "expect_column_values_to_be_between", column="start", min_value=0),
        expectation("c.spans", "expect_column_values_to_be_in_set", column="label", value_set=["problem"], mostly=0.7),
        expectation("c.spans", "expect_column_values_to_match_regex", column="code", regex="^C[0-9]{3}$"),
        expectation("c.spans", "expect_column_value_lengths_to_be_between", column="label", min_value=5),
        expectation("c.spans", "expect_column_values_to_be_unique", column="label"),
        expectation("c.spans", "expect_column_pair_values_a_to_be_greater_than_b", column_A="end", column_B="start"),
        expectation("c.spans", "expect_column_pair_values_to_be_equal", column_A="end", column_B="start", mostly=0.1),
        expectation("c.spans", "expect_table_row_count_to_be_between", min_value=1),
        expectation("c.spans", "expect_column_values_to_not_be_null", column="missing_column"),
        expectation("c.spans", "expect_no_such_thing", column="label"),
    ]
    ids = {"c": [f"note-{row}" for row in range(rows)]}
    whole = [o.as_dict() for o in run_suite(suite, {"c.spans": spans}, ids)]
    assert [o["success"] for o in whole] == [False, True, False, False, False, False, True, True, False, False]
    assert len(whole[0]["violations"]) == 20 and whole[0]["observed"]["unexpected_count"] > 20
    for size in (8, 50):  # compared as JSON: -1 and -1.0 differ there
        batched = [o.as_dict() for o in run_suite(suite, {"c.spans": in_batches(spans, size)}, ids)]
        assert json.dumps(batched) == json.dumps(whole)


def test_an_expectation_gx_cannot_build_or_run_fails_alone_with_its_reason() -> None:
    suite = [
        expectation("c", "expect_no_such_thing", column="id"),
        expectation("c", "expect_column_values_to_be_between", column="id", bogus=1),
        expectation("c", "expect_column_values_to_not_be_null", column="missing_column"),
        expectation("c", "expect_table_row_count_to_be_between", min_value=2),
        expectation("nope", "expect_table_row_count_to_be_between", min_value=2),
    ]
    outcomes = run_suite(suite, TABLES)
    assert [o.success for o in outcomes] == [False, False, False, True, False]
    assert outcomes[0].observed["error"] == (
        "cannot run expect_no_such_thing: great-expectations has no expectation 'expect_no_such_thing'"
    )
    assert "bogus" in outcomes[1].observed["error"]
    # before: observed {} — GX keys a caught error by metric when a suite runs
    assert outcomes[2].observed["error"] == 'Error: The column "missing_column" in BatchData does not exist.'
    assert outcomes[4].observed["error"] == "no table 'nope'; tables are: c, c.spans"


def test_an_expectation_is_found_by_its_name_even_when_its_class_name_is_not_that_name_in_camel_case() -> None:
    kl = expectation(  # class ExpectColumnKLDivergenceToBeLessThan: "Kl" from the name would not find it
        "c.spans",
        "expect_column_kl_divergence_to_be_less_than",
        column="start",
        partition_object={"bins": [0, 10, 100], "weights": [0.5, 0.5]},
        threshold=0.9,
    )
    [outcome] = run_suite([kl], TABLES)
    assert "error" not in outcome.observed and "observed_value" in outcome.observed  # built and run by GX


def test_an_expectation_named_twice_gets_an_outcome_each_time() -> None:
    twice = [SUITE[2], SUITE[2].model_copy(deep=True)]  # one suite holds both: GX's add_expectation would merge them
    outcomes = run_suite(twice, TABLES, {"c": ["note-a", "note-b"]})
    assert [o.as_dict() for o in outcomes][0] == [o.as_dict() for o in outcomes][1]
    assert [o.success for o in outcomes] == [False, False] and outcomes[0].violations[0]["record"] == "note-b"
