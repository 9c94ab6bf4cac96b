"""What a dataset card says, as data: titled sections with text, a table, named numbers and figures.

A corpus's builder describes its statistics and agreement as :class:`CardSection` objects; the release
renders them into the card and draws each :class:`BarChart` into a figure. They are data so that a release
can record the sections only its build could measure (agreement with the annotators' files) in
``validation.json``, and ``clincorp validate`` can draw the card again from the data and that record and
compare it byte for byte.

A chart holds no record text, by construction of what the corpora put in it: category and series names are
label names of closed sets (event types, hierarchies, relation types, modalities), split, source and
annotator names, numbers and bins of numbers, and fixed wording; never a mention, an answer, a term or any
other string read from a record or a source. :meth:`BarChart.strings` lists every string drawn, which the
drawn file records as its description.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ConfigDict, TypeAdapter

Cell = str | int | float | bool | None
"""A value of a card table's cell."""
FORBID = ConfigDict(extra="forbid", ser_json_inf_nan="constants")

NAME_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""A chart's name: the file name of its figure, lower-case words joined by hyphens."""


@dataclass(frozen=True)
class Series:
    """One named series of a chart: a number per category."""

    __pydantic_config__ = FORBID

    name: str
    values: tuple[float, ...]


@dataclass(frozen=True)
class BarChart:
    """A bar chart of counts or measures per category: one series, several side by side, or stacked.

    ``horizontal`` lays the categories down the side (long or many category names); ``share`` says the
    values are fractions of 1, drawn as percentages."""

    __pydantic_config__ = FORBID

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


@dataclass
class Table:
    """A small table for the dataset card."""

    __pydantic_config__ = FORBID

    columns: list[str]
    rows: Sequence[Sequence[Cell]]

    def markdown(self) -> str:
        """A GitHub-flavoured Markdown table (pipes in cells escaped)."""
        head = ["| " + " | ".join(map(_cell, self.columns)) + " |", "|" + "|".join("---" for _ in self.columns) + "|"]
        return "\n".join([*head, *("| " + " | ".join(map(_cell, row)) + " |" for row in self.rows)]) + "\n"


def _cell(value: object) -> str:
    return number_text(value).replace("|", "\\|").replace("\n", " ")


def number_text(value: object) -> str:
    """A value as people read it: whole numbers with thousands separators (``12,345``), other numbers with at
    most four decimals and no trailing zeros (``0.8905``, ``6.5``); anything else as it is."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if math.isnan(value):
        return "n/a"
    text = f"{value:,.4f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


@dataclass
class CardSection:
    """A titled section of the dataset card: optional text, optional table, and figures drawn from the same
    numbers (:class:`BarChart`), shown before the table."""

    __pydantic_config__ = FORBID

    title: str
    text: str = ""
    table: Table | None = None
    values: dict[str, float] = field(default_factory=dict)
    """The section's numbers by stable key (``chains``, ``mentions.Finding``), which corpus.yaml's
    ``published:`` numbers name; not printed (the table shows them)."""
    counted: tuple[str, ...] = ()
    """Prefixes of ``values`` keys that count occurrences (``mention_string.Finding.``): an absent key under
    one counts 0 (the string or label does not occur), not "not computed"."""
    figures: list[BarChart] = field(default_factory=list)


SECTIONS: TypeAdapter[list[CardSection]] = TypeAdapter(list[CardSection])
"""Card sections to and from JSON (``validation.json`` records those only the build could measure)."""


def plain_sections(sections: Sequence[CardSection]) -> list[CardSection]:
    """``sections`` with every number a Python number (a corpus's statistics may hold numpy's), checked as
    :data:`SECTIONS` reads them back: what is recorded is what is read."""
    return SECTIONS.validate_python([_plain(section) for section in sections])


def _plain(value: Any) -> Any:
    if type(value).__module__ == "numpy" and hasattr(value, "item"):  # a numpy scalar
        return value.item()
    if hasattr(value, "__dataclass_fields__"):
        return {name: _plain(getattr(value, name)) for name in value.__dataclass_fields__}
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value
