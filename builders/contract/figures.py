"""The figures of a dataset card, as data: a corpus describes each chart by its labels and numbers.

A :class:`BarChart` holds a title, the titles of its two axes, the names of its categories and named
series of numbers; the release draws it (``builders/release/figures.py``) into a file of the release
that the card shows beside the section's table. A chart holds no record text, by construction of what
the corpora put in it: category and series names are label names of closed sets (event types, hierarchies,
relation types, modalities), split, source and annotator names, numbers and bins of numbers, and fixed
wording; never a mention, an answer, a term or any other string read from a record or a source. A
text-free release carries the same figures, so anything a chart draws is public; :meth:`BarChart.strings`
lists every string drawn, which the drawn file records as its description and the leak gate reads.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

NAME_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""A chart's name: the file name of its figure, lower-case words joined by hyphens."""


@dataclass(frozen=True)
class Series:
    """One named series of a chart: a number per category."""

    name: str
    values: tuple[float, ...]


@dataclass(frozen=True)
class BarChart:
    """A bar chart of counts or measures per category: one series, several side by side, or stacked.

    ``horizontal`` lays the categories down the side (long or many category names); ``share`` says the
    values are fractions of 1, drawn as percentages."""

    name: str
    title: str
    categories: tuple[str, ...]
    series: tuple[Series, ...]
    category_axis: str
    value_axis: str
    stacked: bool = False
    horizontal: bool = False
    share: bool = False

    def __post_init__(self) -> None:
        if not NAME_PATTERN.fullmatch(self.name):
            raise ValueError(f"chart name {self.name!r}: expected lower-case words joined by hyphens")
        if not self.series:
            raise ValueError(f"chart {self.name!r} has no series")
        for series in self.series:
            if len(series.values) != len(self.categories):
                raise ValueError(
                    f"chart {self.name!r}: series {series.name!r} has {len(series.values)} values "
                    f"for {len(self.categories)} categories"
                )

    def strings(self) -> list[str]:
        """Every string the chart draws but its numbers: title, axis titles, category and series names."""
        names = [series.name for series in self.series] if len(self.series) > 1 else []
        return [self.title, self.category_axis, self.value_axis, *self.categories, *names]

    @classmethod
    def counts(
        cls, name: str, title: str, counts: Mapping[str, float], category_axis: str, value_axis: str, **layout: bool
    ) -> BarChart:
        """A chart of one series, a bar per key of ``counts`` in its order."""
        series = (Series(value_axis, tuple(counts.values())),)
        return cls(name, title, tuple(counts), series, category_axis, value_axis, **layout)

    @classmethod
    def histogram(
        cls, name: str, title: str, values: Sequence[int], category_axis: str, value_axis: str, bins: int = 12
    ) -> BarChart:
        """How many ``values`` (whole numbers, 0 or more) fall in each bin of equal, round width (1, 2 or 5 times
        a power of ten, at most about ``bins`` bins), from the bin of the smallest value to that of the largest."""
        smallest, largest = min(values, default=0), max(values, default=0)
        width = _round_width((largest - smallest) / bins)
        counts = Counter(value // width for value in values)
        labels = {
            index: f"{index * width:,}" if width == 1 else f"{index * width:,}-{(index + 1) * width - 1:,}"
            for index in range(smallest // width, largest // width + 1)
        }
        return cls.counts(
            name, title, {label: counts[index] for index, label in labels.items()}, category_axis, value_axis
        )


def _round_width(at_least: float) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50... that is at least ``at_least``."""
    scale = 1
    while True:
        for step in (1, 2, 5):
            if step * scale >= at_least:
                return step * scale
        scale *= 10
