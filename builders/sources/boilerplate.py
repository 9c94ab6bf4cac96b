"""jusText's context-sensitive paragraph classification, in time linear in the number of paragraphs.

``justext.core.revise_paragraph_classification`` (jusText 3.0) looks for each short or near-good
paragraph's nearest good or bad neighbour by walking the list from it, so a page of n paragraphs of one
class costs n² steps (0.3 s at 2,000 paragraphs, 10 s at 16,000) and each step recomputes a paragraph's
normalised text. :func:`revise_paragraph_classification` gives the same classes: the neighbours come
from one sweep each way, a heading's look-ahead window (``max_heading_distance`` characters) from prefix
sums of the paragraph lengths, each text measured once. Like jusText's, the first pass compares a
heading with the classes its followers had before the revision began.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Sequence
from itertools import accumulate

from justext.core import MAX_HEADING_DISTANCE_DEFAULT
from justext.paragraph import Paragraph

GOOD_OR_BAD = frozenset({"good", "bad"})
GOOD_BAD_OR_NEARGOOD = frozenset({"good", "bad", "neargood"})


def revise_paragraph_classification(
    paragraphs: Sequence[Paragraph], max_heading_distance: int = MAX_HEADING_DISTANCE_DEFAULT
) -> None:
    """Set each paragraph's ``class_type`` as jusText's function of the same name does (after
    ``classify_paragraphs``)."""
    window_end = _heading_windows([len(paragraph.text) for paragraph in paragraphs], max_heading_distance)
    good_after = _next_of(paragraphs, {"good"})
    for i, paragraph in enumerate(paragraphs):
        paragraph.class_type = paragraph.cf_class
        if paragraph.heading and paragraph.class_type == "short" and good_after[i + 1] < window_end[i]:
            paragraph.class_type = "neargood"
    _classify_short(paragraphs)
    _revise_neargood(paragraphs)
    good_after = _next_of(paragraphs, {"good"})
    for i, paragraph in enumerate(paragraphs):
        if paragraph.heading and paragraph.class_type == "bad" and paragraph.cf_class != "bad":
            if good_after[i + 1] < window_end[i]:
                paragraph.class_type = "good"


def _heading_windows(lengths: list[int], max_distance: int) -> list[int]:
    """For each paragraph i, the end (exclusive) of the paragraphs a heading at i looks at: i+1, i+2, ...
    while the text between i and the one looked at is at most ``max_distance`` characters long."""
    before = [0, *accumulate(lengths)]  # before[k]: characters of paragraphs 0..k-1
    count = len(lengths)
    return [min(count, bisect_right(before, before[i + 1] + max_distance, lo=i + 1)) for i in range(count)]


def _next_of(paragraphs: Sequence[Paragraph], classes: Collection[str]) -> list[int]:
    """``found[k]``: the first index >= k whose class is in ``classes`` (len(paragraphs) when none)."""
    found = [len(paragraphs)] * (len(paragraphs) + 1)
    for k in range(len(paragraphs) - 1, -1, -1):
        found[k] = k if paragraphs[k].class_type in classes else found[k + 1]
    return found


def _neighbours(classes: list[str], wanted: Collection[str]) -> tuple[list[str], list[str]]:
    """For each index, the nearest class in ``wanted`` before it and after it (``bad`` at the ends)."""
    before, after = ["bad"] * len(classes), ["bad"] * len(classes)
    last = "bad"
    for i, found in enumerate(classes):
        before[i] = last
        last = found if found in wanted else last
    last = "bad"
    for i in range(len(classes) - 1, -1, -1):
        after[i] = last
        last = classes[i] if classes[i] in wanted else last
    return before, after


def _classify_short(paragraphs: Sequence[Paragraph]) -> None:
    classes = [paragraph.class_type for paragraph in paragraphs]
    prev_gb, next_gb = _neighbours(classes, GOOD_OR_BAD)
    prev_any, next_any = _neighbours(classes, GOOD_BAD_OR_NEARGOOD)
    for i, paragraph in enumerate(paragraphs):
        if classes[i] != "short":
            continue
        if prev_gb[i] == next_gb[i]:
            paragraph.class_type = prev_gb[i]
        elif (prev_gb[i] == "bad" and prev_any[i] == "neargood") or (next_gb[i] == "bad" and next_any[i] == "neargood"):
            paragraph.class_type = "good"
        else:
            paragraph.class_type = "bad"


def _revise_neargood(paragraphs: Sequence[Paragraph]) -> None:
    """A near-good paragraph between two bad ones is bad, else good; paragraphs before it are already
    revised (jusText revises in place, in order), those after it not yet."""
    _, next_gb = _neighbours([paragraph.class_type for paragraph in paragraphs], GOOD_OR_BAD)
    previous = "bad"
    for i, paragraph in enumerate(paragraphs):
        if paragraph.class_type == "neargood":
            paragraph.class_type = "bad" if (previous, next_gb[i]) == ("bad", "bad") else "good"
        previous = paragraph.class_type if paragraph.class_type in GOOD_OR_BAD else previous
