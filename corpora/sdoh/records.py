"""SDOH (SHAC, n2c2 2022 Track 2) record models: one note with its BRAT events, nothing dropped.

A text-bound is stored with its covering span (``start`` of the first fragment, ``end`` of the
last, ``text`` the slice between them, as the scorer compares it); a discontinuous one also lists
its ``fragments`` (empty for a contiguous span). Span-with-value arguments carry their subtype
(the ``<Type>Val`` attribute); span-only arguments carry ``N/A``, the scorer's subtype for them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from clinical_corpora.schemas.bounded import Identifier, Label
from clinical_corpora.schemas.licensed import LicensedText
from clinical_corpora.schemas.spans import TextBoundSpan, TextRecord, unique_ids

Split = Literal["train", "dev", "test"]
NoteSource = Literal["mimic", "uw"]
EventType = Literal[
    # the five challenge types (Lybarger et al. 2022, Table 1)
    "Alcohol", "Drug", "Tobacco", "Employment", "LivingStatus",
    # the other SHAC types, carried but outside the challenge
    "Insurance", "Country", "Race", "SexualOrient", "GenderID", "PhysActivity", "EnviroExposure",
]  # fmt: skip
Subtype = Literal[
    "N/A",
    "none", "current", "past", "future",
    "employed", "unemployed", "retired", "on_disability", "student", "homemaker",
    "alone", "with_family", "with_others", "homeless",
    "yes", "no",
]  # fmt: skip

SUBTYPES_BY_ARGUMENT: dict[str, tuple[str, ...]] = {
    "StatusTime": ("none", "current", "past", "future"),
    "StatusEmploy": ("employed", "unemployed", "retired", "on_disability", "student", "homemaker"),
    "TypeLiving": ("alone", "with_family", "with_others", "homeless"),
    "StatusInsure": ("yes", "no"),  # Insurance, outside the challenge
}
"""The closed value set of each span-with-value argument type (its ``<Type>Val`` attribute)."""

REQUIRED_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "Alcohol": ("StatusTime",),
    "Drug": ("StatusTime",),
    "Tobacco": ("StatusTime",),
    "Employment": ("StatusEmploy",),
    "LivingStatus": ("StatusTime", "TypeLiving"),
}
"""The starred (required) arguments of Lybarger et al. 2022, Table 1, by event type."""

CHALLENGE_EVENT_TYPES: tuple[str, ...] = tuple(REQUIRED_ARGUMENTS)


class Trigger(TextBoundSpan):
    """The text-bound whose type is the event type."""


class Argument(TextBoundSpan):
    """An event argument: its role in the E line (``Type2`` kept as written), text-bound type, subtype."""

    role: Label
    type: Label
    subtype: Subtype


class LooseTextBound(TextBoundSpan):
    """A text-bound that no event uses (kept, not scored)."""

    type: Label
    subtype: Subtype


class Event(BaseModel):
    """An ``E`` line: one trigger and its arguments in file order."""

    model_config = ConfigDict(extra="forbid")
    id: Identifier
    type: EventType
    trigger: Trigger
    arguments: list[Argument]


class RelationArgument(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Label
    target: Identifier


class Relation(BaseModel):
    """An ``R`` line (kept, not scored)."""

    model_config = ConfigDict(extra="forbid")
    id: Identifier
    type: Label
    arguments: list[RelationArgument]


class AnnotatorNote(BaseModel):
    """A ``#`` line."""

    model_config = ConfigDict(extra="forbid")
    id: Identifier
    type: Label
    target: Identifier
    text: LicensedText


class Equivalence(BaseModel):
    """A ``*`` line."""

    model_config = ConfigDict(extra="forbid")
    type: Label
    members: list[Identifier]


class Normalization(BaseModel):
    """An ``N`` line (kept, not scored): ``target`` linked to entry ``entry`` of ``resource``."""

    model_config = ConfigDict(extra="forbid")
    id: Identifier
    type: Label
    target: Identifier
    resource: Label
    entry: Identifier
    text: LicensedText


class SdohNote(TextRecord):
    """One social-history note (config ``sdoh``); ``id`` is ``<split>/<source>/<file stem>``.

    ``has_ann_file`` is False for a ``.txt`` that came without its ``.ann`` (released, as brat shows
    it, with no annotations).
    """

    id: Identifier
    split: Split
    source: NoteSource
    text: LicensedText
    events: list[Event]
    unused_textbounds: list[LooseTextBound]
    relations: list[Relation]
    notes: list[AnnotatorNote]
    equivalences: list[Equivalence]
    normalizations: list[Normalization]
    has_ann_file: bool

    @model_validator(mode="after")
    def _ids_are_unique_and_references_resolve(self) -> SdohNote:
        unique_ids(self.events, what="event")
        unique_ids(self.relations, what="relation")
        unique_ids(self.notes, what="note")
        unique_ids(self.normalizations, what="normalisation")
        if self.relations or self.equivalences or self.normalizations:
            known = {event.id for event in self.events} | {bound.id for bound in self.unused_textbounds}
            known |= {span.id for event in self.events for span in (event.trigger, *event.arguments)}
            references = [
                (relation.id, argument.target) for relation in self.relations for argument in relation.arguments
            ]
            references += [
                (f"{equivalence.type} equivalence", member)
                for equivalence in self.equivalences
                for member in equivalence.members
            ]
            relations = {relation.id for relation in self.relations}
            references += [
                (normalization.id, normalization.target)
                for normalization in self.normalizations
                if normalization.target not in relations
            ]
            for owner, target in references:
                if target not in known:
                    raise ValueError(f"{owner} refers to {target}, which is no text-bound or event of this note")
        return self
