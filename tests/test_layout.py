"""The import namespace follows the file tree: ``clinical_corpora/<folder>`` links each top-level folder, beside
the Python API (``clinical_corpora/api.py``).

Editors, mypy and static import-graph tools resolve ``clinical_corpora.core.errors`` to a file of the
checkout without the editable install's import finder.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.test_layers import FOLDERS, PACKAGE, ROOT, module_name, package_modules


def test_each_top_level_folder_is_linked_relatively_under_the_namespace_folder() -> None:
    for folder in FOLDERS:
        link = ROOT / PACKAGE / folder
        assert link.is_symlink(), f"{link} is not a link"
        assert os.readlink(link) == f"../{folder}"
    assert sorted(p.name for p in (ROOT / PACKAGE).iterdir() if p.name != "__pycache__") == sorted([*FOLDERS, "api.py"])


def test_every_module_name_is_a_path_of_the_checkout() -> None:
    for path in package_modules():
        parts = module_name(path).split(".")
        as_path = ROOT.joinpath(*parts)
        found = as_path.with_suffix(".py") if as_path.with_suffix(".py").is_file() else as_path / "__init__.py"
        assert found.resolve() == path.resolve(), module_name(path)


def test_the_package_imported_here_is_this_checkout() -> None:
    import clinical_corpora.builders.release.folder as folder

    assert Path(folder.__file__).resolve() == (ROOT / "builders" / "release" / "folder.py").resolve()
