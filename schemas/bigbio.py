"""Record models of BigBio's ``kb`` and ``qa`` schemas (Fries et al. 2022), so a corpus can release
``<corpus>_bigbio_kb`` or ``<corpus>_bigbio_qa`` configs that BigBio-compatible code reads.

The fields and types are BigBio's, field for field: ``text`` of a span is a list of strings and
``offsets`` a list of ``[start, end]`` int32 pairs (one pair per fragment), every ``type`` a plain
string. Offsets index the document text BigBio's schema test builds: the passages' texts joined by
one space. A :class:`KbDocument` checks what that test checks: each passage holds one text and one
offset pair that locate it, each entity and trigger fragment's text is the slice its offsets name, and
every coreference, relation and event argument names an entity (or event) of the document.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Annotated, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_corpora.schemas.bounded import Identifier, Label
from clinical_corpora.schemas.licensed import LicensedText, OffsetOf
from clinical_corpora.schemas.spans import Offset, Record, Span, span_mismatch, unique_ids

OffsetPair = Annotated[list[Offset], Field(min_length=2, max_length=2)]
"""``[start, end]`` of one fragment, end exclusive."""
TextOffsets = Annotated[list[OffsetPair], OffsetOf("text", "pairs")]
"""The offset pair of each string of the struct's licensed ``text`` list."""

PASSAGE_SEPARATOR = " "
"""What BigBio puts between passages when it checks offsets against the document text."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Normalized(_Strict):
    """A link to an entry of a knowledge base or value set."""

    db_name: Label
    db_id: Identifier


class Passage(_Strict):
    id: Identifier
    type: Label
    text: list[LicensedText] = Field(min_length=1, max_length=1)
    offsets: TextOffsets = Field(min_length=1, max_length=1)


class Entity(_Strict):
    id: Identifier
    type: Label
    text: list[LicensedText]
    offsets: TextOffsets
    normalized: list[Normalized]


class Trigger(_Strict):
    text: list[LicensedText]
    offsets: TextOffsets


class EventArgument(_Strict):
    role: Label
    ref_id: Identifier


class Event(_Strict):
    id: Identifier
    type: Label
    trigger: Trigger
    arguments: list[EventArgument]


class Coreference(_Strict):
    id: Identifier
    entity_ids: list[Identifier]


class Relation(_Strict):
    id: Identifier
    type: Label
    arg1_id: Identifier
    arg2_id: Identifier
    normalized: list[Normalized]


class KbDocument(Record):
    """One document in BigBio's ``kb`` schema."""

    id: Identifier
    document_id: Identifier
    passages: list[Passage]
    entities: list[Entity]
    events: list[Event]
    coreferences: list[Coreference]
    relations: list[Relation]

    @property
    def document_text(self) -> str:
        """The text offsets index: the passages' texts joined as BigBio's schema test joins them."""
        return PASSAGE_SEPARATOR.join(text for passage in self.passages for text in passage.text)

    @model_validator(mode="after")
    def _offsets_locate_texts_and_ids_resolve(self) -> KbDocument:
        text = self.document_text
        _check_all_located(text, self.passages, "passage")
        _check_all_located(text, self.entities, "entity")
        for event in self.events:
            _check_located(text, event.trigger.text, event.trigger.offsets, "event", event.id, " trigger")
        for before, after in pairwise(self.passages):
            if after.offsets[0][0] != before.offsets[0][1] + len(PASSAGE_SEPARATOR):
                raise ValueError(f"passage {after.id} does not start one separator after passage {before.id}")
        unique_ids([*self.passages, *self.entities, *self.events, *self.coreferences, *self.relations])
        entities = {entity.id for entity in self.entities}
        referable = entities | {event.id for event in self.events}
        for coreference in self.coreferences:
            _check_refers(coreference.entity_ids, entities, "coreference", coreference.id)
        for event in self.events:  # _check_refers inline: ~12 arguments a document
            for argument in event.arguments:
                if argument.ref_id not in referable:
                    raise ValueError(_unresolved("event", event.id, argument.ref_id))
        for relation in self.relations:
            _check_refers([relation.arg1_id, relation.arg2_id], referable, "relation", relation.id)
        return self


def _check_all_located(text: str, items: list[Passage] | list[Entity], kind: str) -> None:
    """:func:`_check_located` for each item: a located one-fragment item (most of them: ~20 a document) is
    checked inline, any other item (and any error) goes through ``_check_located``."""
    length = len(text)
    for item in items:
        texts, offsets = item.text, item.offsets
        if len(texts) == 1 and len(offsets) == 1:
            start, end = offsets[0]
            if start <= end <= length and text[start:end] == texts[0]:
                continue
        _check_located(text, texts, offsets, kind, item.id)


def _check_located(
    text: str, texts: list[str], offsets: list[list[int]], kind: str, owner: str, part: str = ""
) -> None:
    """Raise ValueError naming ``<kind> <owner><part>`` unless each text is the slice its offsets name (the
    label is built only for an error: this runs for every span of every document)."""
    if len(texts) != len(offsets):
        raise ValueError(f"{kind} {owner}{part}: {len(texts)} texts for {len(offsets)} offset pairs")
    for fragment, (start, end) in zip(texts, offsets, strict=True):
        if start > end or end > len(text) or text[start:end] != fragment:
            raise ValueError(f"{kind} {owner}{part}: {span_mismatch(text, start, end, fragment)}")


def _check_refers(targets: list[str], known: set[str], kind: str, owner: str) -> None:
    """Raise ValueError naming ``<kind> <owner>`` for the first target not in ``known``."""
    for target in targets:
        if target not in known:
            raise ValueError(_unresolved(kind, owner, target))


def _unresolved(kind: str, owner: str, target: str) -> str:
    """Why ``<kind> <owner>``'s reference to ``target`` is an error."""
    return f"{kind} {owner} refers to {target!r}, which is no entity or event of this document"


class QaRecord(Record):
    """One question in BigBio's ``qa`` schema; ``type`` is BigBio's question type (``factoid``, ``yesno``…)."""

    rows_per_row_group: ClassVar[int] = 1_000
    """Each row holds a whole context: a parquet row group (and the writer's buffer) of 1k rows, not 10k."""
    id: Identifier
    question_id: Identifier
    document_id: Identifier
    question: LicensedText
    type: Label
    choices: list[LicensedText]
    context: LicensedText
    answer: list[LicensedText]


def laid_out(passages: Sequence[tuple[str, str, str]]) -> tuple[list[Passage], list[int]]:
    """Passages from ``(id, type, text)`` triples, placed as BigBio's schema test joins them, and the offset
    where each begins (add it to a span's offsets into its own passage)."""
    placed: list[Passage] = []
    starts: list[int] = []
    start = 0
    for passage_id, passage_type, text in passages:
        placed.append(Passage(id=passage_id, type=passage_type, text=[text], offsets=[[start, start + len(text)]]))
        starts.append(start)
        start += len(text) + len(PASSAGE_SEPARATOR)
    return placed, starts


def entity_from_spans(
    entity_id: str, entity_type: str, spans: Sequence[Span], *, shift: int = 0, normalized: Sequence[Normalized] = ()
) -> Entity:
    """An entity with one text and offset pair per span (fragment); ``shift`` is where the spans' passage begins
    (see :func:`laid_out`)."""
    return Entity(
        id=entity_id,
        type=entity_type,
        text=[span.text for span in spans],
        offsets=[[shift + span.start, shift + span.end] for span in spans],
        normalized=list(normalized),
    )
