"""``clincorp release <corpus>… | --all``: build, check every gate, and write ``<out>/<corpus>/<corpus>-<version>/``
only when all pass (with ``--text-free``, its text-free variant beside it)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from clinical_corpora.builders.commands import arguments
from clinical_corpora.builders.plugins import all_corpora, find_corpus, load_plugins
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CorpusManifest

if TYPE_CHECKING:
    from clinical_corpora.builders.release.request import ChangesSince, Mode, RayEngine, ReleaseRequest
    from clinical_corpora.core.release_manifest import PhiReviewed
    from clinical_corpora.validation.gates import GateResult

Stage = Callable[[str], None]


@dataclass(frozen=True)
class ReleaseArgs:
    """What ``clincorp release`` (or ``build``) is asked: the command line's arguments, typed (the Python API
    takes the same object)."""

    corpora: tuple[str, ...] = ()
    every: bool = False
    out: Path = Path("releases")
    sources: dict[str, Path] = field(default_factory=dict)
    samples: tuple[str, ...] = ()
    options: dict[str, str] = field(default_factory=dict)
    max_rejects: int | None = None
    gates: Path | None = None
    on_error: Literal["fail", "quarantine"] = "fail"
    workers: int | None = None
    previous: Path | None = None
    text_free: bool = False
    phi_allow: Path | None = None
    mode: Mode = "release"
    engine: Literal["local", "ray"] = "local"
    ray_address: str | None = None

    @classmethod
    def parsed(cls, args: argparse.Namespace, mode: Mode = "release") -> ReleaseArgs:
        return cls(
            tuple(args.corpora),
            args.all,
            args.out,
            arguments.sources(args.source),
            tuple(args.sample),
            arguments.pairs("--option", "NAME=VALUE", args.option),
            args.max_rejects,
            args.gates,
            args.on_error,
            args.workers,
            args.previous,
            getattr(args, "text_free", False),
            args.phi_allow,
            mode,
            args.engine,
            args.ray_address,
        )


@dataclass(frozen=True)
class Released:
    """One release (or its text-free variant) made, found unchanged, or failed: what ``clincorp release`` prints
    for it and puts in its summary row."""

    corpus: str
    name: str
    """The release's version, or the text-free folder's name."""
    status: Literal["released", "unchanged", "built", "FAILED"]
    folder: Path | None = None
    digest: str | None = None
    """The sha256 of the release's manifest.json (which hashes every other file)."""
    counts: tuple[int, int, int] | None = None
    """Records read, written and rejected (a full release)."""
    leak_gate: GateResult | None = None
    """The leak gate of a text-free variant."""
    error: str | None = None

    def describe(self) -> str:
        """The line ``clincorp release`` prints for it once made (an error's first line when it failed)."""
        if self.error is not None:  # a plugin that failed to load names itself
            return f"error: {self.error}" if self.name == "-" else f"error: {self.corpus}: {self.error}"
        verb = {"unchanged": "unchanged (identical bytes)"}.get(self.status, self.status)
        if self.leak_gate is not None:
            observed = self.leak_gate.observed
            made = (
                f"leak gate: longest shared run {observed['longest_shared_run']} characters, limit {observed['limit']}"
            )
            return f"{self.corpus} {self.name}: {verb} at {self.folder} ({made}), digest sha256:{self.digest}"
        read, written, rejected = self.counts or (0, 0, 0)
        return (
            f"{self.corpus} {self.name}: {verb} at {self.folder} (read {read}, written {written}, rejected "
            f"{rejected}), digest sha256:{self.digest}"
        )

    def row(self) -> list[str]:
        """Its summary row: corpus, version, status and folder (or the error's first line)."""
        where = str(self.folder) if self.error is None else self.error.splitlines()[0]
        return [self.corpus, self.name, self.status, where]


Told = Callable[[Released], None]


def configure(parser: argparse.ArgumentParser, default_out: str = "releases", mode: Mode = "release") -> None:
    parser.add_argument("corpora", nargs="*", help="corpus names or folders holding a corpus.yaml")
    parser.add_argument("--all", action="store_true", help="every installed corpus")
    parser.add_argument("--out", type=Path, default=Path(default_out))
    arguments.add_sources(parser, "read source NAME from PATH instead of the embedded sample")
    parser.add_argument(
        "--sample",
        action="append",
        default=[],
        metavar="NAME",
        help="beside --source inputs, read required source NAME from its invented sample (a sample release)",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set the builder's option NAME for this run (the corpus's README names its options; recorded in "
        "the manifest and card)",
    )
    _add_gate_arguments(parser)
    parser.add_argument(
        "--workers",
        type=arguments.workers,
        metavar="N",
        help="build the corpus's document shards in N processes (default: a process per 64 documents, at most "
        "every core; never more than the cores or the shards); with --engine ray, N Ray tasks at a time (default: "
        "the cluster's CPUs); the release's bytes are the same whatever N",
    )
    _add_engine_arguments(parser)
    parser.add_argument(
        "--previous",
        type=Path,
        metavar="OLD",
        help="record in the card and manifest what changed since the release OLD of the same corpus (a release "
        "folder, full or text-free): records added, removed and changed, per config, split and field",
    )
    if mode == "release":
        parser.add_argument(
            "--text-free",
            action="store_true",
            help="also write the text-free variant beside the release (<corpus>-<version>.text-free: no licensed "
            "text, checked by the leak gate; anyone may share it and restore the release with clincorp rehydrate)",
        )


