"""Record models of ``rad_coref``: patients with their radiology reports, mentions and chains, and
the mention pairs pairwise classifiers train on (Datta et al. 2022).

A mention's offsets are into the text of its report (``reports[report_index].text``); a patient
checks every mention against its report and every chain against its mentions.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_corpora.schemas.bounded import Identifier
from clinical_corpora.schemas.licensed import LicensedText, OffsetOf
from clinical_corpora.schemas.spans import Offset, Record, Span, TextEnd, TextStart, span_mismatch, unique_ids

Modality = Literal["XR", "CT", "CTA", "MR", "US", "OTHER"]
MentionType = Literal["Finding", "Device"]
MENTION_TYPES: tuple[MentionType, ...] = ("Finding", "Device")


class Report(BaseModel):
    """One radiology report (a NOTEEVENTS row); ``charttime`` is ``YYYY-MM-DD HH:MM:SS``."""

    model_config = ConfigDict(extra="forbid")
    row_id: int
    charttime: LicensedText = Field(pattern=r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")
    description: LicensedText
    modality: Modality
    text: LicensedText


class Mention(Span):
    """A finding or device mention: a span of report ``report_index``."""

    id: Identifier
    report_index: Offset
    type: MentionType


class Chain(BaseModel):
    """Mentions of one finding or device across a patient's reports (a singleton: one mention)."""

    model_config = ConfigDict(extra="forbid")
    id: Identifier
    mention_ids: list[Identifier] = Field(min_length=1)


class Patient(Record):
    """One patient: reports in CHARTTIME order, mentions in report and offset order, chains."""

    id_field = "patient_id"
    patient_id: Identifier
    reports: list[Report] = Field(min_length=1)
    mentions: list[Mention]
    chains: list[Chain]

    @model_validator(mode="after")
    def _references_resolve(self) -> Patient:
        unique_ids(self.reports, "row_id", "report")
        unique_ids(self.mentions, what="mention")
        unique_ids(self.chains, what="chain")
        for mention in self.mentions:
            if mention.report_index >= len(self.reports):
                raise ValueError(
                    f"mention {mention.id} names report {mention.report_index}, "
                    f"but the patient has {len(self.reports)} reports"
                )
            problem = span_mismatch(self.reports[mention.report_index].text, mention.start, mention.end, mention.text)
            if problem:
                raise ValueError(f"mention {mention.id}: {problem}")
        chained = [mention_id for chain in self.chains for mention_id in chain.mention_ids]
        if sorted(chained) != sorted(mention.id for mention in self.mentions):
            raise ValueError("every mention must be in exactly one chain, and every chain member a mention")
        return self


class PairMention(BaseModel):
    """One side of a mention pair: the mention, its report and the sentence around it.

    ``start``/``end`` are offsets into the report; ``sentence_start`` is where the sentence
    begins in the report, so ``sentence[start - sentence_start : end - sentence_start] == text``.
    """

    model_config = ConfigDict(extra="forbid")
    id: Identifier
    report_index: Offset
    row_id: int
    charttime: LicensedText
    modality: Modality
    type: MentionType
    start: TextStart
    end: TextEnd
    text: LicensedText
    sentence: LicensedText
    sentence_start: Annotated[Offset, OffsetOf("sentence", "start")]

    @model_validator(mode="after")
    def _inside_sentence(self) -> PairMention:
        problem = span_mismatch(
            self.sentence, self.start - self.sentence_start, self.end - self.sentence_start, self.text
        )
        if self.start < self.sentence_start or problem:
            raise ValueError(f"mention {self.id} is not inside its sentence: {problem or 'starts before it'}")
        return self


class MentionPair(Record):
    """Two mentions of one patient (``first`` precedes ``second``) and whether they corefer."""

    id: Identifier
    patient_id: Identifier
    first: PairMention
    second: PairMention
    same_report: bool
    coreferent: bool
