"""``clincorp baseline snomed_el RELEASE --name dictionary``: a dictionary linker of the kind the SNOMED CT Entity
Linking Challenge's best entries built (Davidson et al. 2025): every synonym of the release's terminology (its
``concepts`` config; an FSN without its semantic tag), matched on lower-cased tokens, longest match first, left to
right, spans never overlapping, one concept per span. A term several concepts share goes to the concept whose
FSN it is, else to the smallest concept id. Writes ``<split>.csv`` (note_id,start,end,concept_id), which
``clincorp score snomed RELEASE <split>.csv --split <split>`` scores with the challenge's character IoU.

The release's terminology holds only the concepts its notes annotate (every split): this dictionary knows which
concepts occur, so it is an upper bound for the same linker over all of SNOMED CT.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from typing import Any

from clinical_corpora.builders.contract.baseline import BaselineRequest, held_splits
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.contract.text_units import tokenize
from clinical_corpora.core.annotations import SpanAnnotation
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.corpora.snomed_el.exports import split_annotations
from clinical_corpora.validation.metrics.iou import macro_char_iou, support_weighted_char_iou

NOTES, CONCEPTS = "snomed_el", "concepts"
SEMANTIC_TAG = re.compile(r"\s*\([^()]+\)\s*$")
Terms = dict[tuple[str, ...], int]


def _words(text: str) -> tuple[str, ...]:
    return tuple(text[start:end].lower() for start, end in tokenize(text))


def dictionary(concepts: Iterable[dict[str, Any]]) -> Terms:
    """Lower-cased token sequence → concept id: FSNs (without tag) first, then synonyms, smallest id first."""
    ordered = sorted(concepts, key=lambda concept: concept["concept_id"])
    terms: Terms = {}
    for concept in ordered:
        terms.setdefault(_words(SEMANTIC_TAG.sub("", concept["fsn"])), concept["concept_id"])
    for concept in ordered:
        for synonym in concept["synonyms"]:
            terms.setdefault(_words(synonym), concept["concept_id"])
    terms.pop((), None)
    return terms


def longest_matches(text: str, terms: Terms) -> Iterator[tuple[int, int, int]]:
    """(start, end, concept id) of the longest term at each token, left to right, never overlapping."""
    tokens = tokenize(text)
    words = [text[start:end].lower() for start, end in tokens]
    longest = max(map(len, terms), default=0)
    position = 0
    while position < len(tokens):
        for length in range(min(longest, len(tokens) - position), 0, -1):
            concept = terms.get(tuple(words[position : position + length]))
            if concept is not None:
                yield tokens[position][0], tokens[position + length - 1][1], concept
                position += length
                break
        else:
            position += 1


def card_scores(view: ReleaseView) -> list[BaselineScore]:
    """The dictionary linker on each split holding notes, scored with the challenge's character IoU as ``clincorp
    score snomed`` scores its ``<split>.csv`` (without the bootstrap intervals)."""
    terms = dictionary(row for _, row in view.rows(CONCEPTS))
    scores = []
    for split in held_splits(view, NOTES):
        gold = list(split_annotations(view, split))
        predicted = [
            SpanAnnotation(note["note_id"], *match)
            for _, note in view.rows(NOTES, split)
            for match in longest_matches(note["text"], terms)
        ]
        metrics = {
            "macro_char_iou": macro_char_iou(gold, predicted),
            "support_weighted_char_iou": support_weighted_char_iou(gold, predicted),
        }
        scores.append(BaselineScore(baseline="dictionary", split=split, scorer="snomed", metrics=metrics))
    return scores


def dictionary_linker(request: BaselineRequest) -> list[str]:
    """One ``<split>.csv`` of dictionary matches per split of the notes."""
    request.release.of("snomed_el", NOTES)
    view = request.release.view
    terms = dictionary(row for _, row in view.rows(CONCEPTS))
    written = []
    for split in request.splits(NOTES):
        path = request.out / f"{split}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="") as stream:
            writer = csv.writer(stream, lineterminator="\n")
            writer.writerow(("note_id", "start", "end", "concept_id"))
            for _, note in view.rows(NOTES, split):
                writer.writerows((note["note_id"], *match) for match in longest_matches(note["text"], terms))
        written.append(str(path))
    return written
