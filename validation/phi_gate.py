"""The PHI gate's walk over a release folder: every string leaf of every file (parquet columns at any depth and
their schema metadata, every JSON and JSON Lines value and key, every line of any other text file), each
finding named by file, field path, row or line, category and short hash, never by its text.

It reads each parquet batch's string leaves; the strings two RE2 passes pick
(:data:`~clinical_corpora.validation.phi.PREFILTER`, then :data:`~clinical_corpora.validation.phi.CANDIDATE`)
are matched with every category's pattern, and only a finding's rows are looked up. HTML pages and PNG figures are
read by :mod:`~clinical_corpora.validation.phi_files`.
"""

from __future__ import annotations

import bisect
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
from clinical_corpora.validation.phi import CANDIDATE, PREFILTER, Category, phi_found, short_hash
from clinical_corpora.validation.phi_files import FIGURE_KEYWORDS, page_strings, png_texts

Excluded = Callable[[str, str], bool]
"""Whether the field path (second) of the file (first) is left out: a full release's licensed text."""
BATCH_ROWS = 65_536
Lists = tuple[pa.Array, ...]
"""The list arrays a string leaf sits in, outermost first."""
ColumnLeaf = tuple[str, pa.Array, Lists]
"""A string leaf of a parquet batch: its field path, its strings and the lists they sit in."""
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
    figures: int = 0


def scan_release(folder: Path, excluded: Excluded, public: str = "") -> PhiScan:
    """Every file of ``folder``, walked in path order; ``public``: text whose matches are no finding."""
    scan = PhiScan([], public=public)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = path.relative_to(folder).as_posix()
        if path.suffix == ".png":
            scan.figures += 1
            _scan_figure(path.read_bytes(), name, scan)
            continue
        scan.files += 1
        try:
            _scan_file(path, name, excluded, scan)
        except (OSError, pa.ArrowException) as error:
            raise ClincorpError(f"{name}: cannot be read for the PHI gate ({error})") from None
    return scan


Place = Callable[[int], tuple[str, int | None]]
"""Where the string at an index of a file's strings is: its field path and its line."""


def _scan_file(path: Path, name: str, excluded: Excluded, scan: PhiScan) -> None:
    if path.suffix == ".parquet":
        _scan_parquet(path, name, excluded, scan)
        return
    text = path.read_bytes().decode("utf-8", "replace")
    if path.suffix in (".json", ".jsonl"):
        _scan_json(text, name, path.suffix == ".jsonl", scan)
        return
    if path.suffix == ".html":
        strings, left_out = page_strings(text.encode("utf-8"), name)
        scan.excluded_fields += left_out
        _scan_strings([text for text, _, _ in strings], name, lambda index: strings[index][1:], scan)
        return
    lines = text.splitlines()
    if path.suffix == ".md":
        lines = [_MARKDOWN_ESCAPE.sub(r"\1", line) for line in lines]
    _scan_strings(lines, name, lambda index: ("", index + 1), scan)


def _scan_json(text: str, name: str, lines: bool, scan: PhiScan) -> None:
    """A JSON (or JSON Lines) file's strings, keys too; their field paths worked out for a candidate only."""
    values: list[tuple[Any, int | None]] = [(_json(text, name), None)] if not lines else _json_lines(text, name)
    strings: list[str] = []
    starts: list[int] = []
    for value, _ in values:
        starts.append(len(strings))
        _json_strings(value, "", strings, None)

    def place(index: int) -> tuple[str, int | None]:
        held = bisect.bisect_right(starts, index) - 1
        paths: list[str] = []
        _json_strings(values[held][0], "", [], paths)
        return paths[index - starts[held]], values[held][1]

    _scan_strings(strings, name, place, scan)


