"""Resolving the references between a BRAT document's annotations, leaving out broken ones with what needs them.

Broken annotations: by default the first one (in line order) raises a SourceError. Given
``on_broken``, :func:`builders.sources.brat.standoff.parse_brat` hands each one to it and leaves it
out of the document together with what depends on it, so one bad line costs that annotation, not
the document:

- a broken text-bound takes with it the events it triggers, the argument slots that use it (the
  event stays, without that argument), relations on it, and attributes, normalisations and notes
  on any of these; equivalences lose it as a member (and go when fewer than two members remain);
- a broken event (trigger missing or of another type) goes the same way; an event argument that
  names a missing id is left out on its own, the event stays;
- a broken relation, attribute, normalisation, note or equivalence goes alone (with the notes,
  attributes and normalisations on it).

Each error names the broken line and ends with the annotations depending on it (``; depending on
it: E2 argument Amount:T7 (line 16), A1 (line 5)``), which are left out with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from clinical_corpora.builders.sources.brat.annotations import (
    Attribute,
    BratDocument,
    Equivalence,
    Event,
    Normalization,
    Note,
    OnBroken,
    Relation,
    TextBound,
)
from clinical_corpora.core.errors import SourceError


class Pruning:
    """Annotations of a read document to leave out, each for its reason; :meth:`apply` leaves them
    out with what depends on them (the rules of the module docstring) and reports each reason to
    ``on_broken``, naming its line."""

    def __init__(self, path: str | Path, doc: BratDocument) -> None:
        self.path = str(path)
        self.doc = doc
        self._pending: PendingAnnotations | None = None  # made on the first leave_out: most documents need none

    def _pruned(self) -> PendingAnnotations:
        if self._pending is None:
            self._pending = PendingAnnotations.from_document(self.path, self.doc)
        return self._pending

    def leave_out(self, identifier: str, reason: str) -> None:
        """Leave out annotation ``identifier`` (with its dependents) because of ``reason``."""
        self._pruned().remove(identifier, reason)

    def leave_out_argument(self, event_id: str, role: str, target: str, reason: str) -> None:
        """Leave out the argument ``role:target`` of event ``event_id`` because of ``reason``."""
        self._pruned().remove_argument(event_id, role, target, reason)

    def apply(self, on_broken: OnBroken) -> BratDocument:
        """The document without what was left out; ``doc`` itself when nothing was."""
        return self.doc if self._pending is None else self._pending.finish(on_broken)


_Where = int | str
"""Where a problem is: its line, or an annotation id when the document was not read from a file."""


def _problem_order(problem: tuple[_Where, str]) -> tuple[int, str]:
    where = problem[0]
    return (where, "") if isinstance(where, int) else (1 << 62, where)


class PendingAnnotations:
    """The annotations of one document, their references not yet resolved: :meth:`finish` resolves them, leaves
    out the broken annotations (ids in ``broken``) with what depends on them and reports each problem."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.line_of: dict[str, int] = {}
        self.textbounds: dict[str, TextBound] = {}
        self.events: dict[str, Event] = {}
        self.attributes: list[Attribute] = []
        self.relations: dict[str, Relation] = {}
        self.normalizations: list[Normalization] = []
        self.notes: list[Note] = []
        self.equivalences: list[tuple[Equivalence, int]] = []
        self.problems: list[tuple[_Where, str]] = []
        self.broken: dict[str, _Where] = {}  # id → where the problem that left it out is
        self.left_out: dict[_Where, list[str]] = {}  # problem → what was left out with it

    def error(self, message: str, line: int) -> SourceError:
        return SourceError(self.path, message, line=line)

    def where(self, identifier: str) -> _Where:
        """The line of ``identifier``, or the id itself for a document not read from a file."""
        return self.line_of.get(identifier) or identifier

    @classmethod
    def from_document(cls, path: str, doc: BratDocument) -> PendingAnnotations:
        """The annotations of ``doc``, to leave some out with ``finish``."""
        pending = cls(path, "")
        pending.line_of = dict(doc.lines)
        pending.textbounds = {textbound.id: textbound for textbound in doc.textbounds}
        pending.events = {event.id: event for event in doc.events}
        pending.attributes = list(doc.attributes)
        pending.relations = {relation.id: relation for relation in doc.relations}
        pending.normalizations = list(doc.normalizations)
        pending.notes = list(doc.notes)
        pending.equivalences = [(equivalence, 0) for equivalence in doc.equivalences]
        for identifier in pending.textbounds.keys() | pending.events.keys() | pending.relations.keys():
            pending.line_of.setdefault(identifier, 0)
        ids = (
            [a.id for a in pending.attributes] + [n.id for n in pending.normalizations] + [n.id for n in pending.notes]
        )
        for identifier in ids:
            pending.line_of.setdefault(identifier, 0)
        return pending

    def remove(self, identifier: str, message: str) -> None:
        """Leave out annotation ``identifier`` (and what depends on it) for the reason ``message``."""
        where = self.where(identifier)
        self.problems.append((where, message))
        self.broken[identifier] = where
        self.textbounds.pop(identifier, None)
        self.events.pop(identifier, None)
        self.relations.pop(identifier, None)
        self.attributes = [a for a in self.attributes if a.id != identifier]
        self.normalizations = [n for n in self.normalizations if n.id != identifier]
        self.notes = [n for n in self.notes if n.id != identifier]

    def remove_argument(self, event_id: str, role: str, target: str, message: str) -> None:
        """Leave out one argument of event ``event_id`` for the reason ``message``."""
        self.problems.append((self.where(event_id), message))
        event = self.events[event_id]
        arguments = tuple(pair for pair in event.arguments if pair != (role, target))
        self.events[event_id] = Event(event.id, event.type, event.trigger, arguments)

    def _resolves(self, owner: str, target: str, allowed: Mapping[str, object], what: str, line: _Where = 0) -> bool:
        """Whether ``target`` is in ``allowed``; if not, ``owner`` (shown as ``owner``, at ``line`` or
        its own line) is left out: with the broken annotation ``target`` came from, or as a problem
        of its own."""
        if target in allowed:
            return True
        line = line or self.where(owner)
        if target in self.broken:
            shown = f"{owner} (line {line})" if isinstance(line, int) else owner
            self.left_out.setdefault(self.broken[target], []).append(shown)
        else:
            self.problems.append((line, f"{owner} refers to {target}, which is not {what} in this file"))
        return False

    def _leave_out(self, identifier: str, line: _Where) -> None:
        """Mark ``identifier`` as left out with the problem its owner line reported."""
        self.broken.setdefault(identifier, line)

    def _kept_events(self) -> dict[str, Event]:
        events: dict[str, Event] = {}
        for event in self.events.values():
            line = self.where(event.id)
            if not self._resolves(event.id, event.trigger, self.textbounds, "a text-bound"):
                self._leave_out(event.id, self.broken.get(event.trigger, line))
                continue
            trigger_type = self.textbounds[event.trigger].type
            if trigger_type != event.type:
                self.problems.append(
                    (
                        line,
                        f"{event.id} has type {event.type} but its trigger {event.trigger} "
                        f"has type {trigger_type}; expected the same type",
                    )
                )
                self._leave_out(event.id, line)
                continue
            events[event.id] = event
        arguments_allowed = {**self.textbounds, **events}
        for event in list(events.values()):
            arguments = tuple(
                (role, target)
                for role, target in event.arguments
                if self._resolves(f"{event.id} argument {role}:{target}", target, arguments_allowed,
                                  "a text-bound or event", self.where(event.id))
            )  # fmt: skip
            if arguments != event.arguments:
                events[event.id] = Event(event.id, event.type, event.trigger, arguments)
        return events

    def finish(self, on_broken: OnBroken) -> BratDocument:
        if self._all_resolved():
            return BratDocument(
                textbounds=tuple(self.textbounds.values()),
                events=tuple(self.events.values()),
                attributes=tuple(self.attributes),
                lines={identifier: line for identifier, line in self.line_of.items() if line},
            )
        events = self._kept_events()
        arguments_allowed = {**self.textbounds, **events}
        relations: dict[str, Relation] = {}
        for relation in self.relations.values():
            if all(
                [self._resolves(relation.id, target, arguments_allowed, "a text-bound or event")
                 for _, target in relation.arguments]
            ):  # fmt: skip
                relations[relation.id] = relation
            else:
                self._leave_out(relation.id, self.where(relation.id))
        annotated = {**arguments_allowed, **relations}
        attributes = [a for a in self.attributes if self._kept(a.id, a.target, annotated, "an annotation")]
        normalizations = [n for n in self.normalizations if self._kept(n.id, n.target, annotated, "an annotation")]
        equivalences = []
        for equivalence, line in self.equivalences:
            members = tuple(
                member
                for member in equivalence.members
                if self._resolves(f"{equivalence.type} equivalence", member, arguments_allowed,
                                  "a text-bound or event", line or f"{equivalence.type} equivalence")
            )  # fmt: skip
            if len(members) >= 2:
                equivalences.append(Equivalence(equivalence.type, members))
        every_id = {identifier: None for identifier in self.line_of if identifier not in self.broken}
        notes = [note for note in self.notes if self._kept(note.id, note.target, every_id, "an annotation")]
        for where, message in sorted(self.problems, key=_problem_order):
            left_out = self.left_out.get(where)
            suffix = f"; depending on it: {', '.join(left_out)}" if left_out else ""
            if isinstance(where, int):
                on_broken(self.error(message + suffix, where))
            else:
                on_broken(SourceError(self.path, message + suffix, record=where))
        return BratDocument(
            textbounds=tuple(self.textbounds.values()),
            events=tuple(events.values()),
            attributes=tuple(attributes),
            relations=tuple(relations.values()),
            notes=tuple(notes),
            equivalences=tuple(equivalences),
            normalizations=tuple(normalizations),
            lines={
                identifier: line for identifier, line in self.line_of.items() if line and identifier not in self.broken
            },
        )

    def _all_resolved(self) -> bool:
        """Whether the document holds only text-bounds, events and attributes, all well formed and
        referring to what is in the file (most documents): ``finish`` then has nothing to leave out."""
        if self.problems or self.broken or self.relations or self.normalizations or self.notes or self.equivalences:
            return False
        textbounds, events = self.textbounds, self.events
        for event in events.values():
            trigger = textbounds.get(event.trigger)
            if trigger is None or trigger.type != event.type:
                return False
            for _, target in event.arguments:
                if target not in textbounds and target not in events:
                    return False
        return all(attribute.target in textbounds or attribute.target in events for attribute in self.attributes)

    def _kept(self, identifier: str, target: str, allowed: Mapping[str, object], what: str) -> bool:
        if self._resolves(identifier, target, allowed, what):
            return True
        self._leave_out(identifier, self.broken.get(target, self.where(identifier)))
        return False
