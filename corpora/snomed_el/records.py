"""Record models of the SNOMED CT Entity Linking corpus (Davidson et al. 2025): notes, concepts, concept statistics.

SNOMED CT concept ids are released as int64: SCTIDs have 6 to 18 digits, more than int32 holds.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from clinical_corpora.core.labels import Hierarchy
from clinical_corpora.schemas.bounded import Identifier
from clinical_corpora.schemas.licensed import LicensedText
from clinical_corpora.schemas.spans import Int32, Record, Span, TextRecord

SctId = Annotated[int, Field(ge=100_000, le=999_999_999_999_999_999)]
"""A SNOMED CT identifier (6-18 digits), stored as int64."""

Split = Literal["train", "test"]
HIERARCHY_NAMES: dict[Hierarchy, str] = {
    "finding": "Clinical finding",
    "procedure": "Procedure",
    "body_structure": "Body structure",
}
"""The challenge's three SNOMED CT hierarchies, by the name of their top concept."""
NonNegative32 = Annotated[int, Field(ge=0), Int32]


class LinkedSpan(Span):
    """A span of the note linked to one active SNOMED CT concept of the three challenge hierarchies."""

    concept_id: SctId
    fsn: LicensedText
    semantic_tag: LicensedText
    hierarchy: Hierarchy


class Note(TextRecord):
    """One MIMIC-IV-Note discharge note with its annotations (sorted by offset, never overlapping)."""

    id_field: ClassVar[str] = "note_id"
    note_id: Identifier
    text: LicensedText
    split: Split
    annotations: list[LinkedSpan]

    @model_validator(mode="after")
    def _spans_are_ordered_disjoint_and_not_blank(self) -> Note:
        previous: LinkedSpan | None = None
        for span in self.annotations:
            if not span.text.strip():
                raise ValueError(f"note {self.note_id}: span {span.start}-{span.end} is only whitespace")
            if previous is not None and span.start < previous.start:
                raise ValueError(
                    f"note {self.note_id}: span {span.start}-{span.end} comes after span "
                    f"{previous.start}-{previous.end}; expected annotations sorted by offset"
                )
            if previous is not None and span.start < previous.end:
                raise ValueError(
                    f"note {self.note_id}: span {span.start}-{span.end} overlaps span "
                    f"{previous.start}-{previous.end} (the challenge forbids overlapping spans)"
                )
            previous = span
        return self


class ConceptRecord(Record):
    """A concept used by the annotations, as the RF2 snapshot describes it."""

    id_field: ClassVar[str] = "concept_id"
    concept_id: SctId
    fsn: LicensedText
    semantic_tag: LicensedText
    synonyms: list[LicensedText]
    hierarchy: Hierarchy
    depth: Annotated[int, Field(ge=1), Int32]


class ConceptStats(Record):
    """Davidson et al. 2025's concept difficulty features (plus example and note counts) of one annotated concept."""

    id_field: ClassVar[str] = "concept_id"
    concept_id: SctId
    mean_span_length: Annotated[float, Field(gt=0)]
    concept_entropy: Annotated[float, Field(ge=0)]
    annotation_entropy: Annotated[float, Field(ge=0)]
    examples: Annotated[int, Field(ge=1), Int32]
    training_examples: NonNegative32
    notes: Annotated[int, Field(ge=1), Int32]
    depth: Annotated[int, Field(ge=1), Int32]
