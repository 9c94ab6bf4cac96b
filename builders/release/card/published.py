"""A release against the published corpus: the comparison of a build (or of a written release, for
``clincorp validate``) with corpus.yaml's ``published:`` numbers, and its card section.

The recomputed values are those the card's statistics sections carry by key (``CardSection.values``) and
the agreement measures (``agreement.<name>``), so the card's tables and the comparison are one computation.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from clinical_corpora.core.card import CardSection, Cell, Table
from clinical_corpora.core.manifest import CorpusManifest, PublishedNumber
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.validation.gates import GateResult
from clinical_corpora.validation.published import (
    Comparison,
    Recomputed,
    ReleaseScope,
    and_list,
    compare_published,
    number_text,
    published_gate,
    scope_text,
)

TITLE = "Against the published corpus"
SAMPLE_REASON = "a sample release holds invented data, not the corpus its paper describes"
VERDICTS = {
    "match": "match",
    "explained": "deviation (explained)",
    "unexplained": "DEVIATION (no declared reason)",
    "not compared": "not compared",
}


def recomputed_values(
    sections: Iterable[CardSection], agreement: Mapping[str, float] | None, baselines: Iterable[BaselineScore] | None
) -> Recomputed:
    """Every statistic the release computes, by key: the card sections' values, ``agreement.<measure>``, then
    ``baseline.<name>.<split>.<metric>``."""
    sections = list(sections)
    values = {key: float(value) for section in sections for key, value in section.values.items()}
    values.update({f"agreement.{name}": float(value) for name, value in (agreement or {}).items()})
    values.update({key: value for score in baselines or () for key, value in score.keys().items()})
    return Recomputed(values, tuple(prefix for section in sections for prefix in section.counted))


def release_comparison(
    manifest: CorpusManifest, recomputed: Recomputed, given_sources: Collection[str], scope: ReleaseScope, sample: bool
) -> tuple[list[Comparison], GateResult]:
    """The comparisons of a release (none for a sample release) and its ``published`` gate."""
    if sample:
        return [], published_gate([], SAMPLE_REASON)
    comparisons = compare_published(manifest.published, recomputed, given_sources, scope)
    return comparisons, published_gate(comparisons)


def published_section(
    manifest: CorpusManifest, comparisons: Sequence[Comparison], scope: ReleaseScope, sample: bool
) -> CardSection:
    """The card's "Against the published corpus": for a sample release what it holds against what the numbers
    describe, and that it is not compared; otherwise each number, published against recomputed, with its
    verdict and reason. Either way, the papers' numbers corpus.yaml could not hold."""
    if not manifest.published:
        return CardSection(TITLE, "corpus.yaml declares no published numbers for this corpus." + _not_read(manifest))
    sources = sorted({number.source.split(",")[0] for number in manifest.published})
    if sample:
        return CardSection(
            TITLE,
            f"Not compared: {SAMPLE_REASON}. This release holds {scope.describe()}; the numbers describe "
            f"{_described(manifest.published)}. A real release compares {len(manifest.published)} numbers "
            f"published by {and_list(sources)} with the values it recomputes (corpus.yaml, `published:`), each "
            "only when it holds the splits and notes the number describes." + _not_read(manifest),
        )
    rows: list[list[Cell]] = [
        [
            c.number.key,
            number_text(c.number.value),
            number_text(c.recomputed, 4),
            number_text(c.number.tolerance),
            VERDICTS[c.verdict],
            c.note,
            c.number.source,
        ]
        for c in comparisons
    ]
    unexplained = sum(c.verdict == "unexplained" for c in comparisons)
    text = (
        "Each number the papers publish about the data (corpus.yaml, `published:`), against the value this "
        "release recomputes; a number matches within its tolerance. A deviation is explained by the reason "
        "corpus.yaml declares next to the number (a reading choice, an erratum, another release of the source)"
        + (f"; {unexplained} deviate without one (a warning of the `published` gate)." if unexplained else ".")
    )
    text += f" This release holds {scope.describe()}; the numbers describe {_described(manifest.published)}."
    columns = ["statistic", "published", "recomputed", "tolerance", "result", "reason", "source"]
    return CardSection(TITLE, text + _not_read(manifest), Table(columns, rows))


def _described(numbers: Iterable[PublishedNumber]) -> str:
    """Each release the numbers describe, once, in words with its splits and note sources."""
    return "; ".join(dict.fromkeys(scope_text(number.applies_to) for number in numbers))


def _not_read(manifest: CorpusManifest) -> str:
    """The papers' numbers corpus.yaml does not hold because we could not read them (``published_not_read``)."""
    unread = [f"{item.what} ({item.source}): {' '.join(item.why.split())}" for item in manifest.published_not_read]
    return f" Not compared, as corpus.yaml does not hold them: {'; '.join(unread)}." if unread else ""
