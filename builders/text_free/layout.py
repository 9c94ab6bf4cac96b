"""What a text-free release folder is called and holds, and how its rows and source documents are read.

A text-free release ``<corpus>-<version>.text-free`` holds the full release's configs with every licensed text
replaced by a recipe, and the full release's own manifest, card and validation results in ``full/``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq

from clinical_corpora.builders.release.card.markdown import FIGURES_FOLDER

if TYPE_CHECKING:
    from clinical_corpora.builders.contract.base import BuildContext, Builder

VARIANT = "text-free"
TEXT_FREE_SUFFIX = ".text-free"
FULL_FOLDER = "full"
FULL_SUBFOLDERS = (FIGURES_FOLDER,)
"""The folders of a full release whose files ``full/`` keeps beside its top-level files (not its data)."""
BATCH_ROWS = 1024


def is_full_file(name: str) -> bool:
    """Whether a file of the full release (a path relative to it) is kept in ``full/``: a top-level file, or a
    file directly in one of :data:`FULL_SUBFOLDERS` (the card's figures)."""
    parts = name.split("/")
    return len(parts) == 1 or (len(parts) == 2 and parts[0] in FULL_SUBFOLDERS and parts[1] not in ("", ".", ".."))


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
