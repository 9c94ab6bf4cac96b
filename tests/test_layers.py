"""No import runs up the layers: core ← readers and metrics ← corpora ← pipeline and CLI.

Every module of the package is assigned a layer by its name (the most specific prefix below wins);
an import of a module in a higher layer, anywhere in a module (even inside a function or under
TYPE_CHECKING), fails the test and names both modules.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "clinical_corpora"
FOLDERS = ("core", "schemas", "builders", "validation", "corpora")

LAYERS: dict[str, int] = {
    # 1. core vocabulary: errors, manifests and gate specification, registries, span types, counts
    "core": 1,
    "schemas": 1,
    # 2. readers and writers of raw formats, text units, metrics, agreement, expectations; the builder
    #    contract and the release view that corpora build against
    "builders.sources": 2,
    "builders.exporters": 2,
    "builders.text_units": 2,
    "builders.base": 2,
    "builders.release_view": 2,
    "validation": 2,
    # 3. corpora: builders, record models, scorers and exporters, registered where defined
    "corpora": 3,
    # 4. pipeline and CLI
    "builders": 4,
}
NAMES = {1: "core", 2: "readers and metrics", 3: "corpora", 4: "pipeline and CLI"}


def layer_of(module: str) -> int:
    relative = module.removeprefix(f"{PACKAGE}.")
    prefixes = [p for p in LAYERS if relative == p or relative.startswith(f"{p}.")]
    if not prefixes:
        raise AssertionError(f"{module} has no layer: add it to LAYERS")
    return LAYERS[max(prefixes, key=len)]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    return ".".join((PACKAGE, *parts))


def imported_modules(path: Path) -> set[str]:
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imported.add(node.module)
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    return {name for name in imported if name.startswith(f"{PACKAGE}.")}


def package_modules() -> list[Path]:
    return sorted(path for folder in FOLDERS for path in (ROOT / folder).rglob("*.py"))


def upward_imports() -> list[str]:
    found = []
    for path in package_modules():
        importer = module_name(path)
        for imported in sorted(imported_modules(path)):
            if _is_module(imported) and layer_of(imported) > layer_of(importer):
                found.append(
                    f"{importer} ({NAMES[layer_of(importer)]}) imports {imported} ({NAMES[layer_of(imported)]})"
                )
    return found


def _is_module(name: str) -> bool:
    relative = Path(*name.removeprefix(f"{PACKAGE}.").split("."))
    return (ROOT / relative).with_suffix(".py").is_file() or (ROOT / relative / "__init__.py").is_file()


def test_every_module_has_a_layer() -> None:
    assert package_modules()
    for path in package_modules():
        layer_of(module_name(path))


def test_no_import_runs_up_the_layers() -> None:
    assert upward_imports() == []


def test_an_upward_import_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reader = tmp_path / "builders" / "sources" / "reader.py"
    reader.parent.mkdir(parents=True)
    reader.write_text("def f():\n    from clinical_corpora.builders.pipeline import run\n")
    (tmp_path / "builders" / "pipeline.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert upward_imports() == [
        "clinical_corpora.builders.sources.reader (readers and metrics) imports "
        "clinical_corpora.builders.pipeline (pipeline and CLI)"
    ]


def metric_imports_of_builders() -> list[str]:
    """Imports of ``clinical_corpora.builders`` (readers included) by modules under validation/.

    Metrics are pure functions over core types: reading files is the corpora's business.
    """
    found = []
    for path in sorted((ROOT / "validation").rglob("*.py")):
        importer = module_name(path)
        for imported in sorted(imported_modules(path)):
            if imported == f"{PACKAGE}.builders" or imported.startswith(f"{PACKAGE}.builders."):
                if _is_module(imported):
                    found.append(f"{importer} imports {imported}")
    return found


def test_metrics_do_not_import_builders() -> None:
    assert metric_imports_of_builders() == []


def test_a_metric_importing_a_reader_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    metric = tmp_path / "validation" / "metrics" / "metric.py"
    metric.parent.mkdir(parents=True)
    metric.write_text("from clinical_corpora.builders.sources.reader import read\n")
    (tmp_path / "builders" / "sources").mkdir(parents=True)
    (tmp_path / "builders" / "sources" / "reader.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert upward_imports() == []
    assert metric_imports_of_builders() == [
        "clinical_corpora.validation.metrics.metric imports clinical_corpora.builders.sources.reader"
    ]