def _add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the shards are built: this machine's processes, or Ray tasks."""
    parser.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="build the shards in this machine's processes (local), or as Ray tasks (ray: needs pip install "
        "clinical-corpora[ray]); this process writes the release either way, byte for byte the same",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="with --engine ray, the Ray cluster to run on (default: $RAY_ADDRESS, else a Ray started on this "
        "machine); its workers need clinical-corpora installed and the inputs at the same paths",
    )


def _add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    """What this run tolerates and how it treats a bad record (each recorded in the manifest and card)."""
    parser.add_argument(
        "--max-rejects",
        type=arguments.count,
        metavar="N",
        help="let this run quarantine up to N records (overrides corpus.yaml; recorded in the manifest and card)",
    )
    parser.add_argument(
        "--gates",
        type=Path,
        metavar="FILE",
        help="a YAML overlay of corpus.yaml's gates: section (max_rejects, agreement thresholds and required "
        "flags, expectation arguments such as mostly, matched by table, expectation and column) for this "
        "run only; recorded in the manifest and card",
    )
    parser.add_argument(
        "--phi-allow",
        type=Path,
        metavar="FILE",
        help="let through the PHI findings listed in FILE, one JSON line each as the PHI report gives them (file, "
        'field, category, hash) with a "reason": findings you reviewed in the enclave; recorded in the manifest '
        "and card (hashes and reasons, never text). Without it a release (full or text-free) with a finding fails",
    )
    parser.add_argument(
        "--on-error",
        choices=["fail", "quarantine"],
        default="fail",
        help="fail on the first bad record, or quarantine bad records in rejects.jsonl",
    )


def run(args: argparse.Namespace, mode: Mode = "release") -> int:
    """Release or build each corpus, one after another; with several, try every one and end with a summary
    table."""
    asked = ReleaseArgs.parsed(args, mode)
    made = release(asked, lambda done: print(done.describe(), file=sys.stderr if done.error else sys.stdout))
    if asked.every or len(asked.corpora) > 1:
        print(_summary_table([done.row() for done in made]))
    return 1 if any(done.status == "FAILED" for done in made) else 0


def release(asked: ReleaseArgs, on_released: Told | None = None, on_stage: Stage | None = None) -> list[Released]:
    """Release (or build) each corpus asked for, one after another, and its text-free variant when asked; each
    told to ``on_released`` as soon as it is made, the text-free variant's stages to ``on_stage`` (default:
    stderr). With one corpus named, its error is raised (a ClincorpError); with several (or ``every``) each is
    tried and a failure is a FAILED entry naming its error."""
    told = on_released or (lambda done: None)
    corpora = _selected(asked)
    _check_engine(asked)
    _one_at_a_time(asked, corpora)
    made = [Released(name, "-", "FAILED", error=why) for name, why in load_plugins().items()] if asked.every else []
    for failed in made:
        told(failed)
    changes = _changes_since(asked.previous, corpora[0].name) if asked.previous is not None else None
    for corpus in corpora:
        made += _tried(corpus, asked, changes, on_stage, told)
    return made


def _tried(
    corpus: CorpusManifest, asked: ReleaseArgs, changes: ChangesSince | None, on_stage: Stage | None, told: Told
) -> list[Released]:
    """A corpus released, then its text-free variant when asked, each told, up to the first that fails (FAILED
    with its error, unless the corpus is the one asked for: then the error is raised)."""
    stage = on_stage or (lambda line: print(f"{corpus.name}: {line}", file=sys.stderr, flush=True))
    steps: list[tuple[str, Callable[[Path | None], Released]]] = [
        (corpus.version, lambda _: _release(corpus, asked, changes))
    ]
    if asked.text_free:
        steps.append((f"{corpus.name} text-free", lambda folder: _text_free(corpus, asked, folder, stage)))
    made: list[Released] = []
    for what, step in steps:
        try:
            made.append(step(made[-1].folder if made else None))
        except ClincorpError as error:
            if asked.every or len(asked.corpora) > 1:
                made.append(Released(corpus.name, what, "FAILED", error=str(error)))
            else:
                raise
        told(made[-1])
        if made[-1].status == "FAILED":
            break
    return made


