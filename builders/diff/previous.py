"""``clincorp release … --previous OLD``: the summary of the changes since OLD that the new release records."""

from __future__ import annotations

from pathlib import Path

from clinical_corpora.builders.diff.opened import same_corpus, staged_release
from clinical_corpora.builders.diff.report import diff_releases, open_release
from clinical_corpora.builders.release.request import ChangesSince
from clinical_corpora.core.changes import ReleaseChanges
from clinical_corpora.core.errors import ClincorpError


def changes_since(folder: Path, corpus: str) -> ChangesSince:
    """The comparison of a run's records with the release ``folder`` of ``corpus``, which is opened and checked
    now (a wrong folder fails before the build)."""
    old = open_release(folder)
    if old.corpus != corpus:
        raise ClincorpError(f"--previous {folder} is a release of {old.corpus}, not of {corpus}")

    def compare(staged: Path, corpus: str, version: str) -> ReleaseChanges:
        new = staged_release(staged, corpus, version, old.id_fields)
        same_corpus(old, new)
        return diff_releases(old, new, examples=0).summary()

    return compare
