"""Where agreement gates find each annotator's annotations: one convention for every corpus.

Each annotator's annotations are one entry named after the annotator:

- a folder laid out as the corpus's gold input (the same document files at the same paths relative
  to the folder), so that a document is paired across annotators by that relative path; or
- where one file holds a whole annotation set (a CSV of spans), the file ``<annotator><suffix>``.

The entries sit side by side in one source folder; hidden entries and those named in ``exclude``
(such as a ``gold/`` beside the annotators) are not annotators::

    sdoh       shac_double/annotator_a/mimic/0701.ann   shac_double/annotator_b/mimic/0701.ann
    rad_coref  annotations/annotator_a/<SUBJECT_ID>/<ROW_ID>.ann   beside annotations/gold/
    snomed_el  annotators/annotator_b.csv

A corpus whose corpus.yaml names one source per annotator (odie_anaphora's ``annotator_a`` and
``annotator_b``) passes those folders by source name instead: the source name is the annotator's.
How documents are compared (all paired, or only those both annotated) is each agreement's rule.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from clinical_corpora.builders.sources.discovery import split_suffix, walk_files, warn_left_out
from clinical_corpora.core.errors import SourceError


def annotator_folders(
    root: Path | Mapping[str, Path], suffix: str, *, exclude: Collection[str] = ()
) -> dict[str, Path]:
    """Annotator name → folder (or ``<name><suffix>`` file), sorted by name.

    ``root`` is the folder holding the annotators' entries, or the entries by name. ``suffix`` ends
    the names of the document files (``.ann``, ``.csv``); an annotator folder without any is an error.
    """
    entries = dict(root) if isinstance(root, Mapping) else _entries(root, suffix, exclude)
    for name, entry in entries.items():
        if entry.is_file() and split_suffix(entry.name, [suffix]):
            continue
        if not entry.is_dir():
            raise SourceError(entry, f"annotator {name}: expected a folder of {suffix} files or a {suffix} file")
        if not any(split_suffix(path.name, [suffix]) for path in walk_files(entry)):
            raise SourceError(
                entry, f"annotator {name}: expected {suffix} files laid out as the gold input, found none"
            )
    return dict(sorted(entries.items()))


def _entries(root: Path, suffix: str, exclude: Collection[str]) -> dict[str, Path]:
    if not root.is_dir():
        raise SourceError(
            root,
            f"expected a folder holding one folder of {suffix} files, or one <annotator>{suffix} file, per annotator",
        )
    entries: dict[str, Path] = {}
    left_out = []
    for entry in sorted(root.iterdir()):
        stem = split_suffix(entry.name, [suffix])
        if entry.name in exclude:
            continue
        if entry.name.startswith(".") or not (entry.is_dir() or stem):
            left_out.append(entry.name)
            continue
        name = entry.name if entry.is_dir() or stem is None else stem[0]
        if name in entries:
            raise SourceError(entry, f"annotator {name} is also {entries[name].name}: keep one")
        entries[name] = entry
    if left_out:
        warn_left_out(root, left_out, f"an annotator's folder or {suffix} file")
    return entries
