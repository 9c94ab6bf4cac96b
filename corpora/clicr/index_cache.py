"""Where CliCR's UMLS matcher index is kept between runs: built once in a child process, cached on disk.

The cache file is named after both RRF files' SHA-256 and the dictionary's rules
(:mod:`clinical_corpora.corpora.clicr.umls_index`), so the next run with the same files loads it; it lives
outside the release (``$CLINCORP_CACHE``, else ``~/.cache/clinical-corpora``), is checksummed, and a damaged
one is rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path

import numpy as np

from clinical_corpora.builders.contract.text_units import TOKEN_PATTERN
from clinical_corpora.builders.sources.umls import locate_rrf_files
from clinical_corpora.core.processes import child_process
from clinical_corpora.corpora.clicr.umls_index import (
    ENGLISH_STOPWORDS,
    FUNCTION_WORDS,
    INDEX_VERSION,
    SEMANTIC_TYPE_CATEGORIES,
    ConceptTable,
    UmlsIndex,
    build_index,
    rrf_sha256,
)

CACHE_ENVIRONMENT = "CLINCORP_CACHE"


def default_cache_dir() -> Path:
    """Where the matcher index is cached: ``$CLINCORP_CACHE`` or ``~/.cache/clinical-corpora``."""
    configured = os.environ.get(CACHE_ENVIRONMENT)
    return Path(configured) if configured else Path.home() / ".cache" / "clinical-corpora"


def load_index(meta: Path) -> UmlsIndex:
    """The matcher index of a UMLS ``META`` folder (cached)."""
    mrconso, mrsty = locate_rrf_files(meta)
    return load_or_build_index(mrconso, mrsty, default_cache_dir())


def load_or_build_index(mrconso: str | Path, mrsty: str | Path, cache_dir: str | Path) -> UmlsIndex:
    """The index for these RRF files: loaded from ``cache_dir`` if built before, else built and cached.

    The build runs in a child process, so its peak memory leaves with it;
    the caller then loads the cache. A cache file that fails its checksum (truncated, damaged) is said so
    on stderr and rebuilt."""
    rules = (INDEX_VERSION, SEMANTIC_TYPE_CATEGORIES, sorted(FUNCTION_WORDS), sorted(ENGLISH_STOPWORDS))
    hashes = rrf_sha256(mrconso, mrsty)  # hashed once: MRCONSO.RRF is gigabytes
    fingerprint = hashlib.sha256(
        f"{rules}|{TOKEN_PATTERN.pattern}|{hashes['MRCONSO.RRF']}|{hashes['MRSTY.RRF']}".encode()
    ).hexdigest()
    cached = Path(cache_dir) / f"umls-index-{fingerprint[:24]}{CACHE_SUFFIX}"
    if cached.exists():
        try:
            return read_index(cached)
        except CorruptIndexCache as error:
            print(f"{cached}: {error}; building the matcher index again", file=sys.stderr)
    with child_process(f"building the UMLS matcher index from {mrconso}") as start:
        start(_build_and_write, str(mrconso), str(mrsty), hashes, cached)()
    return read_index(cached)


CACHE_SUFFIX = ".index"
_CACHE_MAGIC = b"clinical-corpora umls index v1\n"


class CorruptIndexCache(Exception):
    """A cached index file is not what :func:`write_index` wrote (truncated, damaged)."""


def _build_and_write(mrconso: str, mrsty: str, hashes: dict[str, str], cached: Path) -> None:
    write_index(build_index(mrconso, mrsty, source_sha256=hashes), cached)


def write_index(index: UmlsIndex, path: Path) -> None:
    """Write ``index`` to ``path`` atomically (a partial file renamed when complete): the magic line, the
    SHA-256 of the rest, then each part after its length: the pickled digests and untyped CUIs, the keys as
    one UTF-8 text, the values as int64, the concept table's arrays and names."""
    concepts = index.concepts
    parts = [
        pickle.dumps((index.source_sha256, index.untyped), protocol=pickle.HIGHEST_PROTOCOL),
        "\n".join(index.entries).encode("utf-8"),  # a key never holds a line break (tokens hold no space)
        np.fromiter(index.entries.values(), dtype=np.int64, count=len(index.entries)).tobytes(),
        concepts.numbers.tobytes(),
        concepts.ranks.tobytes(),
        concepts.name_offsets.tobytes(),
        concepts.names,
    ]
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("wb", dir=path.parent, delete=False, suffix=".partial") as partial:
        partial.write(_CACHE_MAGIC + digest.digest())
        for part in parts:
            partial.write(len(part).to_bytes(8, "little"))
            partial.write(part)
    os.replace(partial.name, path)


def read_index(path: Path) -> UmlsIndex:
    """The index :func:`write_index` wrote; :class:`CorruptIndexCache` when the file does not check out.

    The checksum is verified in a first streaming pass, then the parts are read one at a time, so the
    file's bytes are never all in memory beside the index."""
    with open(path, "rb") as handle:
        if handle.read(len(_CACHE_MAGIC)) != _CACHE_MAGIC:
            raise CorruptIndexCache("the cached matcher index does not start as one (damaged)")
        expected = handle.read(32)
        start = handle.tell()
        if hashlib.file_digest(handle, "sha256").digest() != expected:
            raise CorruptIndexCache("the cached matcher index is truncated or damaged (its checksum does not match)")
        handle.seek(start)

        def part() -> bytes:
            return handle.read(int.from_bytes(handle.read(8), "little"))

        source_sha256, untyped = pickle.loads(part())
        keys = part().decode("utf-8")
        entries = dict(
            zip(keys.split("\n") if keys else [], np.frombuffer(part(), dtype=np.int64).tolist(), strict=True)
        )
        del keys
        numbers, ranks, offsets = (np.frombuffer(part(), dtype=kind) for kind in (np.int64, np.int8, np.int64))
        concepts = ConceptTable.from_arrays(numbers, ranks, offsets, part())
    return UmlsIndex(entries, concepts, source_sha256, untyped)
