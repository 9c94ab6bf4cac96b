"""The record model of a corpus the generic BRAT builder builds, made from its corpus.yaml ``brat:`` declaration.

One row per note: its ``id`` (the note's path in the source, without suffix), its ``text`` (``LicensedText``:
a text-free release keeps none of it), its ``entities`` and, when relation types are declared, its
``relations``. An entity is a :class:`~clinical_corpora.schemas.spans.TextBoundSpan` (its covering span, ``T``
id and, when discontinuous, its fragments) with its ``label`` and, when attributes are declared, its
``attributes``: one field per attribute, its value or None (a ``binary`` attribute: true or false). Each closed
set is a ``Literal``, hence a ClassLabel in the release.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model, model_validator

from clinical_corpora.core.brat_declaration import BINARY, BratDeclaration
from clinical_corpora.schemas.bounded import Identifier
from clinical_corpora.schemas.licensed import LicensedText
from clinical_corpora.schemas.spans import TextBoundSpan, TextRecord, unique_ids

ENTITIES = "entities"
RELATIONS = "relations"
ATTRIBUTES = "attributes"


class BratRelation(BaseModel):
    """An ``R`` line: its id, its label and the ids of its two entities (``arg1``, ``arg2``), in the order the
    line gives them."""

    model_config = ConfigDict(extra="forbid")
    id: Identifier


class BratNote(TextRecord):
    """A note: its relations join entities of the same note; every id is unique in it."""

    id: Identifier
    text: LicensedText

    @model_validator(mode="after")
    def _relations_join_entities(self) -> BratNote:
        entities: list[Any] = getattr(self, ENTITIES)
        relations: list[Any] = getattr(self, RELATIONS, [])
        unique_ids([*entities, *relations], what="annotation")
        ids = {entity.id for entity in entities}
        for relation in relations:
            for target in (relation.arg1, relation.arg2):
                if target not in ids:
                    raise ValueError(f"relation {relation.id} joins {target}, which is no entity of the note")
        return self


def _closed(names: list[str]) -> Any:
    return Literal[tuple(names)]


def note_model(name: str, declaration: BratDeclaration) -> type[BratNote]:
    """The record model of corpus ``name``'s notes (its classes named after the corpus)."""
    prefix = "".join(part.title() for part in name.split("_"))
    entity_fields: dict[str, Any] = {"label": (_closed(declaration.entities), ...)}
    if declaration.attributes:
        attribute_fields: dict[str, Any] = {
            attribute: (bool, False) if values == BINARY else (_closed(values) | None, None)
            for attribute, values in declaration.attributes.items()
        }
        attributes = create_model(f"{prefix}Attributes", __config__=ConfigDict(extra="forbid"), **attribute_fields)
        entity_fields[ATTRIBUTES] = (attributes, ...)
    entity = create_model(f"{prefix}Entity", __base__=TextBoundSpan, **entity_fields)
    note_fields: dict[str, Any] = {ENTITIES: (list[entity], ...)}  # type: ignore[valid-type]
    if declaration.relations:
        relation_fields: dict[str, Any] = {"label": (_closed(declaration.relations), ...)}
        relation_fields |= {"arg1": (Identifier, ...), "arg2": (Identifier, ...)}
        relation = create_model(f"{prefix}Relation", __base__=BratRelation, **relation_fields)
        note_fields[RELATIONS] = (list[relation], ...)  # type: ignore[valid-type]
    return create_model(f"{prefix}Note", __base__=BratNote, **note_fields)
