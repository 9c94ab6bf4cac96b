"""How an embedding baseline trains its word vectors (``clincorp baseline --embedding-…``): a light module, so the
command line reads these options without loading a release's libraries."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EmbeddingTraining:
    """How an embedding baseline trains word vectors when no ``--word-vectors`` file is given: None keeps the
    paper's setting."""

    dimension: int | None = None
    min_count: int | None = None
    save: bool = False
    """Also write the trained vectors into ``--out`` (word2vec text format)."""
