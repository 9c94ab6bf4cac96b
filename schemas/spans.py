"""Shared offset and span types, and the span checks every record model uses.

Offsets are 0-based character offsets into the record's own text, end exclusive, stored as int32.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Annotated, Any, ClassVar, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Int32:
    """Marker in ``Annotated[int, Int32]``: the field is stored as ``int32`` in the release."""


INT32_MAX = 2**31 - 1
Offset = Annotated[int, Field(ge=0, le=INT32_MAX), Int32]


class Record(BaseModel):
    """Base of every released record: strict fields, a stable id field for uniqueness checks."""

    model_config = ConfigDict(extra="forbid", frozen=False)
    id_field: ClassVar[str] = "id"

    @property
    def record_id(self) -> str:
        """The value of the id field, as text."""
        return str(getattr(self, self.id_field))


class Span(BaseModel):
    """A contiguous character span; ``text`` must equal ``record_text[start:end]`` (see check_spans)."""

    model_config = ConfigDict(extra="forbid")
    start: Offset
    end: Offset
    text: str


def span_mismatch(text: str, start: int, end: int, span_text: str) -> str | None:
    """Why ``span_text`` is not ``text[start:end]`` (or the span is reversed), or None when it is."""
    if end < start:
        return f"span {start}-{end} ends before it starts"
    if end > len(text):
        return f"span {start}-{end} ends past the end of the text ({len(text)} characters)"
    if text[start:end] != span_text:
        return f"span {start}-{end} has text {span_text!r} but the text there is {text[start:end]!r}"
    return None


def _holds_models(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_holds_models(arg) for arg in get_args(annotation))


@cache
def _model_fields_of(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields of ``model`` that can hold nested models (the only ones worth walking)."""
    return tuple(name for name, field in model.model_fields.items() if _holds_models(field.annotation))


def collect_spans(value: Any, found: list[Span] | None = None) -> list[Span]:
    """Every Span reachable from a model, list or nested model, depth first."""
    found = [] if found is None else found
    if isinstance(value, list | tuple):
        for item in value:
            collect_spans(item, found)
    elif isinstance(value, BaseModel):
        if isinstance(value, Span):
            found.append(value)
        for name in _model_fields_of(type(value)):
            collect_spans(getattr(value, name), found)
    return found


def check_spans(text: str, spans: Iterable[Span]) -> None:
    """Raise ValueError naming the first span that is reversed or whose text is not the slice of ``text``."""
    for span in spans:
        if span.start > span.end or text[span.start:span.end] != span.text or span.end > len(text):
            raise ValueError(span_mismatch(text, span.start, span.end, span.text))


class TextRecord(Record):
    """A record whose every nested Span is checked against its text field (declared by the subclass)."""

    text_field: ClassVar[str] = "text"

    @model_validator(mode="after")
    def _spans_match_text(self) -> TextRecord:
        check_spans(getattr(self, self.text_field), collect_spans(self))
        return self


def unique_ids(items: Iterable[Any], attribute: str = "id", what: str = "item") -> None:
    """Raise ValueError when two items share an id."""
    seen: set[Any] = set()
    for item in items:
        key = getattr(item, attribute)
        if key in seen:
            raise ValueError(f"duplicate {what} id {key!r}")
        seen.add(key)
