"""A card's Markdown: a section with its figures and table, and prose from corpus.yaml shown as the text it
is, not as Markdown or HTML."""

from __future__ import annotations

import re

from clinical_corpora.core.card import BarChart, CardSection

_MARKUP = re.compile(r"([\\`*_\[\]<>])")
FIGURES_FOLDER = "figures"
CARD_FILE = "README.md"


def plain(text: str) -> str:
    """``text`` with every character Markdown or HTML would read as markup backslash-escaped: a placeholder
    such as ``<split>/<doc>`` is shown, not swallowed as an HTML tag."""
    return _MARKUP.sub(r"\\\1", text)


def figure_path(chart: BarChart) -> str:
    """The figure's path inside the release folder."""
    return f"{FIGURES_FOLDER}/{chart.name}.png"


def figure_markdown(chart: BarChart) -> str:
    """The card's image link to the figure, relative to the card (so it shows on the Hub and GitHub)."""
    return f"![{chart.title}]({figure_path(chart)})\n"


def section_markdown(section: CardSection) -> str:
    parts = [f"## {section.title}\n"]
    if section.text:
        parts.append(section.text.strip() + "\n")
    parts += [figure_markdown(chart) for chart in section.figures]
    if section.table is not None:
        parts.append(section.table.markdown())
    return "\n".join(parts)
