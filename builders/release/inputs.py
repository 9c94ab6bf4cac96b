"""Resolve a corpus's named sources to paths, and fingerprint every input file."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pyarrow as pa

from clinical_corpora.builders.release.inputs_file import INPUT_FIELDS, summarise_inputs, write_inputs_file
from clinical_corpora.builders.sources.discovery import walk_relative
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.core.manifest import SAMPLE_TAG, CorpusManifest, SourceSpec
from clinical_corpora.core.processes import end_with_parent, fork_context
from clinical_corpora.core.release_manifest import InputSummary

CHUNK = 1 << 20


def resolve_sources(
    manifest: CorpusManifest, overrides: dict[str, Path], samples: Iterable[str] = ()
) -> dict[str, Path | None]:
    """Each source's path: the embedded sample, or the maintainer's inputs; None for a source not read.

    Without overrides every source with a default reads the (invented) sample: a sample release. Once a
    source is given, every required source must be given too, or named in ``samples`` to read its
    embedded sample on purpose; optional sources not given are not read (a sample annotator or gold file
    never meets real inputs), and a given source's ``replaces`` are not read.
    """
    named = samples = set(samples)
    unknown = sorted((set(overrides) | samples) - set(manifest.sources))
    if unknown:
        raise ClincorpError(
            f"{manifest.name} has no source {', '.join(unknown)}; its sources are {', '.join(manifest.sources)}"
        )
    both = sorted(samples & set(overrides))
    if both:
        raise ClincorpError(f"{', '.join(both)} given both with --source and as --sample: choose one")
    for name, path in overrides.items():
        _check_exists(manifest, name, path)
    if not overrides:
        samples = {name for name, spec in manifest.sources.items() if spec.path is not None}
    replaced = {other for name in overrides for other in manifest.sources[name].replaces} - set(overrides) - samples
    _check_complete(manifest, overrides, samples, replaced)
    resolved: dict[str, Path | None] = {}
    for name, spec in manifest.sources.items():
        if name in overrides:
            resolved[name] = overrides[name]
        elif name in samples and name not in replaced:
            if spec.path is None:
                raise ClincorpError(f"source {name!r} of {manifest.name} has no embedded sample to read")
            path = manifest.folder / spec.path
            exists = _check_exists(manifest, name, path) if spec.required or name in named else _exists(spec, path)
            resolved[name] = path if exists else None
        else:
            resolved[name] = None
    return resolved


def _exists(spec: SourceSpec, path: Path) -> bool:
    return path.is_file() if spec.kind == "file" else path.is_dir()


def _check_exists(manifest: CorpusManifest, name: str, path: Path) -> bool:
    spec = manifest.sources[name]
    if not _exists(spec, path):
        raise SourceError(path, f"source {name!r} needs a {spec.kind} here. {spec.description.strip()}")
    return True


def _check_complete(
    manifest: CorpusManifest, overrides: dict[str, Path], samples: set[str], replaced: set[str]
) -> None:
    """A release mixes no invented sample into real inputs unless asked to: list what is missing and where
    to get it."""
    missing = [
        name
        for name, spec in manifest.sources.items()
        if spec.required and name not in overrides and name not in samples and name not in replaced
    ]
    if not missing:
        return
    lines = [
        f"{manifest.name}: real inputs given for {', '.join(sorted(overrides))} but not for {', '.join(missing)}; "
        "give every required source with --source NAME=PATH, or read its invented sample on purpose with "
        f"--sample NAME (a sample release, versioned {manifest.version}{SAMPLE_TAG})"
    ]
    lines += [f"  {name}: {' '.join(manifest.sources[name].description.split())}" for name in missing]
    raise ClincorpError("\n".join(lines))


def invented_sources(
    manifest: CorpusManifest, sources: dict[str, Path | None], overrides: dict[str, Path]
) -> list[str]:
    """The sources read from the embedded, invented sample: not given with --source, or given a path
    inside the corpus's sample (``--source i2b2=corpora/odie_anaphora/sample/i2b2`` is still invented)."""
    embedded = [
        manifest.folder / "sample",
        *(manifest.folder / spec.path for spec in manifest.sources.values() if spec.path),
    ]
    roots = [root.resolve() for root in embedded]
    return [
        name
        for name, path in sources.items()
        if path is not None and (name not in overrides or any(path.resolve().is_relative_to(root) for root in roots))
    ]


