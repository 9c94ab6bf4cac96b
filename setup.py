"""What pyproject.toml cannot say statically: the packages and the corpus plugins, found on disk.

The import namespace ``clinical_corpora`` spans the repository's top-level folders through the folder
``clinical_corpora/``, which holds one relative link per top-level folder (``clinical_corpora/core`` → ``../core``)
and the Python API (``clinical_corpora/api.py``, above every folder): imports follow the file tree, for editors,
mypy and the installed package alike. Every folder below them whose path Python can import becomes a package (a
corpus's sample folders too, as data-only packages, so that setuptools ships them without warnings), and every
corpus package under ``corpora/`` becomes a ``clinical_corpora.plugins`` entry point: adding a corpus folder is
enough.
"""

from pathlib import Path

from setuptools import setup

NAMESPACE = "clinical_corpora"
FOLDERS = ("core", "schemas", "builders", "validation", "corpora")


def package_folders() -> list[Path]:
    folders = [Path(top) for top in FOLDERS]
    folders += [path for top in FOLDERS for path in Path(top).rglob("*") if path.is_dir()]
    return sorted(p for p in folders if all(part.isidentifier() for part in p.parts) and "__pycache__" not in p.parts)


def corpus_plugins() -> list[str]:
    return [
        f"{folder.name} = {NAMESPACE}.corpora.{folder.name}"
        for folder in sorted(Path("corpora").iterdir())
        if (folder / "__init__.py").is_file() and (folder / "corpus.yaml").is_file()
    ]


setup(
    packages=[NAMESPACE, *(".".join((NAMESPACE, *folder.parts)) for folder in package_folders())],
    package_dir={NAMESPACE: NAMESPACE},
    package_data={
        f"{NAMESPACE}.corpora": ["*/corpus.yaml", "*/README.md", "*/sample/**/*"],
        f"{NAMESPACE}.builders.view": ["assets/*"],
    },
    entry_points={
        "console_scripts": [f"clincorp = {NAMESPACE}.builders.commands.main:entry"],
        "clinical_corpora.plugins": corpus_plugins(),
    },
)
