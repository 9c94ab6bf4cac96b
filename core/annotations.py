"""Span annotation types shared by the readers that produce them and the metrics that score them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SpanAnnotation:
    """One challenge annotation: ``text[start:end]`` of a note is linked to a SNOMED CT concept.

    ``line`` is the CSV line it was read from (0 when made in code, e.g. a model's prediction).
    """

    note_id: str
    start: int
    end: int
    concept_id: int
    line: int = 0


__all__ = ["SpanAnnotation"]
