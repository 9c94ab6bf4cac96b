"""What a text-free release folder is called and holds, and how its rows and source documents are read.

A text-free release ``<version>.text-free`` holds the full release's configs with every licensed text
replaced by a recipe, and the full release's own manifest, card and validation results in ``full/``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq

if TYPE_CHECKING:
    from clinical_corpora.builders.contract.base import BuildContext, Builder

VARIANT = "text-free"
TEXT_FREE_SUFFIX = ".text-free"
FULL_FOLDER = "full"
BATCH_ROWS = 1024


def stored_rows(shard: Path, columns: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """The rows of a parquet shard as stored (ClassLabel ids), batch by batch."""
    for batch in pq.ParquetFile(shard).iter_batches(batch_size=BATCH_ROWS, columns=columns):
        yield from batch.to_pylist()


def read_wanted(builder: Builder, ctx: BuildContext, wanted: Collection[str]) -> dict[str, str]:
    """The wanted documents' texts, streamed from the sources (anything else read is dropped at once)."""
    documents: dict[str, str] = {}
    for locator, text in builder.read_documents(ctx, wanted):
        if locator in wanted:
            documents.setdefault(locator, text)
    return documents
