"""``clincorp baseline sdoh RELEASE --name rules``: a transparent rule baseline of ours (not Lybarger et al.'s).

A trigger lexicon per challenge event type; a sentence's first trigger of a type makes one event (sentences cut at
line breaks and terminal punctuation, :func:`sentences`), with the nearest status cue of that sentence (by
characters, either side; none: the trigger's own default). Each event
gets its required arguments (Lybarger et al. 2022, Table 1) with their values: ``Status`` (StatusTime or
StatusEmploy) on the cue, or on the trigger when there is none, and for LivingStatus ``Type`` (TypeLiving) on
the nearest living cue. Writes every note of each split as BRAT, ``DIR/<split>/<source>/<doc>.txt|.ann``, which
``clincorp score sdoh RELEASE DIR/<split> --split <split>`` scores with the n2c2 2022 criteria.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from clinical_corpora.builders.contract.baseline import BaselineRequest, held_splits
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.exporters.brat import write_brat_document
from clinical_corpora.builders.sources.brat.annotations import Attribute, BratDocument, Event, TextBound
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.corpora.sdoh.exports import note_annotations
from clinical_corpora.corpora.sdoh.scoring import DEFAULT_CRITERIA, events_from_brat
from clinical_corpora.validation.metrics.sdoh import Counts, count_document

CONFIG = "sdoh"
TRIGGERS: dict[str, str] = {
    "Alcohol": r"alcohol|etoh|drinks?|drinking|beer|wine|liquor",
    "Drug": r"drugs?|illicits?|marijuana|cannabis|cocaine|heroin|ivdu|substance use",
    "Tobacco": r"tobacco|smok(?:es|er|ing|ed)|cigarettes?|cigs",
    "Employment": r"works|working|employed|unemployed|retired|disability|student|homemaker|job",
    "LivingStatus": r"lives|living|resides|homeless",
}
"""Each challenge event type's trigger words (whole words, any case)."""
STATUS_TIME: dict[str, str] = {
    "none": r"denies|denied|no|never|negative|non-?smoker|abstains",
    "past": r"quit|former(?:ly)?|stopped|remote|previously|prior|ex-?smoker|sober",
    "future": r"plans? to|will",
    "current": r"current(?:ly)?|daily|occasional(?:ly)?|socially|active|heavy|still",
}
STATUS_EMPLOY: dict[str, str] = {
    "unemployed": r"unemployed",
    "retired": r"retired",
    "on_disability": r"disability",
    "student": r"student",
    "homemaker": r"homemaker",
    "employed": r"works|working|employed|job",
}
TYPE_LIVING: dict[str, str] = {
    "homeless": r"homeless|shelter",
    "alone": r"alone",
    "with_family": r"husband|wife|spouse|family|daughter|son|children|parents?|partner|mother|father",
    "with_others": r"friends?|roommates?|others",
}
DEFAULT_TIME = "current"
"""StatusTime when no cue is in the trigger's sentence (a mention of a habit is most often a current one)."""


class Cue(NamedTuple):
    start: int
    end: int
    value: str


def _words(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"\b(?:{pattern})\b", re.IGNORECASE)


def _compiled(values: dict[str, str]) -> list[tuple[str, re.Pattern[str]]]:
    return [(value, _words(pattern)) for value, pattern in values.items()]


_TRIGGERS = _compiled(TRIGGERS)
_ANY_TRIGGER = _words("|".join(TRIGGERS.values()))
_STATUS_TIME, _STATUS_EMPLOY, _TYPE_LIVING = (_compiled(values) for values in (STATUS_TIME, STATUS_EMPLOY, TYPE_LIVING))


def find_cues(text: str, compiled: list[tuple[str, re.Pattern[str]]], start: int, end: int) -> list[Cue]:
    """Every cue of ``compiled`` (value → its words) in ``text[start:end]``."""
    return [
        Cue(match.start(), match.end(), value)
        for value, words in compiled
        for match in words.finditer(text, start, end)
    ]


def nearest(cues: list[Cue], start: int, end: int) -> Cue | None:
    """The cue closest to ``start``–``end`` (a cue on it is at distance 0); the earlier one of equals."""

    def distance(cue: Cue) -> int:
        return max(cue.start - end, start - cue.end, 0)

    return min(sorted(cues), key=distance, default=None)


