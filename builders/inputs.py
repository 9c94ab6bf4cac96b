"""Resolve a corpus's named sources to paths, and fingerprint every input file."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.core.manifest import CorpusManifest

CHUNK = 1 << 20


def resolve_sources(manifest: CorpusManifest, overrides: dict[str, Path]) -> dict[str, Path | None]:
    """Each source's path: the embedded sample, or the maintainer's inputs; None for a source not read.

    Without overrides every source with a default reads the sample. With overrides, optional sources
    not given are not read (a sample annotator or gold file never meets real inputs), required ones not
    given read the sample, and a given source's ``replaces`` are not read.
    """
    unknown = sorted(set(overrides) - set(manifest.sources))
    if unknown:
        raise ClincorpError(
            f"{manifest.name} has no source {', '.join(unknown)}; its sources are {', '.join(manifest.sources)}"
        )
    replaced = {other for name in overrides for other in manifest.sources[name].replaces} - set(overrides)
    resolved: dict[str, Path | None] = {}
    for name, spec in manifest.sources.items():
        if name in replaced or (name not in overrides and (spec.path is None or (overrides and not spec.required))):
            resolved[name] = None
            continue
        path = overrides[name] if name in overrides else manifest.folder / str(spec.path)
        exists = path.is_file() if spec.kind == "file" else path.is_dir()
        if not exists and (spec.required or name in overrides):
            raise SourceError(path, f"source {name!r} needs a {spec.kind} here. {spec.description}")
        resolved[name] = path if exists else None
    return resolved


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def fingerprint_inputs(
    manifest: CorpusManifest, sources: dict[str, Path | None], overridden: set[str]
) -> list[dict[str, Any]]:
    """sha256 of every input file, named relative to its source; expected hashes checked for real inputs."""
    inputs = []
    for name, root in sources.items():
        if root is None:
            continue
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            relative = path.name if root.is_file() else path.relative_to(root).as_posix()
            digest = sha256_file(path)
            expected = manifest.sources[name].sha256.get(relative)
            if name in overridden and expected and expected != digest:
                raise SourceError(
                    path,
                    f"sha256 is {digest}, expected {expected} for source {name!r}: "
                    "this is not the file the corpus was built from",
                )
            inputs.append({"source": name, "file": relative, "sha256": digest, "bytes": path.stat().st_size})
    return inputs
