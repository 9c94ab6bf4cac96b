"""The ``sdoh_bigbio_kb`` config: a SHAC note in BigBio's ``kb`` schema.

Every text-bound of the note (triggers and arguments included) is an entity typed as in the ``.ann``;
a span-with-value argument's subtype (its ``<Type>Val`` attribute) is a ``normalized`` entry
``{db_name: "<Type>Val", db_id: <subtype>}``; events keep their trigger spans and argument roles;
``R`` lines are relations, ``*`` lines coreferences, ``N`` lines ``normalized`` entries of what they
name (an event's go to its trigger). Ids are prefixed with the note id so they are unique in a split.
Annotator notes (``#`` lines), the note source and ``has_ann_file`` have no place in the schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from clinical_corpora.corpora.sdoh.records import SdohNote, TextBoundSpan
from clinical_corpora.schemas.bigbio import KbDocument, laid_out
from clinical_corpora.validation.metrics.sdoh import NOT_APPLICABLE

CONFIG = "sdoh_bigbio_kb"


def kb_document(note: SdohNote) -> KbDocument:
    """The BigBio ``kb`` view of one note."""
    prefix = f"{note.id}_"
    normalized: dict[str, list[dict[str, str]]] = {}
    trigger_of = {event.id: event.trigger.id for event in note.events} if note.normalizations else {}
    for normalization in note.normalizations:
        target = trigger_of.get(normalization.target, normalization.target)
        normalized.setdefault(target, []).append({"db_name": normalization.resource, "db_id": normalization.entry})
    entities: dict[str, dict[str, Any]] = {}
    for bound, bound_type, subtype in _text_bounds(note):
        if bound.id not in entities:
            values = [] if subtype == NOT_APPLICABLE else [{"db_name": f"{bound_type}Val", "db_id": subtype}]
            if bound.id in normalized:
                values += normalized[bound.id]
            entities[bound.id] = {
                "id": prefix + bound.id,
                "type": bound_type,
                **_located(bound),
                "normalized": values,
            }
    return KbDocument.model_validate(
        {
            "id": note.id,
            "document_id": note.id,
            "passages": laid_out([(prefix + "text", "note", note.text)])[0],
            "entities": list(entities.values()),
            "events": [
                {
                    "id": prefix + event.id,
                    "type": event.type,
                    "trigger": _located(event.trigger),
                    "arguments": [
                        {"role": argument.role, "ref_id": prefix + argument.id} for argument in event.arguments
                    ],
                }
                for event in note.events
            ],
            "coreferences": [
                {"id": f"{prefix}{equivalence.type}{index}", "entity_ids": [prefix + m for m in equivalence.members]}
                for index, equivalence in enumerate(note.equivalences, start=1)
            ],
            "relations": [
                {
                    "id": prefix + relation.id,
                    "type": relation.type,
                    "arg1_id": prefix + relation.arguments[0].target,
                    "arg2_id": prefix + relation.arguments[1].target,
                    "normalized": normalized.get(relation.id, []),
                }
                for relation in note.relations
            ],
        }
    )


def _text_bounds(note: SdohNote) -> Iterator[tuple[TextBoundSpan, str, str]]:
    """Every text-bound of the note with its type and subtype (``N/A`` for a trigger), in file order of their
    events, then the unused ones."""
    for event in note.events:
        yield event.trigger, event.type, NOT_APPLICABLE
        for argument in event.arguments:
            yield argument, argument.type, argument.subtype
    for bound in note.unused_textbounds:
        yield bound, bound.type, bound.subtype


def _located(bound: TextBoundSpan) -> dict[str, list[Any]]:
    """BigBio's ``text`` and ``offsets``: one entry per fragment (the span itself when contiguous)."""
    if not bound.fragments:
        return {"text": [bound.text], "offsets": [[bound.start, bound.end]]}
    return {"text": [piece.text for piece in bound.fragments], "offsets": [[p.start, p.end] for p in bound.fragments]}
