"""Two or more annotations of one document drawn on its text (two annotators, or gold and a system's
predictions): a span marked alike by all gets one label, a span labelled differently one label per annotator,
a span some did not mark the label of those who did, each coloured by that verdict."""

from __future__ import annotations

from dataclasses import dataclass

from clinical_corpora.builders.contract.display import DocumentDisplay, Mark
from clinical_corpora.builders.view.layout import Laid, lay_out
from clinical_corpora.builders.view.pages import MarkView

VERDICT_COLOURS = {"match": "v-match", "label differs": "v-label", "only": "v-only"}
PREFIX = "o"
"""Before the number of a compared mark in its element id (a page's own marks are ``m<number>``)."""


@dataclass
class ComparedPassage:
    anchor: str
    title: str
    laid: Laid
    marks: list[MarkView]


def compared_passages(doc: DocumentDisplay, annotators: dict[str, DocumentDisplay]) -> list[ComparedPassage]:
    """The passages of ``doc`` that hold text, each with every annotator's spans on it."""
    names = sorted(annotators)
    drawn = []
    for index, passage in enumerate(doc.passages):
        if passage.text is None:
            continue
        spans: dict[tuple[tuple[int, int], ...], list[str]] = {}
        for number, name in enumerate(names):
            for other in annotators[name].passages:
                for mark in other.marks if other.key == passage.key else []:
                    labels = spans.setdefault(tuple(mark.fragments), [""] * len(names))
                    labels[number] = f"{labels[number]} + {mark.label}" if labels[number] else mark.label
        marks: list[MarkView] = []
        placed: list[tuple[int, Mark]] = []
        for fragments, labels in sorted(spans.items()):
            for view in _marks(len(marks), fragments, dict(zip(names, labels, strict=True)), index):
                marks.append(view)
                placed.append((view.number, Mark(view.key, "markable", view.label, list(fragments))))
        drawn.append(ComparedPassage(f"o{index}", passage.title, lay_out(passage.text, placed, []), marks))
    return drawn


def _marks(first: int, fragments: tuple[tuple[int, int], ...], labels: dict[str, str], passage: int) -> list[MarkView]:
    """The labels one span gets: one when all agree, else one per annotator who marked it."""
    present = {name: label for name, label in labels.items() if label}
    offsets = "; ".join(f"[{start}, {end})" for start, end in fragments)
    if len(present) == len(labels) and len(set(present.values())) == 1:
        shown = [("all", next(iter(present.values())), "match")]
    else:
        verdict = "label differs" if len(present) == len(labels) else "only"
        shown = [(name, label, verdict) for name, label in present.items()]
    views: list[MarkView] = []
    for name, label, verdict in shown:
        text = label if name == "all" else f"{name}: {label}"
        details = (
            "marked alike by all"
            if verdict == "match"
            else f"{verdict}: " + "; ".join(f"{other} {value or '(not marked)'}" for other, value in labels.items())
        )
        number = first + len(views)
        zero = len(fragments) == 1 and fragments[0][0] == fragments[0][1]
        colour = VERDICT_COLOURS[verdict]
        key = f"{PREFIX}{number}"
        views.append(MarkView(number, "compared", key, text, colour, details, offsets, offsets, "", zero, passage))
    return views
