"""A BRAT document cut to what corpus.yaml's ``brat:`` section declares, each annotation outside it quarantined.

An entity of an undeclared type, a relation of an undeclared type, an attribute that is undeclared, gives a
value outside its closed set (or a value to a ``binary`` one, or none to a valued one), lies on anything but an
entity or repeats one the entity has; an event, an annotator note, a normalisation or an equivalence, which the
declaration has no place for: each is handed to ``on_broken`` naming its file, line and reason, and left out with
what depends on it (``builders.sources.brat.resolution``), the rest of the note kept.
"""

from __future__ import annotations

from pathlib import Path

from clinical_corpora.builders.sources.brat.annotations import Attribute, BratDocument, OnBroken
from clinical_corpora.builders.sources.brat.resolution import Pruning
from clinical_corpora.core.brat_declaration import BINARY, BratDeclaration
from clinical_corpora.core.errors import SourceError

NOT_DECLARED = "corpus.yaml's brat: section declares entities, relations and entity attributes only"


def declared_only(
    doc: BratDocument, path: str | Path, declaration: BratDeclaration, on_broken: OnBroken
) -> BratDocument:
    """``doc`` without the annotations ``declaration`` has no place for, each reported to ``on_broken``."""
    pruning = Pruning(path, doc)
    for bound in doc.textbounds:
        if bound.type not in declaration.entities:
            pruning.leave_out(bound.id, _undeclared(bound.id, "entity type", bound.type, declaration.entities))
    for relation in doc.relations:
        if relation.type not in declaration.relations:
            pruning.leave_out(
                relation.id, _undeclared(relation.id, "relation type", relation.type, declaration.relations)
            )
    entities = {bound.id for bound in doc.textbounds}
    first: dict[tuple[str, str], str] = {}
    for attribute in doc.attributes:
        misfit = _attribute_misfit(attribute, declaration, entities, first)
        if misfit is not None:
            pruning.leave_out(attribute.id, misfit)
    for event in doc.events:
        pruning.leave_out(event.id, f"{event.id} is an event ({event.type}): {NOT_DECLARED}")
    for kind, kept_aside in (("annotator note", doc.notes), ("normalisation", doc.normalizations)):
        for annotation in kept_aside:
            pruning.leave_out(annotation.id, f"{annotation.id} is an {kind} on {annotation.target}: {NOT_DECLARED}")
    kept = pruning.apply(on_broken)
    for equivalence in kept.equivalences:
        members = " ".join(equivalence.members)
        on_broken(SourceError(path, f"an equivalence ({equivalence.type} {members}): {NOT_DECLARED}"))
    return BratDocument(kept.textbounds, (), kept.attributes, kept.relations, lines=kept.lines)


def _undeclared(identifier: str, what: str, name: str, declared: list[str]) -> str:
    return f"{identifier} has {what} {name}, which corpus.yaml does not declare (declared: {', '.join(declared)})"


def _attribute_misfit(
    attribute: Attribute, declaration: BratDeclaration, entities: set[str], first: dict[tuple[str, str], str]
) -> str | None:
    """Why ``attribute`` does not fit the declaration, or None; ``first`` remembers each entity's attributes."""
    name, value, identifier = attribute.name, attribute.value, attribute.id
    values = declaration.attributes.get(name)
    if values is None:
        return _undeclared(identifier, "attribute", name, list(declaration.attributes) or ["none"])
    if attribute.target not in entities:
        return f"{identifier} puts {name} on {attribute.target}: attributes are declared for entities only"
    if values == BINARY and value is not None:
        return f"{identifier} gives {name} the value {value}: corpus.yaml declares {name} binary (no value)"
    if values != BINARY and value not in values:
        given = "no value" if value is None else f"the value {value}"
        return f"{identifier} gives {name} {given}: expected one of {', '.join(values)}"
    earlier = first.setdefault((attribute.target, name), identifier)
    if earlier != identifier:
        return f"{identifier} sets {name} on {attribute.target} again (first set by {earlier})"
    return None
