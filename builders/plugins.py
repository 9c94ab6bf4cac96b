"""Find corpora and their commands: import every plugin of the ``clinical_corpora.plugins`` entry points.

The package's own five corpora are plugins like any other (see ``[project.entry-points]`` in
pyproject.toml); another distribution adds a corpus by declaring an entry point in the same group.
A user may also name a corpus by the path of a folder holding a corpus.yaml (:func:`find_corpus`); a corpus
that a release names is found only among the installed ones, by registered name (:func:`installed_corpus`):
nothing a release names is imported.
"""

from __future__ import annotations

import importlib
import re
from importlib.metadata import entry_points
from pathlib import Path

from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CORPUS_NAME, MANIFEST_NAME, CorpusManifest, load_manifest
from clinical_corpora.core.registry import corpora

ENTRY_POINT_GROUP = "clinical_corpora.plugins"


def load_plugins() -> dict[str, str]:
    """Import every registered plugin module (each registers its corpus and commands). A plugin that fails
    to load is skipped, so the others still work: returns the broken ones, entry-point name → why (the error
    of a command that names one)."""
    broken = {}
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            importlib.import_module(entry_point.value.partition(":")[0])
        except Exception as error:
            broken[entry_point.name] = (
                f"the corpus plugin {entry_point.name!r} ({entry_point.value}) failed to "
                f"load: {type(error).__name__}: {error}"
            )
    return broken


def all_corpora() -> list[CorpusManifest]:
    """Every registered corpus, by name (a broken plugin skipped: :func:`load_plugins` names it); an error
    when there is none."""
    return [_registered(name) for name in _corpus_names()]


def find_corpus(name_or_path: str) -> CorpusManifest:
    """A corpus by registered name, or by the path of a folder holding a corpus.yaml."""
    candidate = Path(name_or_path)
    if (candidate / MANIFEST_NAME).is_file():
        return load_manifest(candidate)
    _corpus_names()
    return _registered(name_or_path)


def installed_corpus(name: object, named_in: Path | None = None) -> CorpusManifest:
    """The installed corpus registered as ``name`` (as a release names it: never a path, never imported
    from where the release says); a ClincorpError naming ``named_in`` otherwise."""
    where = f"{named_in}: " if named_in is not None else ""
    if not isinstance(name, str) or not re.fullmatch(CORPUS_NAME, name):
        raise ClincorpError(f"{where}corpus {name!r} is not the name of a corpus (a release names an installed one)")
    _corpus_names()
    return _registered(name)


def _corpus_names() -> list[str]:
    broken = load_plugins()
    names = sorted(corpora.keys())
    if not names:
        raise ClincorpError(
            f"no corpus is installed: no plugin in the {ENTRY_POINT_GROUP!r} entry-point "
            "group registered one (reinstall clinical-corpora)" + "".join(f"; {why}" for why in broken.values())
        )
    return names


def _registered(name: str) -> CorpusManifest:
    if name not in corpora.keys():
        broken = load_plugins()
        if name in broken:
            raise ClincorpError(broken[name])
    manifest = load_manifest(corpora.get(name))
    if manifest.name != name:
        raise ClincorpError(f"the corpus registered as {name!r} is named {manifest.name!r} in its {MANIFEST_NAME}")
    return manifest