def release_version(manifest: CorpusManifest, invented: list[str]) -> str:
    """The corpus version, with the ``+sample`` build tag when any input is an invented sample."""
    return f"{manifest.version}{SAMPLE_TAG}" if invented else manifest.version


InputFile = tuple[str, str, str, int, int]
"""An input file as listed before the build: source, name relative to it, path, size and modification time
(ns)."""


def fingerprint_inputs(
    manifest: CorpusManifest, sources: dict[str, Path | None], overridden: set[str]
) -> list[dict[str, Any]]:
    """sha256 of every input file (every file under a folder source, through linked folders), named relative
    to its source; expected hashes checked for real inputs."""
    return _fingerprint(manifest, list_inputs(sources), overridden)


Walks = dict[str, list[tuple[str, str]]]
"""Each folder source's files, as :func:`~clinical_corpora.builders.sources.discovery.walk_relative` lists them."""


def walk_sources(sources: dict[str, Path | None]) -> Walks:
    """The walk of every folder source (each walked once: the listing of the inputs and the builder share it)."""
    return {name: walk_relative(root) for name, root in sources.items() if root is not None and not root.is_file()}


def list_inputs(sources: dict[str, Path | None], walks: Walks | None = None) -> list[InputFile]:
    """Every input file with its size and modification time now (a folder source from its walk in ``walks``
    when there, else walked now)."""
    listed = []
    for name, root in sources.items():
        if root is None:
            continue
        if root.is_file():
            files = [(root.name, os.fspath(root))]
        else:
            files = walks[name] if walks and name in walks else walk_relative(root)
        for relative, path in files:
            try:
                info = os.stat(path)
            except OSError as error:
                raise SourceError(path, f"cannot read the input file: {error.strerror}") from None
            listed.append((name, relative, path, info.st_size, info.st_mtime_ns))
    return listed


def _fingerprint(manifest: CorpusManifest, listed: list[InputFile], overridden: set[str]) -> list[dict[str, Any]]:
    """The lines of inputs.jsonl for the ``listed`` files; a file whose size or modification time is not as
    listed (or changes while it is read) is an error."""
    inputs = []
    for name, relative, path, size, modified in listed:
        digest = _sha256_unchanged(path, size, modified)
        expected = manifest.sources[name].sha256.get(relative)
        if name in overridden and expected and expected != digest:
            raise SourceError(
                path,
                f"sha256 is {digest}, expected {expected} for source {name!r}: "
                "this is not the file the corpus was built from",
            )
        inputs.append({"source": name, "file": relative, "sha256": digest, "bytes": size})
    return inputs


def _sha256_unchanged(path: str, size: int, modified: int) -> str:
    """sha256 of a file read through one descriptor, checked to have ``size`` bytes and modification time
    ``modified`` before and after it is read."""
    try:
        handle = os.open(path, os.O_RDONLY)
    except OSError as error:
        raise SourceError(path, f"{_CHANGED}: {error.strerror}") from None
    try:
        before = os.fstat(handle)
        digest = hashlib.sha256()
        read = 0
        while chunk := os.read(handle, CHUNK):
            digest.update(chunk)
            read += len(chunk)
        after = os.fstat(handle)
    finally:
        os.close(handle)
    states = {(before.st_size, before.st_mtime_ns), (after.st_size, after.st_mtime_ns), (read, modified)}
    if states != {(size, modified)}:
        raise SourceError(path, f"{_CHANGED} (its size or modification time is not what it was before the build)")
    return digest.hexdigest()


