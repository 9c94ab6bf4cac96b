"""CliCR record models: one row per cloze query (``clicr``) and one per case report (``clicr_documents``).

Offsets in ``clicr_documents`` are 0-based character offsets into the passage (the case without
its Learning points), end exclusive. Categories are the i2b2-2010 ones the recogniser assigns
(:data:`clinical_corpora.corpora.clicr.entity_matcher.CATEGORIES`).
"""

from __future__ import annotations

from itertools import pairwise
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_corpora.core.labels import Category
from clinical_corpora.schemas.bounded import Cui, Identifier, SourceVocabulary
from clinical_corpora.schemas.licensed import LicensedText
from clinical_corpora.schemas.spans import Record, Span, TextRecord

PLACEHOLDER = "@placeholder"
"""The blank of a query, where the answer entity stood in the learning point."""

AnswerOrigin = Literal["dataset", "UMLS"]
CUI_PATTERN = r"^C\d{7}$"


class Answer(BaseModel):
    """One accepted answer: the original entity (``dataset``) or one of its UMLS synonyms (``UMLS``)."""

    model_config = ConfigDict(extra="forbid")
    text: LicensedText = Field(min_length=1)
    origin: AnswerOrigin
    cui: Cui
    sem_type: SourceVocabulary = Field(description="UMLS semantic type name, e.g. 'Disease or Syndrome'")
    category: Category


class ClicrQuery(Record):
    """A learning point with one entity blanked out, its passage and its answers."""

    rows_per_row_group: ClassVar[int] = 1_000
    """Each row holds its case's passage: a parquet row group (and the writer's buffer) of 1k rows, not 10k."""

    id: Identifier = Field(description="<case id>.<n>, n counting the case's queries from 1")
    document_id: Identifier
    title: LicensedText
    context: LicensedText = Field(description="the passage: the case report without its Learning points")
    query: LicensedText
    answers: list[Answer] = Field(min_length=1)
    answer_in_passage: bool = Field(description="some answer occurs in the passage (whole tokens, any case)")

    @model_validator(mode="after")
    def _one_blank_and_original_answer_first(self) -> ClicrQuery:
        if self.query.count(PLACEHOLDER) != 1:
            raise ValueError(f"a query holds exactly one {PLACEHOLDER}, found {self.query.count(PLACEHOLDER)}")
        origins = [answer.origin for answer in self.answers]
        if origins[0] != "dataset" or "dataset" in origins[1:]:
            raise ValueError("the first answer, and only it, is the original entity (origin 'dataset')")
        if not self.id.startswith(f"{self.document_id}."):
            raise ValueError(f"query id {self.id!r} does not start with its document id {self.document_id!r}")
        return self


class SectionSpan(Span):
    """A passage section: heading and paragraphs, from the heading's start to the last paragraph's end."""

    heading: LicensedText
    level: int = Field(ge=0, le=6, description="2 for an h2 heading … 6; 0 for text before any heading")


class EntitySpan(Span):
    """A medical entity in the passage."""

    cui: Cui
    sem_type: SourceVocabulary
    category: Category


class CaseMetadata(BaseModel):
    """BMJ Case Reports series, specialties and publication year (None when the page has none)."""

    model_config = ConfigDict(extra="forbid")
    series: list[SourceVocabulary]
    specialties: list[SourceVocabulary]
    year: int | None


class ClicrDocument(TextRecord):
    """One case report: passage, sections, learning points, passage entities and metadata."""

    rows_per_row_group: ClassVar[int] = 1_000
    """A case is about 100 KB as Arrow (hundreds of entities): row groups (and the writer's buffer) of 1k rows."""

    text_field = "passage"
    id: Identifier = Field(description="the case id, the page's file stem")
    title: LicensedText
    passage: LicensedText
    sections: list[SectionSpan]
    learning_points: list[LicensedText]
    entities: list[EntitySpan]
    metadata: CaseMetadata
    repeated_queries_removed: int = Field(
        ge=0, description="queries left out because the longer side of their blank occurs verbatim in the passage"
    )

    @model_validator(mode="after")
    def _entities_in_order_without_overlap(self) -> ClicrDocument:
        for before, after in pairwise(self.entities):
            if after.start < before.end:
                raise ValueError(
                    f"entities {before.start}-{before.end} and {after.start}-{after.end} overlap or are out of order"
                )
        return self
