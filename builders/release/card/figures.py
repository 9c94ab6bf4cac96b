"""The card's figures: each :class:`BarChart` of the card's sections drawn into ``figures/<name>.png``.

PNG rather than SVG: the Hugging Face Hub and GitHub show a PNG a card links to by a relative path, and
its pixels do not depend on the fonts of the reader's machine. The bytes are a function of the chart and
of the installed matplotlib (and the Pillow that encodes its PNG): Agg draws with the DejaVu Sans matplotlib
ships, from matplotlib's built-in settings (never the user's matplotlibrc), and the file holds no date or
software tag, so a release is byte-identical run to run and on every machine with the same versions.

Nothing but a chart's labels and numbers is drawn (see :mod:`clinical_corpora.core.card`): a text-free
release holds no figure, and ``clincorp rehydrate`` draws them again from the restored rows. Every string
drawn is also written, as text, in the PNG's ``Description`` chunk, so what a figure shows can be read as
text; ``clincorp validate`` draws every figure again and requires the same bytes.
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from clinical_corpora.builders.release.card.markdown import figure_path
from clinical_corpora.core.card import BarChart, CardSection, number_text
from clinical_corpora.core.errors import ClincorpError

if TYPE_CHECKING:
    from matplotlib.axes import Axes

DPI = 150
WIDTH_INCHES = 7.0
LEGEND_COLUMNS = 6
LABELLED_BARS = 30
STYLE: dict[str, Any] = {
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 9.0,
    "figure.titlesize": 11.0,
    "figure.titleweight": "bold",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
}


def figure_files(sections: Iterable[CardSection]) -> dict[str, bytes]:
    """Every chart of ``sections`` drawn: its path in the release folder → the PNG's bytes, in the card's
    order. Two charts of one name are an error naming it."""
    charts = [chart for section in sections for chart in section.figures]
    names = [chart.name for chart in charts]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ClincorpError(f"the card's sections draw two figures named {', '.join(repeated)}")
    return {figure_path(chart): png_bytes(chart) for chart in charts}


@functools.lru_cache(maxsize=256)
def png_bytes(chart: BarChart) -> bytes:
    """The chart drawn as a PNG, from matplotlib's built-in settings and :data:`STYLE`. The bytes depend on the
    chart alone, so a chart is drawn once per process (~0.15 s each): a script or test that releases, validates
    and rehydrates a corpus in one process draws its charts once, not three times."""
    from matplotlib import style
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with style.context(["default", STYLE]):  # built-in settings, not the user's matplotlibrc
        figure = Figure(figsize=(WIDTH_INCHES, _height(chart)), dpi=DPI, layout="constrained")
        FigureCanvasAgg(figure)
        figure.suptitle(chart.title, x=0.01, horizontalalignment="left")
        _draw(figure.add_subplot(), chart)
        if len(chart.series) > 1:
            figure.legend(loc="outside lower center", ncols=min(len(chart.series), LEGEND_COLUMNS))
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None, "Description": _description(chart)})
    return buffer.getvalue()


def _height(chart: BarChart) -> float:
    if chart.horizontal:
        return max(2.0, 1.3 + 0.28 * len(chart.categories) * (1 if chart.stacked else len(chart.series)) ** 0.5)
    return 3.6


def _draw(axes: Axes, chart: BarChart) -> None:
    """The bars (side by side, or stacked), their values when one series is drawn, and the labels."""
    positions = list(range(len(chart.categories)))
    grouped = len(chart.series) > 1 and not chart.stacked
    width = 0.8 / len(chart.series) if grouped else 0.7
    base = [0.0] * len(positions)
    for number, series in enumerate(chart.series):
        offset = (number - (len(chart.series) - 1) / 2) * width if grouped else 0.0
        places = [position + offset for position in positions]
        values = [0.0 if math.isnan(value) else value for value in series.values]  # no bar, but its label
        if chart.horizontal:
            bars = axes.barh(places, values, height=width, left=base, label=series.name)
        else:
            bars = axes.bar(places, values, width=width, bottom=base, label=series.name)
        if _labelled(chart):
            labels = [_value_text(chart, value) for value in series.values]
            axes.bar_label(bars, labels=labels, padding=2, fontsize=7)
        if chart.stacked:
            base = [total + value for total, value in zip(base, values, strict=True)]
    _label(axes, chart, positions)


def _labelled(chart: BarChart) -> bool:
    """Whether each bar carries its value: not in a stack, and not when the bars are too many to read them."""
    return not chart.stacked and len(chart.categories) * len(chart.series) <= LABELLED_BARS


def _label(axes: Axes, chart: BarChart, positions: list[int]) -> None:
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    category_axis, value_axis = (axes.yaxis, axes.xaxis) if chart.horizontal else (axes.xaxis, axes.yaxis)
    category_axis.set_ticks(positions, list(chart.categories))
    category_axis.set_label_text(chart.category_axis)
    value_axis.set_label_text(chart.value_axis)
    if _whole(chart) and not chart.share:
        value_axis.set_major_locator(MaxNLocator(integer=True))
    value_axis.set_major_formatter(FuncFormatter(lambda value, _: _tick_text(chart, value)))
    if chart.horizontal:
        axes.margins(x=0.12)  # room for the values at the bars' ends
    else:
        axes.margins(y=0.12)
    if chart.horizontal:
        axes.invert_yaxis()  # the first category on top, as in the table
    elif max(map(len, chart.categories), default=0) * len(chart.categories) > 70:
        for tick in axes.get_xticklabels():
            tick.set_rotation(30)
            tick.set_horizontalalignment("right")
            tick.set_rotation_mode("anchor")


def _value_text(chart: BarChart, value: float) -> str:
    """A bar's value: a share as a percentage, a count as it is, a measure with two decimals (1 as 1.00); a
    measure that could not be taken (κ of a group without pairs) as n/a."""
    if math.isnan(value):
        return "n/a"
    if chart.share:
        return f"{100 * value:.1f}%"
    return number_text(int(value)) if _whole(chart) else f"{value:,.2f}"


def _whole(chart: BarChart) -> bool:
    """Whether every value of the chart is a whole number (counts)."""
    return all(float(value).is_integer() for series in chart.series for value in series.values)


def _tick_text(chart: BarChart, value: float) -> str:
    if chart.share:
        return f"{100 * value:.0f}%"
    return number_text(int(value)) if float(value).is_integer() else number_text(round(value, 2))


def _description(chart: BarChart) -> str:
    """Every string the figure draws (the leak gate reads it; screen readers and search may too)."""
    return " | ".join(chart.strings())
