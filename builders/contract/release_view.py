"""Read access to a written release folder (``data/<config>/<split>-*.parquet``).

Every read goes through :func:`parquet_file` and :func:`batches`, which turn a damaged file (a corrupt page
behind a valid footer, a truncated file) into a ClincorpError naming it, never an Arrow traceback."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from datasets import Features

from clinical_corpora.core.errors import ClincorpError, error_line
from clinical_corpora.core.file_limits import MAX_FILE_BYTES
from clinical_corpora.schemas.features import row_decoder
from clinical_corpora.schemas.licensed import SOURCE_DOCUMENTS
from clinical_corpora.validation.tables import flatten_config

SHARD_PATTERN = re.compile(r"^(?P<split>[a-z][a-z0-9_]*)-(?P<index>\d{5})-of-(?P<count>\d{5})\.parquet$")


def parquet_error(path: Path, error: BaseException) -> ClincorpError:
    """A read of ``path`` that failed, as an error naming the file."""
    return ClincorpError(f"{path}: not a readable parquet file ({error_line(error)}): the release is damaged")


def parquet_file(path: Path) -> pq.ParquetFile:
    """``path`` opened (its footer read); a ClincorpError naming it when it is not a parquet file."""
    try:
        return pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as error:
        raise parquet_error(path, error) from None


def read_batches(path: Path, batch_size: int, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
    """The record batches of one parquet file; a ClincorpError naming it when a page cannot be read."""
    batches = parquet_file(path).iter_batches(batch_size=batch_size, columns=columns)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (OSError, pa.ArrowException) as error:
            raise parquet_error(path, error) from None
        yield batch


def read_row_group(file: pq.ParquetFile, path: Path, group: int, columns: list[str] | None = None) -> pa.Table:
    """One row group of an opened parquet file; a ClincorpError naming ``path`` when it cannot be read."""
    try:
        return file.read_row_group(group, columns=columns)
    except (OSError, pa.ArrowException) as error:
        raise parquet_error(path, error) from None


def read_table(path: Path, columns: list[str] | None = None, use_threads: bool = True) -> pa.Table:
    """A whole parquet file (or some columns); a ClincorpError naming it when it cannot be read."""
    try:
        return parquet_file(path).read(columns=columns, use_threads=use_threads)
    except (OSError, pa.ArrowException) as error:
        raise parquet_error(path, error) from None


class ReleaseView:
    """The configs and splits of a release folder, as Arrow tables or decoded rows."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._features: dict[str, Features] = {}  # a config's features are those of all its shards

    def table_frames(
        self, config: str, fields: list[str], columns: dict[str, list[str]], batch_size: int = 10_000
    ) -> Iterator[dict[str, pd.DataFrame]]:
        """The flattened tables (``validation.tables``) of some fields of a config, ``batch_size`` records at a
        time, as pandas (memory bounded by the batch): for each table named in ``columns``, those columns and
        its keys ``_split``, ``_row`` and ``_parent``, numbered as in the whole table, which is also each
        frame's index. At least one (maybe empty) batch."""
        for flat in self._flat_batches(config, fields, batch_size):
            frames = {}
            for name, wanted in columns.items():
                part, first = flat[name]
                keys = [key for key in ("_split", "_row", "_parent") if key in part.column_names]
                frame = part.select([*keys, *(column for column in wanted if column not in keys)]).to_pandas()
                frame.index = pd.RangeIndex(first, first + len(frame))
                frames[name] = frame
            yield frames

    def table_names(self, config: str, fields: list[str]) -> list[str]:
        """The names of the flattened tables of some fields of a config (nothing is read but the schema)."""
        return list(_flat_empty(config, self._chosen(config, fields)))

    def table_batches(
        self, config: str, fields: list[str], table: str, columns: list[str], batch_size: int = 10_000
    ) -> Iterator[pa.Table]:
        """One flattened table of some fields of a config, in row order, flattened ``batch_size`` records at
        a time (memory bounded by the batch): only ``columns`` and the keys ``_split``, ``_row`` and
        ``_parent``, numbered as in the whole table. At least one (maybe empty) batch."""
        wanted = {"_split", "_row", "_parent", *columns}
        for flat in self._flat_batches(config, fields, batch_size):
            part = flat[table][0]
            yield part.select([name for name in part.column_names if name in wanted])

    def _flat_batches(
        self, config: str, fields: list[str], batch_size: int
    ) -> Iterator[dict[str, tuple[pa.Table, int]]]:
        """Each batch's flattened tables, ``_row`` and ``_parent`` shifted past the rows of earlier batches,
        with the position of each table's first row in the whole table."""
        chosen = self._chosen(config, fields)
        rows_so_far: dict[str, int] = {}  # rows of each flattened table in the batches before
        for path in self.shards(config):
            split = pa.scalar(self.split_of(path), pa.string())
            for batch in read_batches(path, batch_size, fields):
                flat = flatten_config(config, pa.Table.from_batches([batch]), chosen, pa.repeat(split, batch.num_rows))
                yield {
                    name: (
                        self._renumbered(part, rows_so_far, config, _parent_table(name, flat)),
                        rows_so_far.get(name, 0),
                    )
                    for name, part in flat.items()
                }
                for name, part in flat.items():
                    rows_so_far[name] = rows_so_far.get(name, 0) + part.num_rows
        if not rows_so_far:
            yield {name: (part, 0) for name, part in _flat_empty(config, chosen).items()}

    @staticmethod
    def _renumbered(part: pa.Table, rows_so_far: dict[str, int], config: str, parent: str | None) -> pa.Table:
        """A batch's flattened table, its ``_row`` and ``_parent`` shifted past the rows of earlier batches."""
        shifts = {"_row": rows_so_far.get(config, 0), "_parent": rows_so_far.get(parent or "", 0)}
        for key, shift in shifts.items():
            if shift and key in part.column_names:
                index = part.column_names.index(key)
                part = part.set_column(index, key, pc.add(part.column(key), pa.scalar(shift, pa.int64())))
        return part

    def _chosen(self, config: str, fields: list[str]) -> Features:
        features = self.features(config)
        return Features({name: features[name] for name in fields})

    def configs(self) -> list[str]:
        data = self.folder / "data"
        return sorted(path.name for path in data.iterdir() if path.is_dir()) if data.is_dir() else []

    def shards(self, config: str, split: str | None = None) -> list[Path]:
        """The parquet files of a config (one split, or all), in split then shard order."""
        found = []
        for path in sorted((self.folder / "data" / config).glob("*.parquet")):
            match = SHARD_PATTERN.match(path.name)
            if match and (split is None or match["split"] == split):
                if not path.is_file():  # checked without opening it: opening a pipe would wait for a writer
                    raise ClincorpError(
                        f"{path}: not a regular file (a pipe, socket or device): the release is damaged"
                    )
                found.append(path)
        return found

    @staticmethod
    def split_of(shard: Path) -> str:
        return SHARD_PATTERN.match(shard.name)["split"]  # type: ignore[index]

    @staticmethod
    def shard_batches(shard: Path, batch_size: int, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
        """One shard's rows as stored (ClassLabel ids), ``batch_size`` at a time."""
        return read_batches(shard, batch_size, columns)

    @staticmethod
    def arrow_bytes(shard: Path) -> int:
        """A parquet file's bytes once read into Arrow (what ``datasets`` records as ``num_bytes``), read one
        column of a row group at a time (a whole row group of 10k SDOH notes took ~90 MB to read)."""
        file = parquet_file(shard)
        try:
            return sum(
                file.read_row_group(group, columns=[name]).nbytes
                for group in range(file.num_row_groups)
                for name in file.schema_arrow.names
            )
        except (OSError, pa.ArrowException) as error:
            raise parquet_error(shard, error) from None

    @staticmethod
    def rows_in(shard: Path) -> int:
        return int(parquet_file(shard).metadata.num_rows)

    def source_documents(self, configs: list[str]) -> dict[str, str]:
        """Locator → sha256 of every source document the rows of ``configs`` name, read column-wise."""
        named: dict[str, str] = {}
        for config in configs:
            for shard in self.shards(config):
                for batch in self.shard_batches(shard, 10_000, [SOURCE_DOCUMENTS]):
                    locators, hashes = batch.column(0).flatten().flatten()
                    named.update(zip(locators.to_pylist(), hashes.to_pylist(), strict=True))
        return named

    def split_rows(self, config: str, split: str) -> int:
        """The rows of a split, as its shards' footers count them (0 for a split without shards)."""
        return sum(self.rows_in(shard) for shard in self.shards(config, split))

    def splits(self, config: str) -> list[str]:
        return sorted({self.split_of(path) for path in self.shards(config)})

    def split_labels(self, config: str) -> pa.Array:
        """The split of every row of :meth:`arrow` (all splits), in order (built in Arrow, no Python string
        per row)."""
        shards = self.shards(config)
        names = sorted({self.split_of(path) for path in shards})
        indices = [
            pa.repeat(pa.scalar(names.index(self.split_of(path)), pa.int32()), self.rows_in(path)) for path in shards
        ]
        codes = pa.concat_arrays(indices) if indices else pa.array([], pa.int32())
        return pa.DictionaryArray.from_arrays(codes, pa.array(names, pa.string())).cast(pa.string())

    def column(self, config: str, name: str, split: str | None = None, use_threads: bool = True) -> pa.ChunkedArray:
        """One column of a config (one split, or all), read alone (without ``use_threads``, decoded by the calling
        thread rather than pyarrow's pool, which other reads may keep busy)."""
        chunks = [read_table(path, [name], use_threads).column(0) for path in self.shards(config, split)]
        field_type = self.features(config).arrow_schema.field(name).type
        return pa.chunked_array([chunk for column in chunks for chunk in column.chunks], field_type)

    def repeated_ids(self, config: str, id_field: str) -> list[tuple[str, int, str]]:
        """(split, row within the split, id) of every row whose id an earlier row has (splits in name order),
        found column-wise in Arrow: only the id column is read."""
        ids = self.column(config, id_field)
        if len(pc.unique(ids)) == len(ids):
            return []
        table = pa.table({"id": ids, "position": pa.array(range(len(ids)), pa.int64())})
        firsts = table.group_by("id", use_threads=False).aggregate([("position", "min")])["position_min"]
        repeated = pc.indices_nonzero(pc.invert(pc.is_in(table["position"], value_set=firsts))).to_pylist()
        starts: list[tuple[int, str, int]] = []  # (first row of a shard, its split, first row of the split)
        row = 0
        for path in self.shards(config):
            split = self.split_of(path)
            starts.append((row, split, next((s[2] for s in starts if s[1] == split), row)))
            row += self.rows_in(path)
        found = []
        for position in repeated:
            _, split, split_start = max(start for start in starts if start[0] <= position)
            found.append((split, position - split_start, str(ids[position].as_py())))
        return found

    def batches(
        self,
        config: str,
        split: str | None = None,
        columns: list[str] | None = None,
        batch_size: int = 10_000,
        fields: Mapping[str, Collection[str]] | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """A config's rows as record batches of at most ``batch_size`` rows: memory bounded by the batch. With
        ``fields`` (a list-of-structs column → the struct fields wanted), those columns too, each with only those
        fields (the others are not read)."""
        for path in self.shards(config, split):
            wanted = columns
            if fields:
                schema = parquet_file(path).schema
                leaves = [leaf.path for leaf in schema if leaf.name in fields.get(leaf.path.split(".")[0], ())]
                wanted = [*(columns or []), *leaves]
            yield from read_batches(path, batch_size, wanted)

    def features(self, config: str) -> Features:
        if config not in self._features:
            self._features[config] = self.shard_features(self.shards(config)[0])
        return self._features[config]

    @staticmethod
    def shard_features(shard: Path) -> Features:
        """The HF features embedded in a parquet file's schema."""
        try:
            return Features.from_arrow_schema(parquet_file(shard).schema_arrow)
        except (ValueError, TypeError, KeyError) as error:  # its embedded features are not datasets'
            raise ClincorpError(f"{shard}: its schema holds no Hugging Face features ({error})") from None

    def arrow(self, config: str, split: str | None = None, columns: list[str] | None = None) -> pa.Table:
        """A config's rows (or some columns) as one Arrow table (ClassLabels as ids), all splits by default."""
        tables = [read_table(path, columns) for path in self.shards(config, split)]
        return pa.concat_tables(tables) if tables else self.features(config).arrow_schema.empty_table()

    def kept(self, config: str, split: str, row: dict[str, Any]) -> dict[str, Any] | None:
        """A row read some other way than :meth:`rows` as :meth:`rows` gives it (as it is, here; without its lost
        spans, or None, in a :class:`~clinical_corpora.builders.contract.lost_spans.KeptView`)."""
        return row

    def rows(self, config: str, split: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """(split, row) pairs with ClassLabel ids turned back into names."""
        decode = row_decoder(self.features(config))
        for path in self.shards(config, split):
            shard_split = self.split_of(path)
            for batch in read_batches(path, 1024):
                for row in batch.to_pylist():
                    yield shard_split, decode(row)


def _parent_table(table: str, tables: Mapping[str, object]) -> str | None:
    """The table whose rows ``_parent`` numbers: the longest dotted prefix that is a table (a list inside a
    struct, ``c.events.trigger.fragments``, has parent ``c.events``)."""
    parts = table.split(".")
    return next(
        (".".join(parts[:end]) for end in range(len(parts) - 1, 0, -1) if ".".join(parts[:end]) in tables), None
    )


def _flat_empty(config: str, features: Features) -> dict[str, pa.Table]:
    """The flattened tables of a config with no rows: their names and columns, read from the schema alone."""
    return flatten_config(config, features.arrow_schema.empty_table(), features, pa.array([], pa.string()))


@dataclass(frozen=True)
class GivenRelease:
    """A release given on the command line to a corpus's command (a scorer's gold, an export's input), opened
    through the door by the command line: its data, its corpus and variant, and the config its argument named
    (``<release>/data/<config>``), if any. A corpus's command reads a release only as one of these."""

    view: ReleaseView
    corpus: str
    variant: str
    config: str | None = None
    digest: str = ""
    """The release's digest (``clincorp release`` prints it); empty for a release made in code."""
    version: str = ""
    max_file_bytes: int = MAX_FILE_BYTES
    """The largest file the release's builder read whole (its ``max_file_bytes`` option): a scorer reading files
    of this release's documents takes the same limit."""

    def of(self, corpus: str, config: str) -> GivenRelease:
        """This release, when it is one of ``corpus`` naming no config or ``config``; an error otherwise."""
        if self.corpus != corpus or self.config not in (None, config):
            raise ClincorpError(f"{self.view.folder} is not a {corpus} release or its data/{config} config")
        return self

    def splits(self, config: str, split: str | None) -> list[str]:
        """``[split]``, or every split of ``config`` when ``split`` is None; an unknown split is an error."""
        splits = self.view.splits(config)
        if split is not None and split not in splits:
            raise ClincorpError(f"{self.view.folder} has no split {split!r}; its splits are {', '.join(splits)}")
        return [split] if split is not None else splits


def given_release(value: Path | GivenRelease, split: str | None, role: str = "gold") -> GivenRelease | None:
    """A scorer's ``role`` argument as a release (None for a plain file or folder); ``--split`` only applies to a
    release."""
    if isinstance(value, GivenRelease):
        return value
    if split is not None:
        raise ClincorpError(f"--split applies to a release as {role}; {value} is not a release")
    return None