def _scan_figure(figure: bytes, name: str, scan: PhiScan) -> None:
    """A PNG figure's text chunks: the card's own read as strings, any other a finding."""
    chunks = list(png_texts(figure, name))
    _scan_strings([text for _, text in chunks], name, lambda index: (chunks[index][0], None), scan)
    for place, text in chunks:
        if place.partition(":")[2] not in FIGURE_KEYWORDS:
            scan.findings.append(PhiFinding(name, place, None, None, 1, "figure_text", short_hash(text)))


def _json_lines(text: str, name: str) -> list[tuple[Any, int | None]]:
    """Each value of a JSON Lines file with its line: parsed in one call (as a JSON array of the lines), or line by
    line to name the first line that is not JSON."""
    numbered = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    try:
        parsed = json.loads(f"[{','.join(line for _, line in numbered)}]")
    except (json.JSONDecodeError, RecursionError):
        parsed = [_json(line, f"{name} line {number}") for number, line in numbered]
    if len(parsed) != len(numbered):  # a line holding two values, comma-separated
        parsed = [_json(line, f"{name} line {number}") for number, line in numbered]
    return [(value, number) for value, (number, _) in zip(parsed, numbered, strict=True)]


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        raise ClincorpError(f"{where}: not JSON ({error})") from None


def _json_strings(value: Any, path: str, strings: list[str], paths: list[str] | None) -> None:
    """Every string of a JSON value (keys too), in order, onto ``strings``, and their field paths onto ``paths``
    when given (``notes[].author``, ``notes[]{key}``)."""
    if isinstance(value, str):
        strings.append(value)
        if paths is not None:
            paths.append(path)
    elif isinstance(value, list):
        for item in value:
            _json_strings(item, f"{path}[]" if paths is not None else "", strings, paths)
    elif isinstance(value, dict):
        for key, item in value.items():
            strings.append(key)
            if paths is not None:
                paths.append(f"{path}{{key}}")
            if isinstance(item, str) and paths is None:  # most values: no call for them
                strings.append(item)
            elif isinstance(item, str | list | dict):
                _json_strings(item, f"{path}.{key}" if path else key, strings, paths)


def _scan_strings(strings: list[str], name: str, place: Place, scan: PhiScan) -> None:
    """A file's strings: the candidates picked in two RE2 passes, then matched and placed."""
    scan.strings += len(strings)
    texts = pa.array(strings, pa.string())
    prefiltered = pa.array(np.arange(len(strings))).filter(_matches(texts, PREFILTER))
    for index in prefiltered.filter(_matches(texts.take(prefiltered), CANDIDATE)).to_pylist():
        found = phi_found(strings[index], scan.public)
        field, line = place(index) if found else ("", None)
        for category, digest in found:
            scan.findings.append(PhiFinding(name, field, None, line, 1, category, digest))


def _scan_parquet(path: Path, name: str, excluded: Excluded, scan: PhiScan) -> None:
    strings = [column.path for column in pq.ParquetFile(path).schema if column.logical_type.type == "STRING"]
    parquet = pq.ParquetFile(path, read_dictionary=strings)
    metadata = (parquet.schema_arrow.metadata or {}).items()
    keys = [f"metadata:{key.decode('utf-8', 'replace')}" for key, _ in metadata]
    values = [value.decode("utf-8", "replace") for _, value in metadata]
    _scan_strings(values, name, lambda index: (keys[index], None), scan)
    paths = {field.name: list(_string_paths(field.type, field.name)) for field in parquet.schema_arrow}
    unread = {column for column, leaves in paths.items() if leaves and all(excluded(name, p) for p in leaves)}
    columns = [column for column in parquet.schema_arrow.names if column not in unread]
    skipped = {p for column in unread for p in paths[column]} if parquet.metadata.num_rows else set()
    first = 0
    for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns) if columns else ():
        leaves: list[ColumnLeaf] = []
        for field_name, column in zip(batch.schema.names, batch.columns, strict=True):
            for field, strings, lists in _leaves(column, field_name, ()):
                if excluded(name, field):
                    skipped.add(field)
                else:
                    leaves.append((field, strings, lists))
        _scan_batch(leaves, first, name, scan)
        first += batch.num_rows
    scan.excluded_fields += len(skipped)


