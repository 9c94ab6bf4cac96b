"""The ``snomed_el`` card's statistics: splits, hierarchies, concept difficulty (Davidson et al. 2025), span ends.

Notes, annotations and distinct concepts per split; annotations per hierarchy; the concept difficulty
features of ``concept_stats``; and the spans annotated with whitespace at their ends.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.core.card import BarChart, CardSection, Cell, Series, Table
from clinical_corpora.corpora.snomed_el.records import HIERARCHY_NAMES, ConceptStats
from clinical_corpora.corpora.snomed_el.released_annotations import annotation_table

MAX_LISTED_SPANS = 20
SPLIT_STATISTICS = ("notes", "annotations", "concepts")
"""The stable keys (corpus.yaml ``published:``) of the per-split counts, ``<key>`` in all and ``<key>.<split>``."""

FREQUENCY_BINS = ((1, 1), (2, 2), (3, 3), (4, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, None))
"""The bins of the concept frequency figure: annotations of a concept, from and to (None: no upper end)."""


def statistics_sections(release: ReleaseView) -> list[CardSection]:
    """The card's statistics sections, from the release's rows."""
    return [split_section(release), hierarchy_section(release), difficulty_section(release)]


def split_section(release: ReleaseView) -> CardSection:
    frame = annotation_table(release).to_pandas()
    notes = {
        split: sum(map(release.rows_in, release.shards("snomed_el", split))) for split in release.splits("snomed_el")
    }
    counts = {  # per split: notes, annotations, distinct concepts
        split: (
            notes[split],
            int((frame["split"] == split).sum()),
            frame.loc[frame["split"] == split, "concept_id"].nunique(),
        )
        for split in release.splits("snomed_el")
    }
    rows: list[list[Cell]] = [[split, *numbers] for split, numbers in counts.items()]
    totals = (sum(notes.values()), len(frame), frame["concept_id"].nunique())
    values = {
        **{key: float(n) for key, n in zip(SPLIT_STATISTICS, totals, strict=True)},
        **{
            f"{key}.{split}": float(n)
            for split, numbers in counts.items()
            for key, n in zip(SPLIT_STATISTICS, numbers, strict=True)
        },
        **_test_only(frame),
    }
    return CardSection(
        "Notes, annotations and concepts per split",
        table=Table(["split", "notes", "annotations", "distinct concepts"], rows),
        values=values,
    )


def _test_only(frame: pd.DataFrame) -> dict[str, float]:
    """The concepts annotated in the test split only, and their annotations (Davidson et al. 2025, Results)."""
    in_test = frame["split"] == "test"
    only = set(frame.loc[in_test, "concept_id"]) - set(frame.loc[~in_test, "concept_id"])
    return {
        "concepts.test_only": float(len(only)),
        "annotations.test_only_concepts": float((in_test & frame["concept_id"].isin(only)).sum()),
    }


def hierarchy_section(release: ReleaseView) -> CardSection:
    frame = annotation_table(release).to_pandas()
    names = release.features("snomed_el")["annotations"].feature["hierarchy"].names
    counts = Counter(zip(frame["split"], (names[index] for index in frame["hierarchy"]), strict=True))
    splits = release.splits("snomed_el")
    rows: list[list[Cell]] = [
        [HIERARCHY_NAMES[name], *(counts[(split, name)] for split in splits)] for name in HIERARCHY_NAMES
    ]
    totals = {split: sum(counts[(split, name)] for name in HIERARCHY_NAMES) or 1 for split in splits}
    chart = BarChart(
        "hierarchy-shares",
        "Share of each split's annotations per SNOMED CT hierarchy",
        tuple(HIERARCHY_NAMES.values()),
        tuple(
            Series(split, tuple(counts[(split, name)] / totals[split] for name in HIERARCHY_NAMES)) for split in splits
        ),
        "hierarchy",
        "share of the split's annotations",
        horizontal=True,
        share=True,
    )
    return CardSection("Annotations per hierarchy", table=Table(["hierarchy", *splits], rows), figures=[chart])


def difficulty_section(release: ReleaseView) -> CardSection:
    stats = release.arrow("concept_stats").to_pandas()
    columns = [name for name in ConceptStats.model_fields if name != "concept_id"]
    rows: list[list[Cell]] = [[name, *_summary(stats[name])] for name in columns]
    text = (
        "Davidson et al. 2025's concept difficulty features over the annotated concepts (config `concept_stats`): mean "
        "span length in characters, concept entropy (bits, over the concept's case-folded span strings), "
        "annotation entropy (bits, over the concepts linked to those strings), examples in all splits and "
        "in the training split, notes holding the concept, and is-a depth below the root."
    )
    return CardSection(
        "Concept difficulty features",
        text,
        Table(["feature", "mean", "median", "min", "max"], rows),
        figures=[frequency_chart(stats["examples"])],
    )


def frequency_chart(examples: pd.Series) -> BarChart:
    """Concepts by how many annotations link them (Davidson et al. 2025's ``examples``), in widening bins up to
    the most annotated concept."""
    largest = int(examples.max()) if not examples.empty else 1
    bins = [(low, high) for low, high in FREQUENCY_BINS if low <= largest]
    counts = {
        (str(low) if high == low else f"{low}-{high}" if high else f"{low} or more"): int(
            ((examples >= low) & (examples <= (high or largest))).sum()
        )
        for low, high in bins
    }
    return BarChart.counts(
        "concept-frequency", "Concepts by the number of annotations linking them", counts, "annotations", "concepts"
    )


def _summary(values: pd.Series) -> list[Cell]:
    if values.empty:
        return ["", "", "", ""]
    return [float(values.mean()), float(values.median()), float(values.min()), float(values.max())]


def whitespace_section(padded_spans: list[tuple[str, int, int]], trimmed: bool) -> CardSection:
    """The spans read with leading or trailing whitespace (the first :data:`MAX_LISTED_SPANS`), and what was done."""
    action = (
        "trimmed to the first and last non-space character"
        if trimmed
        else "kept as annotated (`--option trim_whitespace=true` trims them)"
    )
    listed: list[list[Cell]] = [[note_id, start, end] for note_id, start, end in padded_spans[:MAX_LISTED_SPANS]]
    return CardSection(
        "Span boundaries",
        f"{len(padded_spans)} annotated spans start or end with whitespace; they are {action}.",
        Table(["note_id", "start", "end"], listed) if listed else None,
    )
