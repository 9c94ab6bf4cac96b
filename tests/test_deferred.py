"""great-expectations' module-level imports of scipy.stats and altair are deferred until something uses them,
and an expectation that does use them gives the same outcome as with a plain import."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from clinical_corpora.validation.deferred import defer


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A package ``dpkg`` whose submodule ``heavy`` records in ``dpkg.runs`` each time its code runs."""
    root = tmp_path / "dpkg"
    root.mkdir()
    (root / "__init__.py").write_text("runs = []\n")
    (root / "heavy.py").write_text("import dpkg\ndpkg.runs.append('heavy')\nVALUE = 42\n")
    (root / "broken.py").write_text("raise RuntimeError('broken on purpose')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield root
    for name in [name for name in sys.modules if name == "dpkg" or name.startswith("dpkg.")]:
        del sys.modules[name]


def test_a_deferred_module_runs_at_its_first_attribute_not_at_import(package: Path) -> None:
    assert defer(["dpkg.heavy"]) == ["dpkg.heavy"]
    import dpkg
    import dpkg.heavy
    from dpkg import heavy

    assert heavy is dpkg.heavy is sys.modules["dpkg.heavy"]
    assert heavy.__spec__.name == "dpkg.heavy" and dpkg.runs == []  # the import system's reads load nothing
    assert heavy.VALUE == 42
    assert dpkg.runs == ["heavy"]
    assert heavy.VALUE == 42 and dpkg.runs == ["heavy"]  # the code ran once


def test_imported_missing_and_failing_modules(package: Path) -> None:
    import dpkg.heavy

    assert defer(["dpkg.heavy", "dpkg.absent", "no_such_package.module"]) == []  # left to the plain import
    assert dpkg.runs == ["heavy"]
    assert defer(["dpkg.broken"]) == ["dpkg.broken"]
    broken = sys.modules["dpkg.broken"]
    with pytest.raises(RuntimeError, match="broken on purpose"):
        broken.anything  # noqa: B018
    assert "dpkg.broken" not in sys.modules  # as after a failed import: the next import runs it again
    with pytest.raises(RuntimeError, match="broken on purpose"):
        import dpkg.broken  # noqa: F401


KL_SUITE = """
import json, sys
if sys.argv[1] == "plain":
    import altair, scipy.stats
import pyarrow as pa
from clinical_corpora.core.manifest import Expectation
from clinical_corpora.validation import expectations

table = pa.table({"_row": [0, 1, 2, 3], "label": ["a", "b", "b", "c"], "start": [0, 1, 2, -1]})
suite = [Expectation(table="t", expectation="expect_column_values_to_be_between", column="start", min_value=0)]
loaded = lambda: {name: "Chart" in vars(sys.modules[name]) or "entropy" in vars(sys.modules[name])
                  for name in ("altair", "scipy.stats")}
outcomes = [o.as_dict() for o in expectations.run_suite(suite, {"t": table})]
after_suite = loaded()
gx, batch_definition = expectations._great_expectations()
kl = gx.expectations.ExpectColumnKLDivergenceToBeLessThan(
    column="label", threshold=0.6, partition_object={"values": ["a", "b", "c"], "weights": [0.5, 0.25, 0.25]}
)
result = batch_definition.get_batch(batch_parameters={"dataframe": table.to_pandas()}).validate(kl)
print(json.dumps({"outcomes": outcomes, "loaded_after_suite": after_suite, "kl": result.to_json_dict()["result"],
                  "kl_success": result.success, "loaded": loaded()}))
"""


def _kl_suite(mode: str) -> dict:
    result = subprocess.run([sys.executable, "-c", KL_SUITE, mode], capture_output=True, text=True, check=True)
    return json.loads(result.stdout.splitlines()[-1])


def test_great_expectations_loads_scipy_stats_and_altair_only_for_the_expectations_using_them() -> None:
    deferred, plain = _kl_suite("deferred"), _kl_suite("plain")
    assert deferred["loaded_after_suite"] == {"altair": False, "scipy.stats": False}
    assert plain["loaded_after_suite"] == {"altair": True, "scipy.stats": True}
    assert deferred["loaded"]["scipy.stats"] is True  # the KL divergence expectation computed an entropy
    assert deferred["kl"]["observed_value"] > 0 and deferred["kl_success"] is True
    assert {key: deferred[key] for key in ("outcomes", "kl", "kl_success")} == {
        key: plain[key] for key in ("outcomes", "kl", "kl_success")
    }
    assert deferred["outcomes"][0]["observed"]["unexpected_count"] == 1
