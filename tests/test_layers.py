"""Each folder of the package imports only the folders below it: the rule is stated per folder.

Every module belongs to a folder (the most specific prefix of :data:`ALLOWED` wins) and may import its own folder
and the folders :data:`ALLOWED` lists for it, anywhere in the module (even inside a function or under
TYPE_CHECKING); any other import of the package fails the test, naming both modules. Bottom up: the core vocabulary;
record schemas; metrics, agreement and expectations; readers, the builder contract and writers; the corpora; then
finding corpora (plugins), the release (making one, the one door that opens one, and what describes one), the
text-free variant on top of it, rehydration and validation on top of both, the diff and the viewer on the door, the
commands, and the Python API over them. No feature folder borrows from a sibling: ``release`` knows nothing of
``text_free``, ``validate`` nothing of ``rehydrate``, ``diff`` nothing of ``validate``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "clinical_corpora"
FOLDERS = ("core", "schemas", "builders", "validation", "corpora")

_CORE = ("core", "schemas")
_READERS = (*_CORE, "builders.sources")
_CONTRACT = (*_CORE, "validation", "builders.sources", "builders.contract", "builders.exporters")
_CORPORA = (*_CONTRACT, "corpora")
ALLOWED: dict[str, tuple[str, ...]] = {
    "builders": (),  # the namespace folder itself
    "core": (),
    "schemas": ("core",),
    "validation": _CORE,  # metrics are pure functions over core types: no reader, no builder
    "builders.sources": _CORE,  # one reader per raw format
    "builders.contract": (*_CORE, "validation"),  # what a corpus may import to build against
    "builders.exporters": (*_READERS, "builders.contract"),
    "corpora": _CONTRACT,
    "builders.plugins": _CORE,  # installed corpora, found through the registry (never imported by name)
    "builders.release": (*_CORPORA, "builders.plugins"),  # making a release, the door, describing one
    "builders.text_free": (*_CORPORA, "builders.plugins", "builders.release"),
    "builders.rehydrate": (*_CORPORA, "builders.plugins", "builders.release", "builders.text_free"),
    "builders.validate": (*_CORPORA, "builders.plugins", "builders.release", "builders.text_free"),
    "builders.diff": (*_CORPORA, "builders.plugins", "builders.release"),
    "builders.view": (*_CORPORA, "builders.plugins", "builders.release"),
    "builders.commands": (
        *_CORPORA,
        "builders.plugins",
        "builders.release",
        "builders.text_free",
        "builders.rehydrate",
        "builders.validate",
        "builders.diff",
        "builders.view",
    ),
    "api": (*_CORPORA, "builders.plugins", "builders.commands"),  # clinical_corpora/api.py: the commands, typed
}


def folder_of(module: str) -> str:
    relative = module.removeprefix(f"{PACKAGE}.")
    prefixes = [p for p in ALLOWED if relative == p or relative.startswith(f"{p}.")]
    if not prefixes:
        raise AssertionError(f"{module} belongs to no folder: add it to ALLOWED")
    return max(prefixes, key=len)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    parts = parts[1:] if parts[0] == PACKAGE else parts  # the API, beside the namespace's links
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
    return sorted(
        [*(path for folder in FOLDERS for path in (ROOT / folder).rglob("*.py")), *(ROOT / PACKAGE).glob("*.py")]
    )


def upward_imports() -> list[str]:
    found = []
    for path in package_modules():
        importer = module_name(path)
        own = folder_of(importer)
        for imported in sorted(imported_modules(path)):
            theirs = folder_of(imported) if _is_module(imported) else own
            if theirs != own and theirs not in ALLOWED[own]:
                found.append(f"{importer} ({own}) imports {imported} ({theirs})")
    return found


def _is_module(name: str) -> bool:
    relative = Path(*name.removeprefix(f"{PACKAGE}.").split("."))
    return (ROOT / relative).with_suffix(".py").is_file() or (ROOT / relative / "__init__.py").is_file()


def test_every_module_has_a_folder() -> None:
    assert package_modules()
    for path in package_modules():
        folder_of(module_name(path))


def test_no_import_runs_up_the_layers() -> None:
    assert upward_imports() == []


def test_an_upward_import_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reader = tmp_path / "builders" / "sources" / "reader.py"
    reader.parent.mkdir(parents=True)
    reader.write_text("def f():\n    from clinical_corpora.builders.release.pipeline import run\n")
    (tmp_path / "builders" / "release").mkdir()
    (tmp_path / "builders" / "release" / "pipeline.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert upward_imports() == [
        "clinical_corpora.builders.sources.reader (builders.sources) imports "
        "clinical_corpora.builders.release.pipeline (builders.release)"
    ]


def test_a_feature_borrowing_from_a_sibling_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pipeline = tmp_path / "builders" / "release" / "pipeline.py"
    pipeline.parent.mkdir(parents=True)
    pipeline.write_text("from clinical_corpora.builders.text_free.leak_gate import leak_gate\n")
    (tmp_path / "builders" / "text_free").mkdir()
    (tmp_path / "builders" / "text_free" / "leak_gate.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert upward_imports() == [
        "clinical_corpora.builders.release.pipeline (builders.release) imports "
        "clinical_corpora.builders.text_free.leak_gate (builders.text_free)"
    ]


def test_a_metric_importing_a_reader_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    metric = tmp_path / "validation" / "metrics" / "metric.py"
    metric.parent.mkdir(parents=True)
    metric.write_text("from clinical_corpora.builders.sources.reader import read\n")
    (tmp_path / "builders" / "sources").mkdir(parents=True)
    (tmp_path / "builders" / "sources" / "reader.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert upward_imports() == [
        "clinical_corpora.validation.metrics.metric (validation) imports "
        "clinical_corpora.builders.sources.reader (builders.sources)"
    ]
