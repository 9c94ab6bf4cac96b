"""The Hugging Face Hub's search fields of a card's front matter: language, size, tasks, annotations, sources."""

from __future__ import annotations

from typing import Any

from clinical_corpora.core.manifest import CorpusManifest

SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
)
"""The Hub's size buckets (``size_categories``), by the number of rows they hold fewer than."""


def size_category(rows: int) -> str:
    """The Hub bucket of a dataset of ``rows`` rows."""
    return next((bucket for limit, bucket in SIZE_CATEGORIES if rows < limit), "n>1B")


def hub_metadata(manifest: CorpusManifest, row_counts: dict[str, dict[str, int]]) -> dict[str, Any]:
    """DatasetCardData's search fields; the size counts the rows of the corpus's main (default) config."""
    main = row_counts.get(manifest.default_config) or next(iter(row_counts.values()), {})
    return {
        "language": manifest.language,
        "size_categories": [size_category(sum(main.values()))],
        "task_categories": manifest.task_categories or None,
        "task_ids": manifest.task_ids or None,
        "annotations_creators": manifest.annotations_creators or None,
        "source_datasets": manifest.source_datasets or None,
    }
