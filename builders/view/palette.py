"""The viewer's colours: one per chain, event or type, as many as a page needs, none repeated. Hues step by the
golden angle (as colour schemes for many categories do), so neighbours in order of first use differ most; the
lightness cycles too, so two colours far apart in order still differ when their hues come close."""

from __future__ import annotations

GOLDEN_ANGLE = 137.508
LIGHTNESS = (38, 30, 45)
"""Dark enough for white label text on every hue."""


def colour(number: int) -> str:
    """The ``number``-th colour as CSS ``hsl()``."""
    hue = (number * GOLDEN_ANGLE) % 360
    return f"hsl({hue:.1f} 62% {LIGHTNESS[(number // 3) % len(LIGHTNESS)]}%)"


def palette_css(count: int) -> str:
    """CSS classes ``c0`` … ``c<count-1>``: a label's and an underline bar's background, an arc's stroke and its
    arrowhead's fill."""
    rules = []
    for number in range(count):
        value = colour(number)
        rules.append(f".c{number} {{ background: {value}; }} .arc.c{number} {{ stroke: {value}; }}")
        rules.append(f".head.c{number} {{ fill: {value}; }}")
    return "\n".join(rules) + "\n"
