"""What a text-free release folder is called and holds, and how its rows and source documents are read.

A text-free release ``<corpus>-<version>.text-free`` holds the full release's configs with every licensed text
replaced by a recipe, and the full release's own manifest, validation results, inputs and rejects in ``full/``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Final

from clinical_corpora.schemas.licensed import SOURCE_DOCUMENTS

if TYPE_CHECKING:
    from clinical_corpora.builders.contract.base import BuildContext, Builder
    from clinical_corpora.builders.contract.release_view import ReleaseView

VARIANT: Final = "text-free"
TEXT_FREE_SUFFIX = ".text-free"
FULL_FOLDER = "full"
FULL_FILES = ("validation.json", "inputs.jsonl", "rejects.jsonl")
"""The full release's files ``full/`` keeps beside its manifest.json: its JSON files. Its card, figures and
croissant.json are descriptions of its rows, which ``clincorp rehydrate`` draws again."""
BATCH_ROWS = 1024


def is_full_file(name: str) -> bool:
    """Whether a file of the full release (a path relative to it) is kept in ``full/``."""
    return name in FULL_FILES


def named_documents(view: ReleaseView, configs: list[str]) -> dict[str, str]:
    """Locator → sha256 of every source document the rows of ``configs`` name, read column-wise."""
    named: dict[str, str] = {}
    for config in configs:
        for shard in view.shards(config):
            for batch in view.shard_batches(shard, 10_000, [SOURCE_DOCUMENTS]):
                locators, hashes = batch.column(0).flatten().flatten()
                named.update(zip(locators.to_pylist(), hashes.to_pylist(), strict=True))
    return named


def read_wanted(builder: Builder, ctx: BuildContext, wanted: Collection[str]) -> dict[str, str]:
    """The wanted documents' texts, streamed from the sources (anything else read is dropped at once)."""
    documents: dict[str, str] = {}
    for locator, text in builder.read_documents(ctx, wanted):
        if locator in wanted:
            documents.setdefault(locator, text)
    return documents
