"""Compare two releases of one corpus record by record, streaming: the changes, one at a time.

Per config, the ids of both releases are read (one column each) and matched in Arrow; then the new release is
read a row group at a time and each group's matched old records are taken from the old release's row groups (a
few kept at once: releases list their records in document order, so the old release is read about once).
Matched records are compared column-wise (``columns.rows_differ``) and only the fields that differ become
Python values, to say what changed (``fields.record_changes``). Memory is bounded by the ids and a few row
groups, whatever the size of the releases.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from clinical_corpora.builders.contract.release_view import parquet_file, read_row_group
from clinical_corpora.builders.diff.columns import rows_differ
from clinical_corpora.builders.diff.fields import record_changes
from clinical_corpora.builders.diff.opened import OpenedRelease
from clinical_corpora.builders.diff.shape import Node, Shape, common_shape

CACHED_ROW_GROUPS = 2
MAX_SLICES = 64
"""Records wanted from a row group in at most this many runs are sliced out of it; more are taken (copied)."""

RECORD = ""
"""The path of a change to a whole record (added, removed, moved to another split)."""


@dataclass(frozen=True, order=True)
class Change:
    """One change between two releases: in ``config``/``split``, record ``record``, field ``path``."""

    config: str
    split: str
    record: str
    path: str
    kind: str
    item: str = ""
    detail: str = ""
    old: Any = field(default=None, compare=False)
    """The value before, as JSON values (a record's split, for a record added, removed or moved)."""
    new: Any = field(default=None, compare=False)


@dataclass
class ConfigComparison:
    """One config of the two releases: its rows per split on each side, what its records share, its changes."""

    config: str
    old_rows: dict[str, int]
    new_rows: dict[str, int]
    shape: Shape | None
    changes: Iterator[Change]


def compare(old: OpenedRelease, new: OpenedRelease) -> Iterator[ConfigComparison]:
    """Every config of either release, in name order; a config only one side holds is all added or removed."""
    for config in sorted(set(old.view.configs()) | set(new.view.configs())):
        old_rows, new_rows = _rows(old, config), _rows(new, config)
        if not (old_rows and new_rows):
            yield ConfigComparison(config, old_rows, new_rows, None, _whole_config(old, new, config))
            continue
        old.check_config(config)
        new.check_config(config)
        shape = common_shape(old.view.features(config), new.view.features(config))
        yield ConfigComparison(config, old_rows, new_rows, shape, _config_changes(old, new, config, shape))


def _rows(release: OpenedRelease, config: str) -> dict[str, int]:
    view = release.view
    if config not in view.configs():
        return {}
    return {split: view.split_rows(config, split) for split in view.splits(config)}


def _whole_config(old: OpenedRelease, new: OpenedRelease, config: str) -> Iterator[Change]:
    """Every record of a config one release lacks, as added (or removed)."""
    side, kind = (new, "added") if config in new.view.configs() else (old, "removed")
    ids, splits = side.ids(config)
    for record, split in zip(ids.to_pylist(), splits.to_pylist(), strict=True):
        yield Change(config, split, record, RECORD, kind, **{"new" if kind == "added" else "old": split})


def _config_changes(old: OpenedRelease, new: OpenedRelease, config: str, shape: Shape) -> Iterator[Change]:
    columns = list(shape.fields)
    read = columns or [new.id_field(config)]  # a batch needs a column to count its rows
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="clincorp-diff-read") as reader:
        rows = _RowGroups(old, config, columns, reader)  # the first row groups are read while the ids are matched
        batches = _ReadAhead(_row_groups(new, config, read), reader)
        old_ids, old_splits = old.ids(config)
        new_ids, new_splits = new.ids(config)
        found = pc.index_in(new_ids, value_set=old_ids)
        positions = pc.fill_null(found, -1).to_numpy(zero_copy_only=False).astype(np.int64)
        gone = pc.invert(pc.is_in(old_ids, value_set=new_ids))
        for record, split in zip(old_ids.filter(gone).to_pylist(), old_splits.filter(gone).to_pylist(), strict=True):
            yield Change(config, split, record, RECORD, "removed", old=split)
        first = 0
        for batch in batches:
            at = positions[first : first + batch.num_rows]
            ids = new_ids.slice(first, batch.num_rows)
            splits = new_splits.slice(first, batch.num_rows)
            first += batch.num_rows
            for index in np.flatnonzero(at < 0).tolist():
                split = splits[index].as_py()
                yield Change(config, split, ids[index].as_py(), RECORD, "added", new=split)
            matched = np.flatnonzero(at >= 0)
            if len(matched) == 0:
                continue
            before = old_splits.take(pa.array(at[matched]))
            moved = pc.not_equal(before, splits.take(pa.array(matched))).to_numpy(zero_copy_only=False)
            for position in np.flatnonzero(moved).tolist():
                index = int(matched[position])
                was, split = before[position].as_py(), splits[index].as_py()
                kind = "moved to another split"
                yield Change(config, split, ids[index].as_py(), RECORD, kind, "", f"{was} → {split}", was, split)
            aligned = batch if len(matched) == batch.num_rows else batch.take(pa.array(matched))
            keys = _BatchKeys(ids, splits)
            yield from _batch_changes(config, shape, rows.take(at[matched]), aligned, matched, keys)