def _string_paths(kind: pa.DataType, path: str) -> Iterator[str]:
    """The path of each string leaf of a column of type ``kind`` (as :func:`_leaves` names them): a column whose
    every leaf is excluded is not read at all."""
    if _is_string(kind):
        yield path
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        yield from _string_paths(kind.value_type, f"{path}[]")
    elif pa.types.is_struct(kind):
        for index in range(kind.num_fields):
            yield from _string_paths(kind.field(index).type, f"{path}.{kind.field(index).name}")


def _leaves(array: pa.Array, path: str, lists: Lists) -> Iterator[tuple[str, pa.Array, Lists]]:
    """Each string leaf of ``array`` with its path and the lists it sits in (outermost first)."""
    kind = array.type
    if _is_string(kind):
        yield path, array, lists
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        yield from _leaves(array.flatten(), f"{path}[]", (*lists, array))
    elif pa.types.is_struct(kind):
        for index in range(kind.num_fields):
            yield from _leaves(array.field(index), f"{path}.{kind.field(index).name}", lists)


def _is_string(kind: pa.DataType) -> bool:
    """A string type, or a dictionary of strings (as parquet string columns are read: each distinct string once)."""
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def _distinct(strings: pa.Array) -> pa.Array:
    """The distinct strings of a leaf (a dictionary's own values)."""
    distinct = strings.dictionary if pa.types.is_dictionary(strings.type) else pc.unique(strings)
    return distinct.cast(pa.large_string())


def _holding(strings: pa.Array, value: str) -> np.ndarray:
    """The indexes of the strings equal to ``value``."""
    if pa.types.is_dictionary(strings.type):
        codes = np.flatnonzero(_true(pc.equal(strings.dictionary, value)))
        return np.flatnonzero(_true(pc.is_in(strings.indices, value_set=pa.array(codes, strings.indices.type))))
    return np.flatnonzero(_true(pc.equal(strings, value)))


def _true(mask: pa.Array) -> np.ndarray:
    """A boolean mask as numpy (a null: false)."""
    return pc.fill_null(mask, False).to_numpy(zero_copy_only=False)


def _matches(strings: pa.Array, pattern: str) -> pa.Array:
    """Whether the RE2 ``pattern`` matches each string (a null: no)."""
    return pc.fill_null(pc.match_substring_regex(strings, pattern), False)


def _rows(held: np.ndarray, lists: Lists) -> np.ndarray:
    """The rows of the batch holding the leaf values ``held`` (their indexes), through the lists they sit in."""
    for array in reversed(lists):
        held = pc.list_parent_indices(array).to_numpy()[held]
    return np.unique(held)


def _scan_batch(leaves: list[ColumnLeaf], first: int, name: str, scan: PhiScan) -> None:
    """The string leaves of one batch: the distinct strings of every leaf picked by the two RE2 passes at once (a
    pattern is compiled once a batch, not once a leaf), each candidate matched; a finding's rows looked up only
    when there is one."""
    scan.strings += sum(len(strings) for _, strings, _ in leaves)
    distinct = [_distinct(strings) for _, strings, _ in leaves]
    if not distinct:
        return
    values = pa.concat_arrays(distinct)
    owners = np.repeat(np.arange(len(leaves)), [len(values) for values in distinct])
    prefiltered = pa.array(np.arange(len(values))).filter(_matches(values, PREFILTER))
    for index in prefiltered.filter(_matches(values.take(prefiltered), CANDIDATE)).to_pylist():
        field, strings, lists = leaves[owners[index]]
        value = values[index].as_py()
        found = phi_found(value, scan.public)
        if not found:
            continue
        held_rows = _rows(_holding(strings, value), lists)
        if not len(held_rows):  # a value of the row group's dictionary held by rows of another batch
            continue
        for category, digest in found:
            scan.findings.append(
                PhiFinding(name, field, int(held_rows[0]) + first, None, len(held_rows), category, digest)
            )
