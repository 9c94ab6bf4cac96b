"""Write a config's split as parquet shards through ``datasets`` (features embedded in the schema)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from datasets import Features
from datasets.arrow_writer import ParquetWriter

ROWS_PER_SHARD = 500_000
ROWS_PER_ROW_GROUP = 10_000


class SplitWriter:
    """Streams encoded rows of one config and split into ``<split>-NNNNN-of-NNNNN.parquet`` files."""

    def __init__(self, folder: Path, split: str, features: Features, rows_per_shard: int = ROWS_PER_SHARD):
        self.folder = folder
        self.split = split
        self.features = features
        self.rows_per_shard = rows_per_shard
        self.rows = 0
        self._parts: list[Path] = []
        self._writer: ParquetWriter | None = None
        self._rows_in_part = 0
        self._batch: list[dict[str, Any]] = []
        self._schema = features.arrow_schema

    def write(self, row: dict[str, Any]) -> None:
        """Buffer one encoded row; a full row group goes to the file as one Arrow table."""
        if self._writer is None or self._rows_in_part >= self.rows_per_shard:
            self._close_part()
            self._open_part()
        self._batch.append(row)
        self._rows_in_part += 1
        self.rows += 1
        if len(self._batch) >= ROWS_PER_ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if self._batch and self._writer is not None:
            self._writer.write_table(pa.Table.from_pylist(self._batch, schema=self._schema))
            self._batch = []

    def close(self) -> list[Path]:
        """Finish the shards (one empty shard for an empty split) and name them ``-of-N``."""
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
        self._writer = ParquetWriter(path=str(part), features=self.features, writer_batch_size=ROWS_PER_ROW_GROUP)
        self._rows_in_part = 0

    def _close_part(self) -> None:
        if self._writer is not None:
            self._flush()
            self._writer.finalize()
            self._writer.close()
            self._writer = None
