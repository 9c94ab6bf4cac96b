"""The card's baselines table: each of the corpus's non-neural baselines scored on the released rows (as ``clincorp
release`` measured them, recorded in validation.json), beside the numbers its papers publish for the same system
(corpus.yaml's ``published:`` keys ``baseline.<name>.<split>.<metric>``), each with its table reference and, where
the data differs, why the numbers are not comparable."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.card.published import SAMPLE_REASON
from clinical_corpora.core.card import CardSection, Cell, Table
from clinical_corpora.core.manifest import CorpusManifest, PublishedNumber
from clinical_corpora.core.registry import baselines
from clinical_corpora.core.release_manifest import ReleaseManifest
from clinical_corpora.core.release_records import ValidationRecord
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.validation.published import Comparison, Recomputed, ReleaseScope, compare_published, number_text

TITLE = "Baselines"
PREFIX = "baseline."


def baselines_section(
    corpus: CorpusManifest,
    scores: Sequence[BaselineScore],
    given_sources: Collection[str],
    scope: ReleaseScope,
    sample: bool,
) -> CardSection | None:
    """The table, a row per baseline and split scored on this release, each followed by the papers' numbers for
    that baseline and split; None when the corpus has no baseline."""
    if not scores:
        return None
    order = corpus.configs[corpus.default_config].splits
    scores = sorted(scores, key=lambda score: order.index(score.split) if score.split in order else len(order))
    metrics = list(dict.fromkeys(name for score in scores for name in score.metrics))
    published = [number for number in corpus.published if number.key.startswith(PREFIX)]
    recomputed = Recomputed({key: value for score in scores for key, value in score.keys().items()})
    comparisons = {c.number.key: c for c in compare_published(published, recomputed, given_sources, scope)}
    rows: list[list[Cell]] = []
    for score in scores:
        rows.append([score.baseline, score.split, "this release", *_values(score.metrics, metrics), _seed(score)])
        prefix = f"{PREFIX}{score.baseline}.{score.split}."
        papers = [number for number in published if number.key.startswith(prefix)]
        for source, numbers in _by_source(papers).items():
            values = {number.key.removeprefix(prefix): number.value for number in numbers}
            note = SAMPLE_REASON if sample else _note([comparisons[number.key] for number in numbers])
            rows.append([score.baseline, score.split, source, *_values(values, metrics), note])
    return CardSection(
        TITLE, _text(corpus, scores, sample), Table(["system", "split", "scores of", *metrics, "note"], rows)
    )


def _values(values: dict[str, float], metrics: list[str]) -> list[Cell]:
    return [number_text(values.get(metric), 4) if metric in values else "" for metric in metrics]


def _seed(score: BaselineScore) -> str:
    return f"seed {score.seed}" if score.seed is not None else ""


def _by_source(numbers: list[PublishedNumber]) -> dict[str, list[PublishedNumber]]:
    """The numbers grouped by where they are published (the table, without what the parenthesis names)."""
    grouped: dict[str, list[PublishedNumber]] = {}
    for number in numbers:
        grouped.setdefault(number.source.split(" (")[0], []).append(number)
    return grouped


def _note(comparisons: list[Comparison]) -> str:
    """The verdicts of one paper's numbers for one row, each once, with the declared reason or why they are not
    compared."""
    verdicts = dict.fromkeys(
        f"{c.verdict}: {c.note}" if c.note else c.verdict for c in comparisons if c.verdict != "match"
    )
    return "; ".join(verdicts) or "match"


def _text(corpus: CorpusManifest, scores: Sequence[BaselineScore], sample: bool) -> str:
    names = dict.fromkeys(score.baseline for score in scores)
    scorers = " and ".join(dict.fromkeys(f"`clincorp score {score.scorer}`" for score in scores))
    described = "; ".join(f"`{name}`: {_description(corpus.name, name)}" for name in names)
    random = any(score.seed is not None for score in scores)
    seeded = " (a random one with its random-number seed shown)" if random else ""
    text = (
        f"The corpus's non-neural baselines ({described}) run by `clincorp release` on this release's rows, each "
        f"scored as {scorers} scores its predictions; `clincorp baseline {corpus.name} RELEASE --name NAME` "
        f"writes the same predictions{seeded}. Under a baseline, the numbers its paper publishes for it, if any."
    )
    if sample:
        return text + (
            " **This is a sample release: its scores describe invented data**, made to exercise the format, and "
            "say nothing of the corpus; the papers' numbers are shown for reference only."
        )
    return text + " A paper's number is compared only on the data it describes; the note says why otherwise."


def _description(corpus: str, name: str) -> str:
    """What ``clincorp list`` says of a registered baseline."""
    key = (corpus, name)
    return baselines.get(key).help if key in baselines.keys() else "not registered"


def release_scope(corpus: CorpusManifest, view: ReleaseView, note_sources: tuple[str, ...] | None) -> ReleaseScope:
    """What a release holds, from its data: rows of the default config, the splits holding them, the notes'
    sources (when the corpus records them)."""
    config = corpus.default_config
    rows = {split: view.split_rows(config, split) for split in corpus.configs[config].splits}
    held = tuple(split for split, count in rows.items() if count)
    return ReleaseScope(config, sum(rows.values()), held, note_sources)


def baselines_of(
    corpus: CorpusManifest,
    view: ReleaseView,
    note_sources: tuple[str, ...] | None,
    full: ReleaseManifest,
    validation: ValidationRecord,
) -> CardSection | None:
    """The card's baselines table of a release (or of the text-free variant of ``full``), whose notes come from
    ``note_sources``: the scores ``validation`` records beside the papers' numbers."""
    scope = release_scope(corpus, view, note_sources)
    return baselines_section(corpus, validation.baselines or [], list(full.inputs or {}), scope, full.sample)
