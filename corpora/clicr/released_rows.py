"""Reading a CliCR release a few columns at a time: queries without their passage, columns as stored."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pandas as pd
import pyarrow.parquet as pq
from datasets import Features

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.schemas.features import row_decoder

QUERY_BATCH = 4096


def query_rows(release: ReleaseView, columns: Sequence[str], split: str | None = None) -> list[tuple[str, dict]]:
    """(split, row) of the ``clicr`` config with only ``columns``, ClassLabels as names.

    Leaving out ``context`` (the passage, repeated in every query of a case) keeps this small.
    """
    return list(iter_query_rows(release, columns, split))


def iter_query_rows(
    release: ReleaseView, columns: Sequence[str], split: str | None = None
) -> Iterator[tuple[str, dict]]:
    """:func:`query_rows` one at a time, read in batches (memory bounded by a batch)."""
    features = release.features("clicr")
    decode = row_decoder(Features({name: features[name] for name in columns}))
    for shard in release.shards("clicr", split):
        shard_split = release.split_of(shard)
        for batch in pq.ParquetFile(shard).iter_batches(batch_size=QUERY_BATCH, columns=list(columns)):
            for row in batch.to_pylist():
                kept = release.kept("clicr", shard_split, decode(row))
                if kept is not None:
                    yield shard_split, kept


def read_columns(release: ReleaseView, config: str, columns: Sequence[str]) -> pd.DataFrame:
    """Some columns of a config, all splits, as stored (only these columns are read)."""
    return pd.concat(
        [pq.read_table(shard, columns=list(columns)).to_pandas() for shard in release.shards(config)], ignore_index=True
    )
