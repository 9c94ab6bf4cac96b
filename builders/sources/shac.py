"""SHAC events in BRAT: the one conversion of a BRAT document into SDOH events.

The sdoh builder and the n2c2 2022 scorer both read events through :func:`shac_annotations`, with
the same rules:

- every event argument is a text-bound (the reader already requires the trigger to be one);
- a text-bound has at most one value: attributes repeating the first one's name and value add
  nothing, any other attribute on the same annotation is an error;
- with a :class:`ShacScheme` (the release), the event type is one of the scheme's, every attribute
  is ``<Type>Val`` on a text-bound of a ``Type`` the scheme gives a value set, and its value is in
  that set; without one (the scorer, as the official one), any event type and attribute is read.

Errors name the ``.ann`` file and the offending annotation's line. Without ``on_broken`` the first
one raises; with it each is passed to ``on_broken`` and only the broken annotation is left out of
the document (with what depends on it, by the rules of ``builders.sources.brat.resolution``): an event of a
type outside the scheme, an attribute outside the scheme or giving a second value, or the one
argument of an event that is an event.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from clinical_corpora.builders.sources.brat.annotations import (
    Attribute,
    BratDocument,
    Event,
    OnBroken,
    TextBound,
    raise_broken,
)
from clinical_corpora.builders.sources.brat.resolution import Pruning

VALUE_SUFFIX = "Val"


@dataclass(frozen=True)
class ShacScheme:
    """The closed label sets: event types, and the values of each span-with-value argument type."""

    event_types: tuple[str, ...]
    values: Mapping[str, tuple[str, ...]]


class ValuedTextBound(NamedTuple):
    """A text-bound with its value (subtype), None when it has none."""

    textbound: TextBound
    subtype: str | None


@dataclass(frozen=True, slots=True)
class ShacAnnotations:
    """A document's events (their triggers and arguments are keys of ``textbounds``), every text-bound
    with its value, and the text-bounds no event uses; all in file order."""

    events: tuple[Event, ...]
    textbounds: Mapping[str, ValuedTextBound]
    unused_textbounds: tuple[ValuedTextBound, ...]
    document: BratDocument
    """The document read, without the annotations left out as broken."""


def shac_annotations(
    doc: BratDocument, source: str | Path, scheme: ShacScheme | None = None, *, on_broken: OnBroken | None = None
) -> ShacAnnotations:
    """The SHAC events of ``doc``; ``source`` (the ``.ann`` path) names it in errors."""
    doc = _checked(doc, source, scheme, on_broken or raise_broken)
    subtypes = {attribute.target: attribute.value for attribute in doc.attributes}
    spans = {bound.id: ValuedTextBound(bound, subtypes.get(bound.id)) for bound in doc.textbounds}
    used = {event.trigger for event in doc.events}
    used.update(target for event in doc.events for _, target in event.arguments)
    unused = tuple(span for key, span in spans.items() if key not in used)
    return ShacAnnotations(doc.events, spans, unused, doc)


def _checked(doc: BratDocument, source: str | Path, scheme: ShacScheme | None, on_broken: OnBroken) -> BratDocument:
    """``doc`` without the annotations that break the rules, each reported to ``on_broken``."""
    pruning = Pruning(source, doc)
    textbounds = {textbound.id: textbound for textbound in doc.textbounds}
    for event in doc.events:
        if scheme is not None and event.type not in scheme.event_types:
            pruning.leave_out(
                event.id,
                f"{event.id} has event type {event.type}; expected a SHAC event type, "
                f"one of {', '.join(scheme.event_types)}",
            )
            continue
        for role, target in event.arguments:
            if target not in textbounds:
                pruning.leave_out_argument(
                    event.id, role, target, f"{event.id} argument {role}:{target} is an event; expected a text-bound"
                )
    first: dict[str, Attribute] = {}
    for attribute in doc.attributes:
        problem = _value_problem(attribute, textbounds.get(attribute.target), scheme) if scheme else None
        previous = first.setdefault(attribute.target, attribute) if problem is None else attribute
        if problem is None and (previous.name, previous.value) != (attribute.name, attribute.value):
            problem = (
                f"{attribute.id} gives {attribute.target} a second value {attribute.value!r} "
                f"({attribute.name}); {previous.id} gave it {previous.value!r} "
                f"({previous.name}); expected one value per text-bound"
            )
        if problem is not None:
            pruning.leave_out(attribute.id, problem)
    return pruning.apply(on_broken)


def _value_problem(attribute: Attribute, textbound: TextBound | None, scheme: ShacScheme) -> str | None:
    argument_type = attribute.name.removesuffix(VALUE_SUFFIX)
    allowed = scheme.values.get(argument_type)
    if allowed is None or textbound is None or textbound.type != argument_type:
        found = f"a {textbound.type} text-bound" if textbound else "an event or relation"
        names = ", ".join(f"{name}{VALUE_SUFFIX}" for name in scheme.values)
        return (
            f"{attribute.id} puts {attribute.name} on {attribute.target}, {found}; expected "
            f"one of {names} on a text-bound of the type it names"
        )
    if attribute.value not in allowed:
        return f"{attribute.id} {attribute.name} has value {attribute.value!r}; expected one of {', '.join(allowed)}"
    return None
