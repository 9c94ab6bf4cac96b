"""The ``sdoh`` card's figures: SHAC's events and arguments per type, and the annotators' agreement per event type.

Every chart is drawn from counts keyed by label names of the annotation scheme (event and argument types)
and by split and note source; no note text goes in.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from clinical_corpora.builders.contract.figures import BarChart, Series
from clinical_corpora.core.counts import NO_COUNTS, PRFCounts
from clinical_corpora.validation.metrics.sdoh import TRIGGER, ScoreRow


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
