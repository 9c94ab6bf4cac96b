"""A text-free release being restored: what every way of writing its rows needs, gathered once by ``run.py``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from datasets import Features

from clinical_corpora.builders.contract.base import Builder
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.rehydrate.restore import RecipeError, restore_batch
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.release_manifest import ReleaseManifest
from clinical_corpora.schemas.features import features_for
from clinical_corpora.schemas.licensed import LicensedTree


class RehydrateError(ClincorpError):
    """A text-free release cannot be restored (bad documents, a damaged release, different bytes)."""


@dataclass
class Restoring:
    """The text-free release's rows (``view``, its declared ``configs``), its installed corpus and the builder of
    its full release, the full release's manifest, the release's anchors (None: it lists none), the documents its
    rows name (``wanted``: locator → the sha256 recorded), those the sources hold (their texts in ``texts``,
    numbered by ``index``) and those that cannot restore it (``bad``: locator → why)."""

    view: ReleaseView
    configs: list[str]
    corpus: CorpusManifest
    builder: Builder
    full: ReleaseManifest
    anchors: Path | None
    wanted: dict[str, str]
    texts: list[str]
    index: dict[str, int]
    bad: dict[str, str]

    def text(self, locator: str) -> str | None:
        """A document's text as the sources hold it (None: they lack it)."""
        number = self.index.get(locator)
        return None if number is None else self.texts[number]

    def restore(
        self, batch: pa.RecordBatch, tree: LicensedTree, schema: pa.Schema, where: str, id_field: str
    ) -> pa.RecordBatch:
        """``batch`` with its recipes restored from the sources' texts; a recipe naming what no document holds is
        a RehydrateError naming its record (the release is damaged or forged)."""
        try:
            return restore_batch(batch, tree, schema, self.texts, self.index)
        except RecipeError as error:
            record = batch.column(id_field)[error.row].as_py()
            raise RehydrateError(
                f"{where} record {record!r}: the recipe of {error.field} names {error.problem}: "
                "the release is damaged or forged"
            ) from None

    def features(self) -> dict[str, Features]:
        return {config: features_for(self.builder.CONFIGS[config]) for config in self.configs}
