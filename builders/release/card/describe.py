"""Every description of a release, drawn from its data, its manifest and its validation record alone.

A full release's card (with the Hub front matter), its figures and croissant.json are a function of: the
installed corpus (corpus.yaml, with the ``--gates`` overlay the manifest records), the manifest (version,
provenance, counts, changes), validation.json (gates, agreement measures, and the sections only the build could
measure) and the data (rows, sizes, and the builder's statistics recomputed from the rows). ``clincorp release``
writes them with :func:`describe_full`; ``clincorp validate`` draws them again and requires the same bytes, so
nothing can be planted in a card, a figure or croissant.json; ``clincorp rehydrate`` draws the full release's
from the restored data (a text-free release carries none of them). A text-free release's card and
croissant.json are drawn by :func:`describe_text_free` from its manifest, the full release's and its rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from datasets import Features

from clinical_corpora.builders.contract.base import Builder
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.card.baselines import baselines_of, release_scope
from clinical_corpora.builders.release.card.card import (
    CardFacts,
    corpus_features,
    declared_rows,
    render_card,
    split_sizes,
)
from clinical_corpora.builders.release.card.croissant import CROISSANT_FILE, CroissantRelease, croissant_bytes
from clinical_corpora.builders.release.card.figures import figure_files
from clinical_corpora.builders.release.card.markdown import CARD_FILE
from clinical_corpora.builders.release.card.published import (
    published_section,
    recomputed_values,
    release_comparison,
)
from clinical_corpora.core.card import CardSection
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.release_manifest import ReleaseManifest
from clinical_corpora.core.release_records import ValidationRecord
from clinical_corpora.validation.gates import GateResult


@dataclass(frozen=True)
class FullRelease:
    """What a full release's descriptions are drawn from (the manifest's outputs need not be final)."""

    corpus: CorpusManifest
    builder: Builder
    manifest: ReleaseManifest
    validation: ValidationRecord
    view: ReleaseView
    statistics: list[CardSection]
    """The builder's statistics of the data (``Builder.statistics``), computed once by the caller."""

    @property
    def sections(self) -> list[CardSection]:
        """The statistics, then what only the build could measure."""
        return [*self.statistics, *(self.validation.measured_sections or [])]

    @property
    def features(self) -> dict[str, Features]:
        return corpus_features(self.corpus, self.builder.CONFIGS)

    def row_counts(self) -> dict[str, dict[str, int]]:
        return declared_rows(self.corpus, self.view)


def published(release: FullRelease) -> tuple[CardSection, GateResult]:
    """The card's "Against the published corpus" and the ``published`` gate, from the statistics and the
    recorded agreement measures."""
    manifest = release.manifest
    recomputed = recomputed_values(release.sections, release.validation.agreement, release.validation.baselines)
    scope = release_scope(release.corpus, release.view, release.builder.note_sources(release.view))
    comparisons, gate = release_comparison(
        release.corpus, recomputed, list(manifest.inputs or {}), scope, manifest.sample
    )
    return published_section(release.corpus, comparisons, scope, manifest.sample), gate


def describe_full(release: FullRelease) -> dict[str, bytes]:
    """The card, each figure and croissant.json of a full release: path in the folder → bytes."""
    sources = release.builder.note_sources(release.view)
    baselines = baselines_of(release.corpus, release.view, sources, release.manifest, release.validation)
    sections = [*release.sections, *([baselines] if baselines else []), published(release)[0]]
    row_counts = release.row_counts()
    facts = CardFacts(
        release.corpus,
        release.manifest.version,
        release.features,
        row_counts,
        sections,
        release.validation.gates,
        release.manifest,
        split_sizes(release.view, release.corpus.configs),
    )
    files = {CARD_FILE: render_card(facts).encode("utf-8"), **figure_files(sections)}
    splits = {config: [split for split, rows in counts.items() if rows] for config, counts in row_counts.items()}
    croissant = CroissantRelease(
        release.corpus, release.manifest.version, release.features, splits, release.manifest.inputs or {},
        release.manifest.shard_hashes(),
    )  # fmt: skip
    files[CROISSANT_FILE] = croissant_bytes(release.view.folder, croissant)
    return files