class _BatchKeys(NamedTuple):
    """The ids and splits of a batch of the new release's records."""

    ids: pa.Array
    splits: pa.Array


def _batch_changes(
    config: str,
    shape: Shape,
    old: pa.Table,
    new: pa.RecordBatch,
    matched: np.ndarray,
    keys: _BatchKeys,
) -> Iterator[Change]:
    """The changes of the matched records of a batch (``old`` aligned with ``new``; ``matched`` their positions
    in the batch's ``keys``). Only the fields that differ in some record become Python values: a field equal
    column-wise has no change to describe."""
    differ = np.zeros(new.num_rows, dtype=bool)
    differing: dict[str, Node] = {}
    for name, node in shape.fields.items():
        column = rows_differ(old.column(name).combine_chunks(), new.column(name), node)
        if column.any():
            differ |= column
            differing[name] = node
    changed = np.flatnonzero(differ)
    if len(changed) == 0:
        return
    chosen, names = pa.array(changed), list(differing)
    befores = old.select(names).take(chosen).to_pylist()
    afters = new.select(names).take(chosen).to_pylist()
    for before, after, index in zip(befores, afters, matched[changed].tolist(), strict=True):
        record, split = keys.ids[index].as_py(), keys.splits[index].as_py()
        found = record_changes(before, after, differing)
        for c in found:
            yield Change(config, split, record, c.path, c.kind, c.item, c.detail, c.old, c.new)
        if not found:  # stored values differ in a way no field names (never silently dropped)
            yield Change(config, split, record, RECORD, "changed", "", "stored values differ")


def _row_groups(release: OpenedRelease, config: str, columns: list[str]) -> Iterator[pa.RecordBatch]:
    """A config's records a row group at a time (each read whole: its columns decode in parallel)."""
    for shard in release.view.shards(config):
        file = parquet_file(shard)
        for group in range(file.num_row_groups):
            yield from read_row_group(file, shard, group, columns).to_batches()


class _ReadAhead:
    """``batches``, the next one read by ``reader`` while the caller works on this one, the first from the start
    (pyarrow reads without Python's lock)."""

    def __init__(self, batches: Iterator[pa.RecordBatch], reader: Executor) -> None:
        self.batches = batches
        self.reader = reader
        self.coming = reader.submit(next, batches, None)

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        while (batch := self.coming.result()) is not None:
            self.coming = self.reader.submit(next, self.batches, None)
            yield batch


class _RowGroups:
    """Records of a release by position, read a row group at a time (the last few kept, the next one read ahead
    by ``reader``)."""

    def __init__(self, release: OpenedRelease, config: str, columns: list[str], reader: Executor) -> None:
        self.columns = columns
        self.reader = reader
        self.coming: tuple[int, Future[pa.Table]] | None = None
        self.groups: list[tuple[pq.ParquetFile, Path, int]] = []
        starts = []
        total = 0
        for shard in release.view.shards(config):
            file = parquet_file(shard)
            for group in range(file.num_row_groups):
                self.groups.append((file, shard, group))
                starts.append(total)
                total += file.metadata.row_group(group).num_rows
        self.starts = np.array(starts, dtype=np.int64)
        self.cache: OrderedDict[int, pa.Table] = OrderedDict()
        if self.groups:
            self.coming = (0, reader.submit(self._read, 0))

    def take(self, positions: np.ndarray) -> pa.Table:
        """The records at ``positions``, in that order."""
        group_of = np.searchsorted(self.starts, positions, side="right") - 1
        pieces, order = [], []
        for group in np.unique(group_of).tolist():
            inside = np.flatnonzero(group_of == group)
            local = positions[inside] - self.starts[group]
            table = self._group(group)
            runs = np.flatnonzero(np.diff(local) != 1) + 1
            if len(runs) < MAX_SLICES:  # in order but for a few records removed: slices, no copy
                starts, ends = np.concatenate([[0], runs]), np.concatenate([runs, [len(local)]])
                pieces += [table.slice(int(local[a]), int(b - a)) for a, b in zip(starts, ends, strict=True)]
            else:
                pieces.append(table.take(pa.array(local)))
            order.append(inside)
        taken = pa.concat_tables(pieces)
        if np.array_equal(np.concatenate(order), np.arange(len(positions))):
            return taken
        placed = np.empty(len(positions), dtype=np.int64)
        placed[np.concatenate(order)] = np.arange(len(positions))
        return taken.take(pa.array(placed))

    def _group(self, group: int) -> pa.Table:
        if group in self.cache:
            self.cache.move_to_end(group)
            return self.cache[group]
        coming, self.coming = self.coming, None
        if coming is None or coming[0] != group:  # read by ``reader`` too: one read of a file at a time
            coming = (group, self.reader.submit(self._read, group))
        table = coming[1].result()
        self.cache[group] = table
        while len(self.cache) > CACHED_ROW_GROUPS:
            self.cache.popitem(last=False)
        if group + 1 < len(self.groups):
            self.coming = (group + 1, self.reader.submit(self._read, group + 1))
        return table

    def _read(self, group: int) -> pa.Table:
        file, path, index = self.groups[group]
        return read_row_group(file, path, index, self.columns)