def note_events(text: str) -> Iterator[tuple[str, Cue, list[tuple[str, str, Cue]]]]:
    """(event type, trigger, [(role, argument type, cue)]): each sentence's first trigger of each type."""
    if _ANY_TRIGGER.search(text) is None:
        return
    for sentence_start, sentence_end in sentences(text):
        for event_type, words in _TRIGGERS:
            match = words.search(text, sentence_start, sentence_end)
            if match is not None:
                trigger = Cue(match.start(), match.end(), event_type)
                yield event_type, trigger, _arguments(text, event_type, trigger, (sentence_start, sentence_end))


_SENTENCE_END = re.compile(r"[.!?;](?=\s)|\n")


def sentences(text: str) -> Iterator[tuple[int, int]]:
    """The rules' sentences: ``text`` cut after a line break, and after ``.``, ``!``, ``?`` or ``;`` before white
    space (an abbreviation's full stop cuts too: the rules are transparent, not a segmenter's)."""
    start = 0
    for end in _SENTENCE_END.finditer(text):
        yield start, end.end()
        start = end.end()
    if start < len(text):
        yield start, len(text)


def _arguments(text: str, event_type: str, trigger: Cue, sentence: tuple[int, int]) -> list[tuple[str, str, Cue]]:
    if event_type == "Employment":
        status = nearest(find_cues(text, _STATUS_EMPLOY, *sentence), trigger.start, trigger.end)
        return [("Status", "StatusEmploy", status or Cue(trigger.start, trigger.end, "employed"))]
    time = nearest(find_cues(text, _STATUS_TIME, *sentence), trigger.start, trigger.end)
    arguments = [("Status", "StatusTime", time or Cue(trigger.start, trigger.end, DEFAULT_TIME))]
    if event_type == "LivingStatus":
        living = nearest(find_cues(text, _TYPE_LIVING, *sentence), trigger.start, trigger.end)
        if living is not None:
            arguments.append(("Type", "TypeLiving", living))
    return arguments


def note_document(text: str) -> BratDocument:
    """The BRAT annotations of the rules' events on one note."""
    bounds: list[TextBound] = []
    events: list[Event] = []
    attributes: list[Attribute] = []
    for event_type, trigger, arguments in note_events(text):
        trigger_id = f"T{len(bounds) + 1}"
        bounds.append(TextBound.from_offsets(trigger_id, event_type, ((trigger.start, trigger.end),), text))
        roles = []
        for role, argument_type, cue in arguments:
            bound_id = f"T{len(bounds) + 1}"
            bounds.append(TextBound.from_offsets(bound_id, argument_type, ((cue.start, cue.end),), text))
            attributes.append(Attribute(f"A{len(attributes) + 1}", f"{argument_type}Val", bound_id, cue.value))
            roles.append((role, bound_id))
        events.append(Event(f"E{len(events) + 1}", event_type, trigger_id, tuple(roles)))
    return BratDocument(textbounds=tuple(bounds), events=tuple(events), attributes=tuple(attributes))


def rules(request: BaselineRequest) -> list[str]:
    """Every note of each split, with the rules' events, as BRAT under ``DIR/<split>/``."""
    request.release.of(CONFIG, CONFIG)
    written = []
    for split in request.splits(CONFIG):
        notes = 0
        for _, note in request.release.view.rows(CONFIG, split):
            write_brat_document(request.out, note["id"], note["text"], note_document(note["text"]))
            notes += 1
        written.append(f"{Path(request.out) / split} ({notes} notes)")
    return written


def card_scores(view: ReleaseView) -> list[BaselineScore]:
    """The rules on each split holding notes, scored with the n2c2 2022 criteria (the scorer's defaults) as
    ``clincorp score sdoh`` scores the BRAT folder :func:`rules` writes: micro precision, recall and F1 over every
    trigger and argument."""
    scores = []
    for split in held_splits(view, CONFIG):
        total = Counts()
        for _, note in view.rows(CONFIG, split):
            gold = events_from_brat(note_annotations(note) or BratDocument(), note["id"])
            predicted = events_from_brat(note_document(note["text"]), note["id"])
            total.add(count_document(gold, predicted, DEFAULT_CRITERIA))
        overall = total.summary()[0]
        metrics = {"precision": overall.precision, "recall": overall.recall, "f1": overall.f1}
        scores.append(BaselineScore(baseline="rules", split=split, scorer="sdoh", metrics=metrics))
    return scores
