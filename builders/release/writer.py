"""Write a config's split as parquet shards through ``datasets`` (features embedded in the schema)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from datasets import Features
from datasets.arrow_writer import ParquetWriter

ROWS_PER_SHARD = 500_000
ROWS_PER_ROW_GROUP = 10_000
"""Rows per row group unless the config's record model sets ``rows_per_row_group`` (wide rows: fewer)."""


def rows_per_row_group(model: type) -> int:
    """A config's row-group length: its record model's ``rows_per_row_group``, else :data:`ROWS_PER_ROW_GROUP`."""
    return int(getattr(model, "rows_per_row_group", ROWS_PER_ROW_GROUP))


class SplitWriter:
    """Streams Arrow record batches of one config and split into ``<split>-NNNNN-of-NNNNN.parquet`` files.

    Row groups are cut every ``rows_per_group`` rows whatever the size of the batches written, so the bytes
    depend on the rows alone (not on how many workers built them). The rows waiting for their row group wait on
    disk beside the shards (an Arrow stream), so only the row group being written is held: the writers of a
    release of 50k SDOH notes held up to ~55 MB of waiting rows (a row group of each config of the split being
    built).
    """

    def __init__(
        self,
        folder: Path,
        split: str,
        features: Features,
        rows_per_shard: int = ROWS_PER_SHARD,
        rows_per_group: int = ROWS_PER_ROW_GROUP,
    ):
        self.folder = folder
        self.split = split
        self.features = features
        self.rows_per_shard = rows_per_shard
        self.rows_per_group = rows_per_group
        self.rows = 0
        self._parts: list[Path] = []
        self._writer: ParquetWriter | None = None
        self._rows_in_part = 0
        self._pending = _Waiting(folder / f".{split}.waiting.arrow")
        self._pending_rows = 0

    def write(self, batch: pa.RecordBatch) -> None:
        """Buffer a batch of encoded rows; every full row group goes to the file."""
        if not batch.num_rows:
            return
        self._pending.add(batch)
        self._pending_rows += batch.num_rows
        self.rows += batch.num_rows
        while self._pending_rows >= self._next_group():
            self._flush(self._next_group())

    def _next_group(self) -> int:
        """Rows of the next row group: a full one, or what is left of the current parquet file."""
        if self._writer is None or self._rows_in_part >= self.rows_per_shard:
            return min(self.rows_per_group, self.rows_per_shard)
        return min(self.rows_per_group, self.rows_per_shard - self._rows_in_part)

    def _flush(self, rows: int) -> None:
        """Write the first ``rows`` buffered rows as one contiguous row group."""
        if self._writer is None or self._rows_in_part >= self.rows_per_shard:
            self._close_part()
            self._open_part()
        group, rest = _split_batches(self._pending.take(), rows)
        for batch in rest:
            self._pending.add(batch)
        assert self._writer is not None
        self._writer.write_table(pa.Table.from_batches(group, schema=group[0].schema).combine_chunks())
        self._pending_rows -= rows
        self._rows_in_part += rows

    def close(self) -> list[Path]:
        """Finish the shards (one empty shard for an empty split) and name them ``-of-N``."""
        if self._pending_rows:
            self._flush(self._pending_rows)
        if self._writer is None:
            self._open_part()
        self._close_part()
        count = len(self._parts)
        final = []
        for index, part in enumerate(self._parts):
            target = self.folder / f"{self.split}-{index:05d}-of-{count:05d}.parquet"
            part.rename(target)
            final.append(target)
        return final

    def _open_part(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        part = self.folder / f".{self.split}-{len(self._parts):05d}.parquet.part"
        self._parts.append(part)
        self._writer = ParquetWriter(path=str(part), features=self.features, writer_batch_size=self.rows_per_group)
        self._rows_in_part = 0

    def _close_part(self) -> None:
        if self._writer is not None:
            self._writer.finalize()
            self._writer.close()
            self._writer = None


class _Waiting:
    """Record batches waiting for their row group, in an Arrow IPC stream file written as they come."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: pa.NativeFile | None = None
        self._stream: pa.ipc.RecordBatchStreamWriter | None = None

    def add(self, batch: pa.RecordBatch) -> None:
        if self._stream is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = pa.OSFile(str(self.path), "wb")
            self._stream = pa.ipc.new_stream(self._file, batch.schema)
        self._stream.write_batch(batch)

    def take(self) -> list[pa.RecordBatch]:
        """Every batch added since the last take, read back; the file is removed."""
        if self._stream is None or self._file is None:
            return []
        self._stream.close()
        self._file.close()
        self._stream = self._file = None
        with pa.OSFile(str(self.path)) as source:
            batches = list(pa.ipc.open_stream(source))
        self.path.unlink()
        return batches


def _split_batches(batches: list[pa.RecordBatch], rows: int) -> tuple[list[pa.RecordBatch], list[pa.RecordBatch]]:
    """The first ``rows`` rows of ``batches`` and the rest, as batches: only the batch on the boundary is sliced,
    so what is left holds its own batches (a slice of the combined row group held all of it until the next
    flush: a row group per split and config, ~110 MB of 50k SDOH notes)."""
    taken = 0
    for index, batch in enumerate(batches):
        if taken + batch.num_rows >= rows:
            cut = rows - taken
            head, rest = batches[:index], batches[index + 1 :]
            head.append(batch.slice(0, cut))
            if cut < batch.num_rows:
                rest.insert(0, batch.slice(cut))
            return head, rest
        taken += batch.num_rows
    return batches, []
