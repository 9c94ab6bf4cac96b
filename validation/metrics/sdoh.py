"""n2c2 2022 Track 2 (SDOH) event scorer, reimplementing Lybarger's official ``brat_scoring``.

Rules (Lybarger et al. 2022, the challenge's evaluation criteria, and the official ``score_brat_sdoh``),
matched by default, quirks included:

- documents are paired by relative path; a document in one folder only is an error; a ``.txt``
  without its ``.ann`` is a document with no events (as brat shows it);
- every event in the files is scored, the five challenge types and any other SHAC type alike;
- triggers are aligned one-to-one per document, only within the same event (trigger) type:
  ``exact`` (same span) and ``overlap`` (at least one shared character) greedily in gold order,
  each gold trigger taking the first free prediction in prediction order; ``min_dist`` greedily
  by smallest distance between span centres (ties: gold order, then prediction order), no cap;
- arguments are compared only inside aligned events, by text-bound type (not role), gold order
  then prediction order, one-to-one; span-with-value ("labeled") arguments also need equal
  subtypes, and ``label`` ignores their span;
- ``partial`` counts tokens of span-only arguments (spaCy's rule-based English tokenizer, the
  one ``en_core_web_sm`` ships, on whitespace-normalised text): NT/NP count each span's
  tokens and every overlapping same-type pair adds the length of its longest common token run;
  the official code lets such pairs match many-to-many, and so does this one;
- a discontinuous text-bound is scored on its covering span (first start, last end);
- documents go through ``builders.sources.shac``, the release's conversion, without its label
  scheme: an event argument that is an event, or a second value on a text-bound, is an error;
- counts are keyed by (event type, argument type, subtype); triggers as (event type, Trigger,
  N/A) and arguments without a value with subtype N/A.

Deviations, on purpose: the OVERALL row is always written (the official omits it for
``partial``) and an undefined P, R or F1 is written as 0.0 (the official leaves the OVERALL F1
cell empty when nothing matched).

This module scores events already in memory; reading BRAT folders and converting their documents
(``score_folders``, ``events_from_brat``) lives with the corpus in ``corpora.sdoh.scoring``.
"""

from __future__ import annotations

import csv
import difflib
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple, get_args

from clinical_corpora.core.counts import PRFCounts, Scored
from clinical_corpora.core.errors import ClincorpError

TriggerCriterion = Literal["exact", "overlap", "min_dist"]
SpanCriterion = Literal["exact", "overlap", "partial"]
LabeledCriterion = Literal["exact", "overlap", "label"]

LABELED_ARGUMENTS: tuple[str, ...] = ("StatusTime", "StatusEmploy", "TypeLiving")
TRIGGER = "Trigger"
NOT_APPLICABLE = "N/A"
OVERALL = "OVERALL"
CSV_COLUMNS = ("event", "argument", "subtype", "NT", "NP", "TP", "P", "R", "F1")
DETAILED_CSV_COLUMNS = ("id", *CSV_COLUMNS)

Key = tuple[str, str, str]


class EventSpan(NamedTuple):
    """A trigger or argument as the scorer sees it: text-bound type, covering span, subtype.

    (A named tuple: documents are scored by the thousand and it is built several times faster than
    a frozen dataclass.)
    """

    type: str
    start: int
    end: int
    text: str
    subtype: str | None = None


class SdohEvent(NamedTuple):
    """An event: its trigger (whose type is the event type) and its arguments in file order."""

    trigger: EventSpan
    arguments: tuple[EventSpan, ...] = ()


