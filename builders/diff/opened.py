"""A release given to ``clincorp diff``, opened as untrusted input: its manifest and files checked first.

A release folder is checked as ``clincorp validate`` checks its files (manifest.json a release manifest, every
file with the sha256 it lists, nothing unlisted or outside the folder); its version becomes text only through
``checked_version``; its records are matched by the id field of the installed corpus's record models (nothing
the release names is imported).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from threading import Thread
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from clinical_corpora.builders.contract.base import load_builder_class
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.plugins import installed_corpus
from clinical_corpora.builders.release.folder import checked_version, release_digest
from clinical_corpora.builders.text_free.layout import VARIANT
from clinical_corpora.builders.validate import release_files_gate, release_hashes_gate
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CORPUS_NAME
from clinical_corpora.validation.gates import GateResult

DEFAULT_ID = "id"


@dataclass
class OpenedRelease:
    """A release folder whose files were checked (or are being checked: see :meth:`confirm`): its corpus,
    version, variant and data."""

    folder: Path
    corpus: str
    version: str
    text_free: bool
    digest: str | None
    checking: ContentsCheck | None = None
    view: ReleaseView = field(init=False)

    def __post_init__(self) -> None:
        self.view = ReleaseView(self.folder)

    def confirm(self) -> None:
        """Once the check of its files' contents begun by ``open_release(…, confirm_later=True)`` ends: a
        ClincorpError naming what differs from manifest.json (nothing read from the release may be reported
        before)."""
        if self.checking is not None:
            _refuse_unless(self.folder, self.checking.result())

    @property
    def variant(self) -> Literal["full", "text-free"]:
        return "text-free" if self.text_free else "full"

    def id_field(self, config: str) -> str:
        """The field naming a record of ``config``: the installed corpus's record model says which."""
        name = _model_id_field(self.corpus, config)
        if name not in self.view.features(config):
            raise ClincorpError(f"{self.folder}: config {config} has no id field {name!r} to match its records by")
        return str(name)

    def ids(self, config: str) -> tuple[pa.Array, pa.Array]:
        """Every record's id (as text) and split, in stored order; an error naming a repeated id."""
        name = self.id_field(config)
        ids = pc.cast(self.view.column(config, name, use_threads=False), pa.string()).combine_chunks()
        if pc.count_distinct(ids).as_py() != len(ids):
            split, _, record = self.view.repeated_ids(config, name)[0]
            raise ClincorpError(
                f"{self.folder}: config {config} holds record {record!r} twice ({split}): ids must be unique"
            )
        return ids, self.view.split_labels(config)

    def check_config(self, config: str) -> None:
        """Every parquet file of a config has the same features (a release made of mixed shards is refused)."""
        shards = self.view.shards(config)
        first = pq.read_schema(shards[0])
        for shard in shards[1:]:
            if not pq.read_schema(shard).equals(first, check_metadata=True):
                raise ClincorpError(f"{shard}: its features differ from those of {shards[0].name}")


def _model_id_field(corpus: str, config: str) -> str:
    return str(getattr(_record_models(corpus).get(config), "id_field", DEFAULT_ID))


@cache
def _record_models(corpus: str) -> dict[str, type]:
    """The installed corpus's record model per config (none when it is not installed: records are then matched
    by their ``id``), looked up once per corpus."""
    try:
        return dict(load_builder_class(installed_corpus(corpus).builder).CONFIGS)
    except ClincorpError:
        return {}


class ContentsCheck:
    """Every file of a release against its sha256 (``release_hashes_gate``), in a thread of its own (hashlib
    leaves Python's lock while it works), alongside the caller's reading."""

    def __init__(self, folder: Path, manifest: dict[str, Any]) -> None:
        self._outcome: list[GateResult] = []
        self._thread = Thread(target=self._run, args=(folder, manifest), name="clincorp-file-check", daemon=True)
        self._thread.start()

    def _run(self, folder: Path, manifest: dict[str, Any]) -> None:
        self._outcome.append(release_hashes_gate(folder, manifest))  # a gate never raises: it fails

    def result(self) -> GateResult:
        self._thread.join()
        return self._outcome[0]


def open_release(folder: Path, confirm_later: bool = False) -> OpenedRelease:
    """A release folder given on the command line, checked: a ClincorpError names what is wrong. With
    ``confirm_later``, what needs no file read is checked now (every file listed, present, regular and inside)
    and the files' contents alongside the caller's reading, until :meth:`OpenedRelease.confirm`."""
    if not (folder / "manifest.json").is_file():
        raise ClincorpError(f"{folder} is not a release: it has no manifest.json")
    manifest, files = release_files_gate(folder, contents=not confirm_later)
    _refuse_unless(folder, files)
    corpus = manifest.get("corpus")
    if not isinstance(corpus, str) or not re.fullmatch(CORPUS_NAME, corpus):
        raise ClincorpError(f"{folder / 'manifest.json'}: corpus {corpus!r} is not a corpus name")
    version = checked_version(manifest.get("version"), folder / "manifest.json")
    checking = ContentsCheck(folder, manifest) if confirm_later else None
    return OpenedRelease(folder, corpus, version, manifest.get("variant") == VARIANT, release_digest(folder), checking)


def _refuse_unless(folder: Path, files: GateResult) -> None:
    if not files.success:
        problems = "; ".join(detail["problem"] for detail in files.details[:3])
        raise ClincorpError(
            f"{folder}: its files do not match its manifest.json ({problems}); clincorp validate says more"
        )


def staged_release(folder: Path, corpus: str, version: str) -> OpenedRelease:
    """The release a run is writing (its data only, before its manifest): this run's own output, trusted."""
    return OpenedRelease(folder, corpus, version, False, None)


def same_corpus(old: OpenedRelease, new: OpenedRelease) -> None:
    if old.corpus != new.corpus:
        raise ClincorpError(
            f"{old.folder} is a release of {old.corpus}, {new.folder} of {new.corpus}: "
            "diff compares two releases of one corpus"
        )