def _selected(asked: ReleaseArgs) -> list[CorpusManifest]:
    if asked.every == bool(asked.corpora):
        raise ClincorpError("name one or more corpora, or --all")
    return all_corpora() if asked.every else [find_corpus(name) for name in asked.corpora]


def _check_engine(asked: ReleaseArgs) -> None:
    """``--ray-address`` only with ``--engine ray``, and Ray installed when asked for."""
    if asked.ray_address is not None and asked.engine != "ray":
        raise ClincorpError("--ray-address applies to --engine ray")
    if asked.engine == "ray":
        from clinical_corpora.builders.release.ray_engine import require_ray

        require_ray()


def _one_at_a_time(asked: ReleaseArgs, corpora: list[CorpusManifest]) -> None:
    """The options that apply to one corpus at a time, refused with several."""
    if len(corpora) < 2:
        return
    for given, option, why in (
        (asked.sources or asked.samples, "--source and --sample", "each names a source of one corpus"),
        (asked.gates, "--gates", "its expectations name that corpus's tables"),
        (asked.options, "--option", "each builder has its own options"),
        (asked.previous, "--previous", "it names a release of that corpus"),
    ):
        if given:
            raise ClincorpError(f"{option} apply to one corpus at a time ({why})")


def _release(corpus: CorpusManifest, asked: ReleaseArgs, changes: ChangesSince | None) -> Released:
    from clinical_corpora.builders.release.pipeline import run as release
    from clinical_corpora.core.release_manifest import release_digest

    outcome = release(_request(corpus, asked, changes))
    counts = outcome.manifest.counts
    return Released(
        corpus.name,
        outcome.manifest.version,
        outcome.status,
        outcome.folder,
        release_digest(outcome.folder),
        (counts.read, counts.written, counts.rejected) if counts else (0, 0, 0),
    )


def _request(corpus: CorpusManifest, asked: ReleaseArgs, changes: ChangesSince | None) -> ReleaseRequest:
    from clinical_corpora.builders.release.request import ReleaseRequest

    return ReleaseRequest(
        corpus,
        asked.out,
        sources=asked.sources,
        samples=asked.samples,
        on_error=asked.on_error,
        max_rejects=asked.max_rejects,
        gate_overlay=asked.gates,
        workers=asked.workers,
        engine=_engine(asked),
        options=asked.options,
        mode=asked.mode,
        changes_since=changes,
        phi_reviewed=_phi_allowed(asked),
    )


def _engine(asked: ReleaseArgs) -> RayEngine | None:
    from clinical_corpora.builders.release.request import RayEngine

    return RayEngine(address=asked.ray_address, num_cpus=asked.workers) if asked.engine == "ray" else None


def _phi_allowed(asked: ReleaseArgs) -> list[PhiReviewed]:
    from clinical_corpora.builders.release.phi import read_phi_allow

    return read_phi_allow(asked.phi_allow) if asked.phi_allow is not None else []


def _changes_since(previous: Path, corpus: str) -> ChangesSince:
    from clinical_corpora.builders.diff.previous import changes_since

    return changes_since(previous, corpus)


def _text_free(corpus: CorpusManifest, asked: ReleaseArgs, folder: Path | None, on_stage: Stage) -> Released:
    """The text-free variant of the release just made in ``folder``."""
    from clinical_corpora.builders.release.inputs import resolve_sources
    from clinical_corpora.builders.text_free.release import release_text_free
    from clinical_corpora.core.release_manifest import release_digest

    assert folder is not None  # the release just made
    sources = resolve_sources(corpus, asked.sources, asked.samples)
    outcome = release_text_free(corpus, folder, sources, on_stage, _phi_allowed(asked))
    digest = release_digest(outcome.folder)
    return Released(corpus.name, outcome.folder.name, outcome.status, outcome.folder, digest, leak_gate=outcome.gate)


def _summary_table(rows: list[list[str]]) -> str:
    """corpus, version, status and folder (or first error line), in aligned columns."""
    rows = [["corpus", "version", "status", "folder or error"], *rows]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    return "\n".join(
        "  ".join([*(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)), row[3]]) for row in rows
    )


COMMANDS = (
    arguments.Subcommand(
        "release",
        "build, validate and write an immutable release",
        arguments.plain_text(__doc__ or ""),
        configure,
        run,
    ),
    arguments.Subcommand(
        "build",
        "the same as release without immutability, into a scratch folder",
        "clincorp build <corpus>…: a release into a scratch folder (build/) that a later build replaces, kept for "
        "inspection even when a gate fails.",
        partial(configure, default_out="build", mode="build"),
        partial(run, mode="build"),
    ),
)