@dataclass(frozen=True, slots=True)
class ScoreRow(Scored):
    """Counts and scores of one (event, argument, subtype) key, or of OVERALL."""

    event: str
    argument: str
    subtype: str
    nt: int
    np: int
    tp: int

    @property
    def counts(self) -> PRFCounts:
        return PRFCounts(self.tp, self.np, self.nt)

    def csv_fields(self) -> tuple[str | int | float, ...]:
        return (
            self.event, self.argument, self.subtype, self.nt, self.np, self.tp,
            self.precision, self.recall, self.f1,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class ScoringCriteria:
    """The three equivalence criteria and which argument types carry a value."""

    trigger: TriggerCriterion = "overlap"
    span: SpanCriterion = "exact"
    labeled: LabeledCriterion = "label"
    labeled_arguments: frozenset[str] = frozenset(LABELED_ARGUMENTS)

    def __post_init__(self) -> None:
        for name, value, allowed in (
            ("score_trig", self.trigger, get_args(TriggerCriterion)),
            ("score_span", self.span, get_args(SpanCriterion)),
            ("score_labeled", self.labeled, get_args(LabeledCriterion)),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")


@dataclass(slots=True)
class Counts:
    """Gold (NT), predicted (NP) and matched (TP) counts by key."""

    gold: dict[Key, int] = field(default_factory=dict)
    predicted: dict[Key, int] = field(default_factory=dict)
    matched: dict[Key, int] = field(default_factory=dict)

    def add(self, other: Counts) -> None:
        """Add another document's counts; like the official Counter sums, zero counts vanish."""
        for total, part in (
            (self.gold, other.gold),
            (self.predicted, other.predicted),
            (self.matched, other.matched),
        ):
            for key, value in part.items():
                if value:
                    total[key] = total.get(key, 0) + value

    def rows(self) -> list[ScoreRow]:
        """One row per key, sorted by event, argument, subtype."""
        keys = sorted(self.gold.keys() | self.predicted.keys() | self.matched.keys())
        return [
            ScoreRow(*key, self.gold.get(key, 0), self.predicted.get(key, 0),
                     self.matched.get(key, 0))
            for key in keys
        ]  # fmt: skip

    def summary(self) -> list[ScoreRow]:
        """The OVERALL row (micro over all keys) followed by ``rows()``."""
        rows = self.rows()
        overall = ScoreRow(
            OVERALL, OVERALL, OVERALL,
            sum(row.nt for row in rows), sum(row.np for row in rows), sum(row.tp for row in rows),
        )  # fmt: skip
        return [overall, *rows]


def count_document(gold: Sequence[SdohEvent], predicted: Sequence[SdohEvent], criteria: ScoringCriteria) -> Counts:
    """NT, NP and TP counts of one document."""
    counts = Counts(_event_counts(gold, criteria), _event_counts(predicted, criteria))
    matched = counts.matched
    for gold_index, predicted_index in _aligned_triggers(gold, predicted, criteria.trigger):
        gold_event, predicted_event = gold[gold_index], predicted[predicted_index]
        event_type = gold_event.trigger.type
        key = _key(event_type, TRIGGER, gold_event.trigger.subtype)
        matched[key] = matched.get(key, 0) + 1
        _add_argument_matches(matched, event_type, gold_event.arguments, predicted_event.arguments, criteria)
    return counts


def score_collections(
    gold: Mapping[str, Sequence[SdohEvent]],
    predicted: Mapping[str, Sequence[SdohEvent]],
    score_trig: TriggerCriterion = "overlap",
    score_span: SpanCriterion = "exact",
    score_labeled: LabeledCriterion = "label",
    *,
    labeled_arguments: Iterable[str] = LABELED_ARGUMENTS,
) -> list[ScoreRow]:
    """Score two in-memory collections keyed by document id; OVERALL row first.

    Raises ValueError listing the documents present in one collection only.
    """
    criteria = ScoringCriteria(score_trig, score_span, score_labeled, frozenset(labeled_arguments))
    problem = unpaired_documents(gold.keys(), predicted.keys())
    if problem:
        raise ValueError(problem)
    total = Counts()
    for doc_id in sorted(gold):
        total.add(count_document(gold[doc_id], predicted[doc_id], criteria))
    return total.summary()


def write_scores_csv(rows: Iterable[ScoreRow], path: str | Path) -> None:
    """Write rows with the official columns ``event,argument,subtype,NT,NP,TP,P,R,F1``."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        writer.writerows(row.csv_fields() for row in rows)


def detailed_csv_path(out: str | Path) -> Path:
    """Where the per-document scores go: ``scores.csv`` -> ``scores_detailed.csv``."""
    out = Path(out)
    return out.with_name(f"{out.stem}_detailed{out.suffix or '.csv'}")


def unpaired_documents(gold_ids: Iterable[str], predicted_ids: Iterable[str]) -> str:
    """What is wrong with pairing the two id lists (documents in one only), or "" when they pair."""
    gold_set, predicted_set = set(gold_ids), set(predicted_ids)
    only_gold, only_predicted = sorted(gold_set - predicted_set), sorted(predicted_set - gold_set)
    parts = []
    if only_gold:
        parts.append("documents only in gold: " + ", ".join(only_gold))
    if only_predicted:
        parts.append("documents only in predictions: " + ", ".join(only_predicted))
    return "; ".join(parts)


def _key(event_type: str, argument_type: str, subtype: str | None) -> Key:
    return (event_type, argument_type, NOT_APPLICABLE if subtype is None else subtype)


def _event_counts(events: Sequence[SdohEvent], criteria: ScoringCriteria) -> dict[Key, int]:
    counts: dict[Key, int] = {}
    by_token = criteria.span == "partial"
    for event in events:
        event_type = event.trigger.type
        key = _key(event_type, TRIGGER, event.trigger.subtype)
        counts[key] = counts.get(key, 0) + 1
        for argument in event.arguments:
            key = _key(event_type, argument.type, argument.subtype)
            counted_by_token = by_token and argument.type not in criteria.labeled_arguments
            counts[key] = counts.get(key, 0) + (len(_tokens(argument.text)) if counted_by_token else 1)
    return counts


def _overlaps(gold: EventSpan, predicted: EventSpan) -> bool:
    return max(gold.start, predicted.start) < min(gold.end, predicted.end)


def _aligned_triggers(
    gold: Sequence[SdohEvent], predicted: Sequence[SdohEvent], criterion: TriggerCriterion
) -> list[tuple[int, int]]:
    predicted_by_type: dict[str, list[int]] = {}
    for index, event in enumerate(predicted):
        predicted_by_type.setdefault(event.trigger.type, []).append(index)
    if criterion == "min_dist":
        return _aligned_by_distance(gold, predicted, predicted_by_type)
    pairs: list[tuple[int, int]] = []
    taken: set[int] = set()
    for gold_index, event in enumerate(gold):
        trigger = event.trigger
        for predicted_index in predicted_by_type.get(trigger.type, ()):
            if predicted_index in taken:
                continue
            candidate = predicted[predicted_index].trigger
            if (
                (candidate.start, candidate.end) == (trigger.start, trigger.end)
                if criterion == "exact"
                else _overlaps(trigger, candidate)
            ):
                taken.add(predicted_index)
                pairs.append((gold_index, predicted_index))
                break
    return pairs


def _aligned_by_distance(
    gold: Sequence[SdohEvent],
    predicted: Sequence[SdohEvent],
    predicted_by_type: dict[str, list[int]],
) -> list[tuple[int, int]]:
    # Twice the distance between span centres: same order as the official float distances.
    candidates = sorted(
        (
            abs(
                event.trigger.start + event.trigger.end
                - predicted[predicted_index].trigger.start - predicted[predicted_index].trigger.end
            ),
            gold_index,
            predicted_index,
        )
        for gold_index, event in enumerate(gold)
        for predicted_index in predicted_by_type.get(event.trigger.type, ())
    )  # fmt: skip
    pairs: list[tuple[int, int]] = []
    gold_taken: set[int] = set()
    predicted_taken: set[int] = set()
    for _, gold_index, predicted_index in candidates:
        if gold_index not in gold_taken and predicted_index not in predicted_taken:
            gold_taken.add(gold_index)
            predicted_taken.add(predicted_index)
            pairs.append((gold_index, predicted_index))
    return pairs


def _add_argument_matches(
    matched: dict[Key, int],
    event_type: str,
    gold: Sequence[EventSpan],
    predicted: Sequence[EventSpan],
    criteria: ScoringCriteria,
) -> None:
    gold_taken: set[int] = set()
    predicted_taken: set[int] = set()
    for gold_index, argument in enumerate(gold):
        labeled = argument.type in criteria.labeled_arguments
        many_to_many = not labeled and criteria.span == "partial"
        for predicted_index, candidate in enumerate(predicted):
            if candidate.type != argument.type:
                continue
            if not many_to_many and (gold_index in gold_taken or predicted_index in predicted_taken):
                continue
            value = (
                _labeled_value(argument, candidate, criteria.labeled)
                if labeled
                else _span_value(argument, candidate, criteria.span)
            )
            if value > 0:
                gold_taken.add(gold_index)
                predicted_taken.add(predicted_index)
                key = _key(event_type, argument.type, argument.subtype)
                matched[key] = matched.get(key, 0) + value


def _labeled_value(gold: EventSpan, predicted: EventSpan, criterion: LabeledCriterion) -> int:
    if gold.subtype != predicted.subtype:
        return 0
    if criterion == "exact":
        return int((gold.start, gold.end) == (predicted.start, predicted.end))
    if criterion == "overlap":
        return int(_overlaps(gold, predicted))
    return 1


def _span_value(gold: EventSpan, predicted: EventSpan, criterion: SpanCriterion) -> int:
    if criterion == "exact":
        return int((gold.start, gold.end) == (predicted.start, predicted.end))
    if not _overlaps(gold, predicted):
        return 0
    if criterion == "overlap":
        return 1
    gold_tokens, predicted_tokens = _tokens(gold.text), _tokens(predicted.text)
    matcher = difflib.SequenceMatcher(None, gold_tokens, predicted_tokens)
    return matcher.find_longest_match(0, len(gold_tokens), 0, len(predicted_tokens)).size


@functools.lru_cache(maxsize=65536)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(token.text for token in _english_tokenizer()(" ".join(text.split())))


@functools.cache
def _english_tokenizer() -> Callable[[str], Iterable]:
    try:
        import spacy  # imported lazily: only ``partial`` counts tokens
    except ImportError as error:
        raise ClincorpError(
            "--score-span partial counts tokens with spaCy's English tokenizer, as the official n2c2 scorer "
            "does; install it with: pip install 'clinical-corpora[spacy]'"
        ) from error
    return spacy.blank("en").tokenizer
