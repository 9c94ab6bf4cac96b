"""SHAC events in BRAT: the one conversion of a BRAT document into SDOH events.

The sdoh builder and the n2c2 2022 scorer both read events through :func:`shac_annotations`, with
the same rules:

- every event argument is a text-bound (the reader already requires the trigger to be one);
- a text-bound has at most one value: attributes repeating the first one's name and value add
  nothing, any other attribute on the same annotation is an error;
- with a :class:`ShacScheme` (the release), the event type is one of the scheme's, every attribute
  is ``<Type>Val`` on a text-bound of a ``Type`` the scheme gives a value set, and its value is in
  that set; without one (the scorer, as the official one), any event type and attribute is read.

Errors name the ``.ann`` file and the offending annotation id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from clinical_corpora.builders.sources.brat import Attribute, BratDocument, Event, TextBound
from clinical_corpora.core.errors import SourceError

VALUE_SUFFIX = "Val"


@dataclass(frozen=True)
class ShacScheme:
    """The closed label sets: event types, and the values of each span-with-value argument type."""

    event_types: tuple[str, ...]
    values: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class ValuedTextBound:
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


def shac_annotations(doc: BratDocument, source: str | Path, scheme: ShacScheme | None = None) -> ShacAnnotations:
    """The SHAC events of ``doc``; ``source`` (the ``.ann`` path) names it in errors."""
    textbounds = {textbound.id: textbound for textbound in doc.textbounds}
    subtypes = _subtypes(doc, textbounds, source, scheme)
    spans = {key: ValuedTextBound(textbound, subtypes.get(key)) for key, textbound in textbounds.items()}
    used: set[str] = set()
    for event in doc.events:
        if scheme is not None and event.type not in scheme.event_types:
            raise SourceError(
                source,
                f"{event.id} has event type {event.type}; expected a SHAC event type, "
                f"one of {', '.join(scheme.event_types)}",
                record=event.id,
            )
        for role, target in event.arguments:
            if target not in spans:
                raise SourceError(
                    source, f"{event.id} argument {role}:{target} is an event; expected a text-bound", record=event.id
                )
        used.update((event.trigger, *(target for _, target in event.arguments)))
    unused = tuple(span for key, span in spans.items() if key not in used)
    return ShacAnnotations(doc.events, spans, unused)


def _subtypes(
    doc: BratDocument, textbounds: dict[str, TextBound], source: str | Path, scheme: ShacScheme | None
) -> dict[str, str | None]:
    """Annotation id → the value of its attribute, checked against ``scheme`` when given."""
    first: dict[str, Attribute] = {}
    for attribute in doc.attributes:
        if scheme is not None:
            _check_value(attribute, textbounds.get(attribute.target), source, scheme)
        previous = first.setdefault(attribute.target, attribute)
        if (previous.name, previous.value) != (attribute.name, attribute.value):
            raise SourceError(
                source,
                f"{attribute.id} gives {attribute.target} a second value {attribute.value!r} "
                f"({attribute.name}); {previous.id} gave it {previous.value!r} "
                f"({previous.name}); expected one value per text-bound",
                record=attribute.id,
            )
    return {target: attribute.value for target, attribute in first.items()}


def _check_value(attribute: Attribute, textbound: TextBound | None, source: str | Path, scheme: ShacScheme) -> None:
    argument_type = attribute.name.removesuffix(VALUE_SUFFIX)
    allowed = scheme.values.get(argument_type)
    if allowed is None or textbound is None or textbound.type != argument_type:
        found = f"a {textbound.type} text-bound" if textbound else "an event or relation"
        names = ", ".join(f"{name}{VALUE_SUFFIX}" for name in scheme.values)
        raise SourceError(
            source,
            f"{attribute.id} puts {attribute.name} on {attribute.target}, {found}; expected "
            f"one of {names} on a text-bound of the type it names",
            record=attribute.id,
        )
    if attribute.value not in allowed:
        raise SourceError(
            source,
            f"{attribute.id} {attribute.name} has value {attribute.value!r}; expected one of {', '.join(allowed)}",
            record=attribute.id,
        )