_CHANGED = "the input file changed while the release was built"


class InputHashing:
    """:func:`fingerprint_inputs` of files listed before the build, computed in a child process while the build
    runs (hashing is mostly CPU, and this process is busy building); a plain forked process and a pipe, so this
    process gains no thread before the build forks its workers.

    The guarantee: every input file is listed with its size and modification time before the build starts;
    each is hashed only if it still has them, and :meth:`write`, called once the build has read its inputs,
    fails if any file's size or modification time then differs. So the hashes are of the bytes the build read
    unless a file was rewritten keeping both its size and its modification time (to the nanosecond). The
    child writes ``inputs.jsonl`` itself and sends back only its per-source summary: this process never holds
    a line per input file (~30 MB for 100k files).
    """

    def __init__(
        self, manifest: CorpusManifest, listed: list[InputFile], overridden: set[str], invented: list[str]
    ) -> None:
        context = fork_context()
        self._pipe, theirs = context.Pipe()
        job = _HashJob(manifest, [listed], overridden, invented)  # listed is dropped once forked
        self._process = context.Process(
            target=_hash_inputs,
            args=(theirs, self._pipe, job, os.getpid()),
            name="clincorp-hash",
            daemon=True,
        )
        self._process.start()
        job.handed.clear()  # the child has its copy, this process keeps none
        theirs.close()

    def write(self, folder: Path) -> dict[str, InputSummary]:
        """Once every file is hashed and checked unchanged since it was listed: ``inputs.jsonl`` written into
        ``folder``, and its per-source summary (:func:`summarise_inputs`)."""
        try:
            try:
                self._pipe.send(folder)
            except OSError:  # the hashing stopped on an error, which the pipe holds
                pass
            summary: dict[str, InputSummary] = self._receive()
        finally:
            self.close()
        return summary

    def _receive(self) -> Any:
        try:
            outcome = self._pipe.recv()
        except EOFError:
            self.close()
            raise ClincorpError("the process hashing the input files died (out of memory?)") from None
        if isinstance(outcome, BaseException):
            self.close()
            raise outcome
        return outcome

    def close(self) -> None:
        """Stop the hashing (when the build failed first) and release the pipe."""
        if self._process.is_alive():
            self._process.terminate()
        self._process.join()
        self._pipe.close()


@dataclass
class _HashJob:
    """What the hashing process is handed: the corpus, the listed files (a list of one list, emptied in this
    process once forked), the sources given on the command line and the invented ones."""

    manifest: CorpusManifest
    handed: list[list[InputFile]]
    overridden: set[str]
    invented: list[str]


def _hash_inputs(pipe: Connection, parents: Connection, job: _HashJob, parent: int) -> None:
    """The child process: hashes the listed files, waits for the build to end, checks that no file changed,
    writes inputs.jsonl into the folder it is sent and sends its summary (or the error met). It closes its copy
    of the building process's end at once, so that process's death ends the wait."""
    parents.close()
    end_with_parent(parent)  # the pipe's end may stay open in a worker forked later
    try:
        [listed] = job.handed
        inputs = _fingerprint(job.manifest, listed, job.overridden)
        folder = pipe.recv()
        for _, _, path, size, modified in listed:
            try:
                info = os.stat(path)
            except OSError as error:
                raise SourceError(path, f"{_CHANGED}: {error.strerror}") from None
            if (info.st_size, info.st_mtime_ns) != (size, modified):
                raise SourceError(path, f"{_CHANGED} (its size or modification time differs from before the build)")
        write_inputs_file(folder, inputs)
        pipe.send(summarise_inputs(pa.Table.from_pylist(inputs, schema=INPUT_FIELDS), job.invented))
    except ClincorpError as error:
        pipe.send(error)
    except OSError as error:
        pipe.send(ClincorpError(f"cannot hash the input files: {error}"))
    except EOFError:  # the build failed and closed the pipe
        pass
    pipe.close()
