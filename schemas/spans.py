"""Shared offset and span types, and the span checks every record model uses.

Offsets are 0-based character offsets into the record's own text, end exclusive, stored as int32. A span's
``start`` and ``end`` are marked as the offsets of its ``text`` (:class:`OffsetOf`), so re-anchoring moves them
with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from typing import Annotated, Any, ClassVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_corpora.core.errors import excerpt
from clinical_corpora.schemas.bounded import Identifier
from clinical_corpora.schemas.licensed import LicensedText, OffsetOf


class Int32:
    """Marker in ``Annotated[int, Int32]``: the field is stored as ``int32`` in the release."""


INT32_MAX = 2**31 - 1
Offset = Annotated[int, Field(ge=0, le=INT32_MAX), Int32]
TextStart = Annotated[Offset, OffsetOf("text", "start")]
"""Where the struct's licensed ``text`` starts."""
TextEnd = Annotated[Offset, OffsetOf("text", "end")]
"""Where the struct's licensed ``text`` ends (exclusive)."""


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
    start: TextStart
    end: TextEnd
    text: LicensedText


class Fragment(Span):
    """One contiguous piece of a discontinuous text-bound."""


class TextBoundSpan(Span):
    """A BRAT text-bound: its covering span (the first fragment's start to the last one's end), its ``T`` id and,
    when discontinuous, its fragments (empty for a contiguous one)."""

    id: Identifier
    fragments: list[Fragment]

    @model_validator(mode="after")
    def _fragments_cover_the_span(self) -> TextBoundSpan:
        if self.fragments and (
            len(self.fragments) < 2 or (self.fragments[0].start, self.fragments[-1].end) != (self.start, self.end)
        ):
            raise ValueError(
                f"{self.id}: a discontinuous span needs two or more fragments running from its "
                f"start {self.start} to its end {self.end}"
            )
        return self


def span_mismatch(text: str, start: int, end: int, span_text: str) -> str | None:
    """Why ``span_text`` is not ``text[start:end]`` (or the span is reversed), or None when it is."""
    if end < start:
        return f"span {start}-{end} ends before it starts"
    if end > len(text):
        return f"span {start}-{end} ends past the end of the text ({len(text)} characters)"
    if text[start:end] != span_text:
        return f"span {start}-{end} has text {excerpt(span_text)} but the text there is {excerpt(text[start:end])}"
    return None


def _models_in(annotation: Any) -> set[type[BaseModel]]:
    """The model classes an annotation can hold (through Optional, list, Annotated...)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {annotation}
    return {model for arg in get_args(annotation) for model in _models_in(arg)}


Collector = Callable[[Any, list["Span"]], None]


@cache
def _collector(model: type[BaseModel]) -> Collector:
    """A function appending every Span inside an instance of ``model`` (itself included) to a list.

    Built once per class: fields that hold no models are skipped, a field holding one model (or a list of
    it) is walked by that model's collector with no type test per value, lists of plain spans are
    extended in one call.
    """
    steps = [
        (name, _field_collector(field.annotation, models))
        for name, field in model.model_fields.items()
        if (models := _models_in(field.annotation))
    ]
    is_span = issubclass(model, Span)

    def collect(value: Any, found: list[Span]) -> None:
        if is_span:
            found.append(value)
        for name, collect_field in steps:
            collect_field(getattr(value, name), found)

    return collect


def _field_collector(annotation: Any, models: set[type[BaseModel]]) -> Collector:
    """The collector of a field holding ``models`` (as ``annotation`` declares them)."""
    if len(models) == 1:
        (model,) = models
        leaf = issubclass(model, Span) and not _nested(model)
        if get_origin(annotation) is list and get_args(annotation) == (model,):
            if leaf:
                return lambda spans, found: found.extend(spans)

            def collect_each(values: Any, found: list[Span]) -> None:
                collect = _collector(model)
                for value in values:
                    collect(value, found)

            return collect_each
        if annotation is model:
            return (
                (lambda span, found: found.append(span))
                if leaf
                else (lambda value, found: _collector(model)(value, found))
            )
    return _collect_any


def _nested(model: type[BaseModel]) -> bool:
    return any(_models_in(field.annotation) for field in model.model_fields.values())


def _collect_any(value: Any, found: list[Span]) -> None:
    if isinstance(value, (list, tuple)):
        for item in value:
            _collect_any(item, found)
    elif isinstance(value, BaseModel):
        _collector(type(value))(value, found)


def collect_spans(value: BaseModel) -> list[Span]:
    """Every Span reachable from a model through its fields, lists and nested models, depth first."""
    found: list[Span] = []
    _collector(type(value))(value, found)
    return found


def check_spans(text: str, spans: Iterable[Span]) -> None:
    """Raise ValueError naming the first span that is reversed or whose text is not the slice of ``text``."""
    length = len(text)
    for span in spans:
        start, end = span.start, span.end
        if not start <= end <= length or text[start:end] != span.text:
            raise ValueError(span_mismatch(text, start, end, span.text))


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
