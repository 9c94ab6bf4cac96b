"""The ``sdoh`` card's statistics by stable key (corpus.yaml ``published:``), from the counts its tables show."""

from __future__ import annotations

import pandas as pd

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
