"""The PHI gate's walk over a release folder: every string leaf of every file (parquet columns at any depth and
their schema metadata, every JSON and JSON Lines value and key, every line of any other text file), each
finding named by file, field path, row or line, category and short hash, never by its text.

It reads each parquet batch's string leaves; the strings two RE2 passes pick
(:data:`~clinical_corpora.validation.phi.PREFILTER`, then :data:`~clinical_corpora.validation.phi.CANDIDATE`)
are matched with every category's pattern, and only a finding's rows are looked up. PNG figures hold pixels:
they are counted as not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.validation.phi import CANDIDATE, PREFILTER, Category, phi_found

Excluded = Callable[[str, str], bool]
"""Whether the field path (second) of the file (first) is left out: a full release's licensed text."""
NOT_READ = (".png",)
BATCH_ROWS = 65_536
Lists = tuple[pa.Array, ...]
"""The list arrays a string leaf sits in, outermost first."""
_MARKDOWN_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+.!|-])")


@dataclass(frozen=True)
class PhiFinding:
    """Where a finding is: the file, its field path (``notes[].author``; a JSON path; empty for a line of
    text), the first row (parquet) or line (JSON Lines, text) holding it, how many rows do, and its category
    and short hash."""

    file: str
    field: str
    row: int | None
    line: int | None
    rows: int
    category: Category
    hash: str

    def place(self) -> str:
        """Where to look, without the text: ``data/x.parquet notes[].author row 3``."""
        where = f" row {self.row}" if self.row is not None else f" line {self.line}" if self.line is not None else ""
        field = f" {self.field}" if self.field else ""
        return f"{self.file}{field}{where}"


@dataclass
class PhiScan:
    """What the walk found and read."""

    findings: list[PhiFinding]
    public: str = ""
    files: int = 0
    strings: int = 0
    excluded_fields: int = 0
    not_read: int = 0


def scan_release(folder: Path, excluded: Excluded, public: str = "") -> PhiScan:
    """Every file of ``folder``, walked in path order; ``public``: text whose matches are no finding."""
    scan = PhiScan([], public=public)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = path.relative_to(folder).as_posix()
        if path.suffix in NOT_READ:
            scan.not_read += 1
            continue
        scan.files += 1
        try:
            _scan_file(path, name, excluded, scan)
        except (OSError, pa.ArrowException) as error:
            raise ClincorpError(f"{name}: cannot be read for the PHI gate ({error})") from None
    return scan


Leaf = tuple[str, str, int | None]
"""A string of a JSON or text file, its field path and its line."""


def _scan_file(path: Path, name: str, excluded: Excluded, scan: PhiScan) -> None:
    if path.suffix == ".parquet":
        _scan_parquet(path, name, excluded, scan)
        return
    text = path.read_bytes().decode("utf-8", "replace")
    leaves: list[Leaf] = []
    if path.suffix == ".json":
        _json_leaves(_json(text, name), "", None, leaves)
    elif path.suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                _json_leaves(_json(line, f"{name} line {number}"), "", number, leaves)
    else:
        markdown = path.suffix == ".md"
        for number, line in enumerate(text.splitlines(), 1):
            leaves.append((_MARKDOWN_ESCAPE.sub(r"\1", line) if markdown else line, "", number))
    _scan_leaves(leaves, name, scan)


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        raise ClincorpError(f"{where}: not JSON ({error})") from None


def _json_leaves(value: Any, path: str, line: int | None, leaves: list[Leaf]) -> None:
    """Every string of a JSON value (keys too), in order, onto ``leaves``."""
    if isinstance(value, str):
        leaves.append((value, path, line))
    elif isinstance(value, list):
        for item in value:
            _json_leaves(item, f"{path}[]", line, leaves)
    elif isinstance(value, dict):
        for key, item in value.items():
            leaves.append((key, f"{path}{{key}}", line))
            _json_leaves(item, f"{path}.{key}" if path else key, line, leaves)


