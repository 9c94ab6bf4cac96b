"""The ``sdoh`` card's statistics by stable key (corpus.yaml ``published:``), from the counts its tables show,
and its figures: SHAC's events and arguments per type, and the annotators' agreement per event type.

Every chart is drawn from counts keyed by label names of the annotation scheme (event and argument types)
and by split and note source; no note text goes in.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from clinical_corpora.core.card import BarChart, Series
from clinical_corpora.core.counts import NO_COUNTS, PRFCounts
from clinical_corpora.validation.metrics.sdoh import TRIGGER, ScoreRow

COUNTED = ("events.", "arguments.", "notes.", "subtypes.")
"""The key prefixes of :func:`statistic_values` under which an absent key counts 0."""
SPAN_ONLY = "N/A"
"""The subtype of a span-only argument (``records.Subtype``), which takes no value."""


def statistic_values(per_group: pd.DataFrame, event_types: pd.Series, argument_types: pd.Series) -> dict[str, float]:
    """Notes, events and arguments in all, per source and per split/source group; events per type; and how many
    subtypes each span-with-value argument type takes (Lybarger et al. 2022, Table 1).

    ``per_group`` has a row per ``split/source`` group (columns notes, events, arguments); ``event_types``
    counts by (type, group), ``argument_types`` by (type, subtype, group).
    """
    values: dict[str, float] = {}
    sources = per_group.groupby(lambda group: str(group).split("/")[1]).sum()
    for name in ("notes", "events", "arguments"):
        values[name] = float(per_group[name].sum())
        values |= {f"{name}.{source}": float(n) for source, n in sources[name].items()}
        values |= {f"{name}.{group}": float(n) for group, n in per_group[name].items()}
    by_event = event_types.groupby(level=0).sum()
    values |= {f"events.{kind}": float(n) for kind, n in by_event.items()}
    by_argument = argument_types.groupby(level=[0, 1]).sum()
    valued = by_argument[(by_argument > 0) & (by_argument.index.get_level_values(1) != SPAN_ONLY)]
    subtypes = valued.groupby(level=0).size()
    values |= {f"subtypes.{kind}": float(n) for kind, n in subtypes.items()}
    return values


def per_type_chart(name: str, title: str, counts: pd.Series, groups: list[str], axes: tuple[str, str]) -> BarChart:
    """Counts keyed by (type, ..., group) as a bar per type (subtypes pooled), stacked by split/source group."""
    by_type = counts.groupby(level=[0, counts.index.nlevels - 1]).sum().unstack(fill_value=0)
    table = by_type.reindex(columns=groups, fill_value=0)
    return BarChart(
        name,
        title,
        tuple(str(kind) for kind in table.index),
        tuple(Series(group, tuple(int(n) for n in table[group])) for group in groups),
        *axes,
        stacked=True,
        horizontal=True,
    )


def agreement_chart(rows: Sequence[ScoreRow]) -> BarChart:
    """F1 of annotator B against A per event type: its triggers, and its arguments pooled (OVERALL row aside)."""
    triggers: dict[str, PRFCounts] = {}
    arguments: dict[str, PRFCounts] = {}
    for row in rows[1:]:
        kept = triggers if row.argument == TRIGGER else arguments
        kept[row.event] = kept.get(row.event, NO_COUNTS) + row.counts
    events = sorted(triggers.keys() | arguments.keys())
    return BarChart(
        "inter-annotator-agreement",
        "Agreement per event type (annotator B scored against annotator A)",
        tuple(events),
        (
            Series("triggers", tuple(triggers.get(event, NO_COUNTS).f1 for event in events)),
            Series("arguments", tuple(arguments.get(event, NO_COUNTS).f1 for event in events)),
        ),
        "event type",
        "F1",
        horizontal=True,
    )
