"""Forgeries of a release folder, for tests/test_forged_releases.py: each edits a copy of a sample release in
place as a forger would, recording the sha256 (and rows) of every file it changes in manifest.json so that only
the content checks can catch it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

Forgery = Callable[[Path], None]
"""Edits a release folder in place (its parent is the download folder, the only other place it may touch)."""

MANIFEST = "manifest.json"
JSON_VALUES: dict[str, Any] = {
    "null": None,
    "list": [],
    "object": {},
    "huge": 10**30,
    "negative": -1,
    "nan": float("nan"),
    "inf": float("inf"),
    "true": True,
    "long": "x" * 100_000,
    "control": "\x00\x1b[31m\u202e\ufeff",
    "dotdot": "../../outside",
    "absolute": "/etc/hostname",
    "windows": "C:\\Windows\\win.ini",
    "nul": "data/a\x00b.parquet",
    "half": 0.5,
}
"""Values of the wrong JSON type, size or form, set at every key of a manifest (json.dumps writes NaN and
Infinity as such, as a careless writer does)."""


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def write_json(path: Path, payload: Any) -> None:
    path.write_text(json.dumps(payload, indent=2), encoding="utf-8")


def rehash(release: Path, name: str) -> None:
    """Record the current sha256 (and a parquet file's rows) of ``release/name`` in manifest.json, listing the
    file when it was not."""
    manifest = read_json(release / MANIFEST)
    path = release / name
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "0" * 64
    entry = next((entry for entry in manifest["outputs"] if entry["file"] == name), None)
    if entry is None:
        entry = {"file": name}
        manifest["outputs"].append(entry)
    entry["sha256"] = digest
    if name.endswith(".parquet"):
        try:
            entry["rows"] = pq.ParquetFile(path).metadata.num_rows
        except (OSError, pa.ArrowException):
            entry.setdefault("rows", 1)
    write_json(release / MANIFEST, manifest)


def first_shard(release: Path) -> str:
    """The first data shard manifest.json lists (of the corpus's main config)."""
    return next(e["file"] for e in read_json(release / MANIFEST)["outputs"] if e["file"].startswith("data/"))


def key_paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 3) -> Iterator[tuple[Any, ...]]:
    """Every key of a JSON value down to ``depth`` (a list's first item only)."""
    items = value.items() if isinstance(value, dict) else enumerate(value[:1]) if isinstance(value, list) else ()
    for key, item in items:
        yield (*prefix, key)
        if depth > 1:
            yield from key_paths(item, (*prefix, key), depth - 1)


def set_at(payload: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        payload = payload[key]
    payload[path[-1]] = value


def json_value_at(name: str, path: tuple[Any, ...], value: Any) -> Forgery:
    """The JSON file ``name`` with ``value`` at ``path`` (rehashed when the manifest lists it)."""

    def forge(release: Path) -> None:
        payload = read_json(release / name)
        set_at(payload, path, value)
        write_json(release / name, payload)
        if name != MANIFEST:
            rehash(release, name)

    return forge


def raw_bytes(name: str, make: Callable[[bytes], bytes]) -> Forgery:
    """The file ``name`` replaced by ``make(its bytes)`` (rehashed unless it is manifest.json)."""

    def forge(release: Path) -> None:
        path = release / name
        path.write_bytes(make(path.read_bytes()))
        if name != MANIFEST:
            rehash(release, name)

    return forge


def duplicated_key(data: bytes) -> bytes:
    """The manifest with its ``corpus`` key given twice, the second naming another corpus."""
    text = data.decode()
    return text.replace("{", '{\n  "corpus": "clicr",', 1).encode()


def deep_nesting(data: bytes) -> bytes:
    return b"[" * 100_000 + b"]" * 100_000


TEXT_FORGERIES: dict[str, Callable[[bytes], bytes]] = {
    "bom": lambda data: b"\xef\xbb\xbf" + data,
    "trailing-garbage": lambda data: data + b"\n}garbage",
    "duplicated-key": duplicated_key,
    "deep-nesting": deep_nesting,
    "utf16": lambda data: data.decode().encode("utf-16"),
    "empty": lambda data: b"",
    "not-json": lambda data: b"corpus: sdoh\n",
}


# ---- parquet ------------------------------------------------------------------------------------------------


def rewrite_rows(name: str, change: Callable[[list[dict[str, Any]]], None], keep_schema: bool = True) -> Forgery:
    """The parquet file ``name`` with its rows changed by ``change`` (written with its schema when the rows
    still fit it, else with the schema pyarrow infers), rehashed."""

    def forge(release: Path) -> None:
        path = release / name
        table = pq.read_table(path)
        rows = table.to_pylist()
        change(rows)
        try:
            forged = pa.Table.from_pylist(rows, schema=table.schema if keep_schema else None)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            forged = pa.Table.from_pylist(rows)
        pq.write_table(forged, path)
        rehash(release, name)

    return forge


def rewrite_table(name: str, change: Callable[[pa.Table], pa.Table]) -> Forgery:
    def forge(release: Path) -> None:
        path = release / name
        pq.write_table(change(pq.read_table(path)), path)
        rehash(release, name)

    return forge


def drop_last_column(table: pa.Table) -> pa.Table:
    return table.drop_columns([table.column_names[-1]])


def extra_column(table: pa.Table) -> pa.Table:
    return table.append_column("planted", pa.array(["Lives with his wife."] * table.num_rows))


def first_column_as_text(table: pa.Table) -> pa.Table:
    """The first column's values as their JSON text (a type changed, the values kept)."""
    texts = [json.dumps(value, default=str) for value in table.column(0).to_pylist()]
    return table.set_column(0, table.column_names[0], pa.array(texts))


def first_dicts(value: Any, has: Callable[[dict[str, Any]], bool]) -> Iterator[dict[str, Any]]:
    """Every dict nested in ``value`` for which ``has`` holds, depth first."""
    if isinstance(value, dict):
        if has(value):
            yield value
        for item in value.values():
            yield from first_dicts(item, has)
    elif isinstance(value, list):
        for item in value:
            yield from first_dicts(item, has)


def with_offsets(item: dict[str, Any]) -> bool:
    return isinstance(item.get("start"), int) and isinstance(item.get("end"), int)


def set_offsets(start: int | None, end: int | None) -> Callable[[list[dict[str, Any]]], None]:
    """The first span (a dict with int ``start`` and ``end``) given these offsets (None keeps one)."""

    def change(rows: list[dict[str, Any]]) -> None:
        span = next(first_dicts(rows, with_offsets))
        span["start"] = span["start"] if start is None else start
        span["end"] = span["end"] if end is None else end

    return change


def rename_nested_field(rows: list[dict[str, Any]]) -> None:
    """The first field of the first nested record renamed, in every row (so the schema changes)."""
    nested = next(first_dicts([row[key] for row in rows for key in row], lambda item: bool(item)))
    old = next(iter(nested))
    for item in first_dicts([row[key] for row in rows for key in row], lambda item: old in item):
        item[f"{old}_renamed"] = item.pop(old)


def label_out_of_range(rows: list[dict[str, Any]]) -> None:
    """Every small int in the first row raised past any label set (ClassLabel ids are small ints)."""

    def raise_ints(value: Any) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and 0 <= value < 64:
            return 10_000
        if isinstance(value, dict):
            return {key: raise_ints(item) for key, item in value.items()}
        if isinstance(value, list):
            return [raise_ints(item) for item in value]
        return value

    rows[0] = raise_ints(rows[0])


def null_first_field(rows: list[dict[str, Any]]) -> None:
    rows[0][next(iter(rows[0]))] = None


HOSTILE_IDS = {
    "id-climbing-out": "../../../escaped",
    "id-absolute": "/tmp/clincorp-escaped",
    "id-with-slashes": "a/b/c",
    "id-with-markup": "<script>alert(1)</script>",
    "id-with-nul": "a\x00b",
    "id-with-line-break": "a\nb",
    "id-too-long": "x" * 5000,
}
"""A record id no record model of ours refuses (ids take any characters but white space, up to 128; these are
written to the shard as they are), which exports and baselines turn into file names."""


def hostile_id(value: str) -> Callable[[list[dict[str, Any]]], None]:
    def change(rows: list[dict[str, Any]]) -> None:
        rows[0][next(iter(rows[0]))] = value

    return change


def null_nested_field(rows: list[dict[str, Any]]) -> None:
    """The first value inside the first row's first list of structs (a span's start, a report's row id) set to
    null: the record model requires it, and the readers of every command index by it."""

    def walk(value: Any, depth: int) -> bool:
        if isinstance(value, list):
            return any(walk(item, depth + 1) for item in value[:1])
        if not isinstance(value, dict):
            return False
        for key, item in value.items():
            if depth >= 2 and item is not None and not isinstance(item, dict | list):
                value[key] = None
                return True
            if walk(item, depth + 1):
                return True
        return False

    walk(rows[0], 0)


def empty_row_group(name: str) -> Forgery:
    """The parquet file with a second row group of 0 rows."""

    def forge(release: Path) -> None:
        path = release / name
        table = pq.read_table(path)
        with pq.ParquetWriter(path, table.schema) as writer:
            writer.write_table(table)
            writer.write_table(table.slice(0, 0))
        rehash(release, name)

    return forge


def no_rows(name: str) -> Forgery:
    return rewrite_table(name, lambda table: table.slice(0, 0))


def as_csv(name: str) -> Forgery:
    """The parquet file replaced by a CSV of the same name."""
    return raw_bytes(name, lambda data: b"id,text\n1,Lives with his wife.\n")


def parquet_forgeries(name: str) -> dict[str, Forgery]:
    """Forged contents of the parquet file ``name``, each rehashed."""
    return {
        "column-missing": rewrite_table(name, drop_last_column),
        "extra-column": rewrite_table(name, extra_column),
        "type-changed": rewrite_table(name, first_column_as_text),
        "nested-field-renamed": rewrite_rows(name, rename_nested_field, keep_schema=False),
        "offsets-past-end": rewrite_rows(name, set_offsets(None, 2**31 - 1)),
        "negative-offsets": rewrite_rows(name, set_offsets(-7, None)),
        "start-after-end": rewrite_rows(name, set_offsets(40, 3)),
        "offsets-over-int32": rewrite_rows(name, set_offsets(2**40, 2**40 + 1)),
        "label-out-of-range": rewrite_rows(name, label_out_of_range),
        "null-first-field": rewrite_rows(name, null_first_field),
        "empty-row-group": empty_row_group(name),
        "no-rows": no_rows(name),
        "zero-bytes": raw_bytes(name, lambda data: b""),
        "csv": as_csv(name),
    }


# ---- recipes of a text-free release -------------------------------------------------------------------------


def first_recipe(change: Callable[[dict[str, Any]], None]) -> Forgery:
    """The first recipe segment (``document``, ``start``, ``end``, ``literal``) of the first shard changed."""

    def forge(release: Path) -> None:
        def edit(rows: list[dict[str, Any]]) -> None:
            change(next(first_dicts(rows, lambda item: "document" in item and "literal" in item)))

        rewrite_rows(first_shard(release), edit)(release)

    return forge


RECIPE_FORGERIES: dict[str, Forgery] = {
    "recipe-document-1e9": first_recipe(lambda segment: segment.update(document=10**9)),
    "recipe-negative-offsets": first_recipe(lambda segment: segment.update(start=-40, end=-2)),
    "recipe-end-past-note": first_recipe(lambda segment: segment.update(end=2**31 - 1)),
    "recipe-literal-1mb": first_recipe(lambda segment: segment.update(document=-1, literal="x" * 2**20)),
}


# ---- the file system --------------------------------------------------------------------------------------------


def file_as_folder(name: str) -> Forgery:
    """The listed file ``name`` replaced by a folder of that name (holding a file)."""

    def forge(release: Path) -> None:
        path = release / name
        path.unlink()
        path.mkdir()
        (path / "inside.txt").write_text("a folder where a file was\n", encoding="utf-8")

    return forge


def hard_link_outside(name: str) -> Forgery:
    """``name`` replaced by a hard link to a file outside the release (its sha256 recorded)."""

    def forge(release: Path) -> None:
        outside = release.parent / "outside.txt"
        outside.write_text("a file of the user's, outside the release\n", encoding="utf-8")
        (release / name).unlink()
        os.link(outside, release / name)
        rehash(release, name)

    return forge


SPARSE_SIZE = 200 * 2**20


@cache
def zeros_sha256(size: int) -> str:
    digest = hashlib.sha256()
    block = bytes(2**20)
    for _ in range(size // len(block)):
        digest.update(block)
    return digest.hexdigest()


def sparse_listed(name: str) -> Forgery:
    """``name`` a sparse file of 200 MB of zeros, listed with its sha256 (and one row when a parquet file)."""

    def forge(release: Path) -> None:
        path = release / name
        path.unlink(missing_ok=True)
        with path.open("wb") as handle:
            handle.truncate(SPARSE_SIZE)
        manifest = read_json(release / MANIFEST)
        entry = next((e for e in manifest["outputs"] if e["file"] == name), None)
        if entry is None:
            entry = {"file": name}
            manifest["outputs"].append(entry)
        entry["sha256"] = zeros_sha256(SPARSE_SIZE)
        if name.endswith(".parquet"):
            entry["rows"] = 1
        write_json(release / MANIFEST, manifest)

    return forge


def copy_release(release: Path, into: Path) -> Path:
    """A copy of ``release`` in ``into/<corpus>/<version>``, as downloaded."""
    return Path(shutil.copytree(release, into / release.parent.name / release.name))


def undeclared(shard: str, name: str) -> Forgery:
    """A copy of ``shard`` as ``name`` (a config or split the corpus does not declare), listed with its sha256."""

    def forge(release: Path) -> None:
        (release / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(release / shard, release / name)
        rehash(release, name)

    return forge