def _scan_leaves(leaves: list[Leaf], name: str, scan: PhiScan) -> None:
    """A file's strings: the candidates picked in one RE2 pass, then matched."""
    scan.strings += len(leaves)
    texts = pa.array([text for text, _, _ in leaves], pa.string())
    prefiltered = pa.array(np.arange(len(leaves))).filter(_matches(texts, PREFILTER))
    for index in prefiltered.filter(_matches(texts.take(prefiltered), CANDIDATE)).to_pylist():
        text, field, line = leaves[index]
        for category, digest in phi_found(text, scan.public):
            scan.findings.append(PhiFinding(name, field, None, line, 1, category, digest))


def _scan_parquet(path: Path, name: str, excluded: Excluded, scan: PhiScan) -> None:
    parquet = pq.ParquetFile(path)
    metadata = (parquet.schema_arrow.metadata or {}).items()
    _scan_leaves(
        [
            (value.decode("utf-8", "replace"), f"metadata:{key.decode('utf-8', 'replace')}", None)
            for key, value in metadata
        ],
        name,
        scan,
    )
    paths = {field.name: list(_string_paths(field.type, field.name)) for field in parquet.schema_arrow}
    unread = {column for column, leaves in paths.items() if leaves and all(excluded(name, p) for p in leaves)}
    columns = [column for column in parquet.schema_arrow.names if column not in unread]
    skipped = {p for column in unread for p in paths[column]} if parquet.metadata.num_rows else set()
    first = 0
    for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns) if columns else ():
        for field_name, column in zip(batch.schema.names, batch.columns, strict=True):
            for field, strings, lists in _leaves(column, field_name, ()):
                if excluded(name, field):
                    skipped.add(field)
                    continue
                _scan_column(strings, lists, first, (name, field), scan)
        first += batch.num_rows
    scan.excluded_fields += len(skipped)


def _string_paths(kind: pa.DataType, path: str) -> Iterator[str]:
    """The path of each string leaf of a column of type ``kind`` (as :func:`_leaves` names them): a column whose
    every leaf is excluded is not read at all."""
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        yield path
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        yield from _string_paths(kind.value_type, f"{path}[]")
    elif pa.types.is_struct(kind):
        for index in range(kind.num_fields):
            yield from _string_paths(kind.field(index).type, f"{path}.{kind.field(index).name}")


def _leaves(array: pa.Array, path: str, lists: Lists) -> Iterator[tuple[str, pa.Array, Lists]]:
    """Each string leaf of ``array`` with its path and the lists it sits in (outermost first)."""
    kind = array.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        yield path, array, lists
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        yield from _leaves(array.flatten(), f"{path}[]", (*lists, array))
    elif pa.types.is_struct(kind):
        for index in range(kind.num_fields):
            yield from _leaves(array.field(index), f"{path}.{kind.field(index).name}", lists)


def _matches(strings: pa.Array, pattern: str) -> pa.Array:
    """Whether the RE2 ``pattern`` matches each string (a null: no)."""
    return pc.fill_null(pc.match_substring_regex(strings, pattern), False)


def _picked(strings: pa.Array, pattern: str) -> pa.Array:
    """The strings the RE2 ``pattern`` matches."""
    return strings.filter(_matches(strings, pattern))


def _rows(held: np.ndarray, lists: Lists) -> np.ndarray:
    """The rows of the batch holding the leaf values ``held`` (their indexes), through the lists they sit in."""
    for array in reversed(lists):
        held = pc.list_parent_indices(array).to_numpy()[held]
    return np.unique(held)


def _scan_column(strings: pa.Array, lists: Lists, first: int, where: tuple[str, str], scan: PhiScan) -> None:
    """One leaf of one batch: its candidates picked in one RE2 pass, each distinct one matched; a finding's rows
    looked up only when there is one."""
    scan.strings += len(strings)
    candidates = pc.unique(_picked(_picked(strings, PREFILTER), CANDIDATE))
    for value in candidates.to_pylist():
        found = phi_found(value, scan.public)
        if not found:
            continue
        held_rows = _rows(
            np.flatnonzero(pc.fill_null(pc.equal(strings, value), False).to_numpy(zero_copy_only=False)), lists
        )
        for category, digest in found:
            scan.findings.append(
                PhiFinding(where[0], where[1], int(held_rows[0]) + first, None, len(held_rows), category, digest)
            )
