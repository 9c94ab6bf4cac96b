"""Prose from corpus.yaml shown in a card as the text it is, not as Markdown or HTML."""

from __future__ import annotations

import re

_MARKUP = re.compile(r"([\\`*_\[\]<>])")


def plain(text: str) -> str:
    """``text`` with every character Markdown or HTML would read as markup backslash-escaped: a placeholder
    such as ``<split>/<doc>`` is shown, not swallowed as an HTML tag."""
    return _MARKUP.sub(r"\\\1", text)
