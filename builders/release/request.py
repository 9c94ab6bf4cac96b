"""What one release (or build) of one corpus is asked to do: the typed request the CLI hands the pipeline."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from clinical_corpora.builders.contract.base import Builder, OnError, make_builder
from clinical_corpora.core.changes import ReleaseChanges
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.release_manifest import PhiReviewed

GroupJob = Callable[[Any, dict[str, Any]], Any]
"""What a worker runs on one group of documents: ``job(state, group)``, as
:func:`~clinical_corpora.builders.release.workers.build_group` (the worker's ``WorkerState`` → ``SentGroup``)."""


@dataclass(frozen=True)
class RayEngine:
    """Build the shard groups as Ray tasks (``--engine ray``). ``address`` is a cluster's (``--ray-address``;
    else Ray's own ``RAY_ADDRESS``; else a Ray started here with ``num_cpus``, default every core).
    ``max_retries`` is how often Ray runs a failed task again. ``job`` is what each task runs (default the
    build's own, :func:`~clinical_corpora.builders.release.workers.build_group`; a test may wrap it)."""

    address: str | None = None
    num_cpus: int | None = None
    max_retries: int = 3
    job: GroupJob | None = None


Mode = Literal["release", "build"]


class ChangesSince(Protocol):
    """What changed since a previous release, given the folder holding this run's written data (before its
    card and manifest) and the corpus and version it releases (``clincorp release --previous OLD``)."""

    def __call__(self, staged: Path, corpus: str, version: str) -> ReleaseChanges: ...


@dataclass(frozen=True)
class ReleaseRequest:
    """A release of ``corpus`` into ``<out>/<corpus>/<corpus>-<version>``.

    ``sources`` are the user's inputs (``--source NAME=PATH``); ``samples`` names required sources read from
    their invented sample beside them (any invented input makes a sample release, ``<version>+sample``).
    ``max_rejects`` overrides the corpus's gate for this run and ``gate_overlay`` is a ``--gates`` YAML file
    changing corpus.yaml's gates (both recorded in the manifest and card). ``workers`` processes build the
    builder's shards (default: one per 64 documents, at most every core; the bytes do not depend on it); with
    an ``engine`` the shards run as Ray tasks instead, ``workers`` at a time (default: the cluster's CPUs).
    ``options`` are the builder's options (``--option NAME=VALUE``, parsed by its :class:`BuilderOptions`).
    ``mode`` "build" writes a scratch folder that a later build replaces, kept even when a gate fails.
    ``changes_since`` compares the written records with a previous release: the card and manifest record the
    summary. ``phi_reviewed`` are the PHI findings a maintainer reviewed and lets through (``--phi-allow``).
    """

    corpus: CorpusManifest
    out: Path
    sources: Mapping[str, Path] = field(default_factory=dict)
    samples: Collection[str] = ()
    on_error: OnError = "fail"
    max_rejects: int | None = None
    gate_overlay: Path | None = None
    workers: int | None = None
    engine: RayEngine | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    mode: Mode = "release"
    changes_since: ChangesSince | None = None
    phi_reviewed: Sequence[PhiReviewed] = ()

    def builder(self) -> Builder:
        """The corpus's builder with the requested options (a ClincorpError names a wrong one)."""
        return make_builder(self.corpus, self.options)
