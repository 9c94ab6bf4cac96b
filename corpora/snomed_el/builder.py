"""SNOMED CT Entity Linking Challenge corpus (Davidson et al. 2025): MIMIC-IV-Note discharge notes and
span → concept links.

Sources: ``notes`` (MIMIC-IV-Note ``discharge.csv.gz`` or the challenge's ``note_id,text`` CSV, streamed
and reduced to the annotated notes), ``annotations`` (``train_annotations.csv``), optional
``test_annotations`` (the challenge's held-out test annotations, same columns), ``terminology`` (an RF2
Snapshot folder) and optional ``annotators`` (one ``note_id,start,end,concept_id`` CSV per annotator,
named by its file stem, for agreement).

Configs: ``snomed_el`` (one row per note), ``concepts`` (the concepts the annotations use) and
``concept_stats`` (Davidson et al. 2025's concept difficulty features); the last two have one split, ``full``.
Splits of ``snomed_el``: the challenge's when ``test_annotations`` is given, else a seeded split by
note (:mod:`clinical_corpora.corpora.snomed_el.annotations`). Agreement:
:mod:`~clinical_corpora.corpora.snomed_el.agreement`; card statistics:
:mod:`~clinical_corpora.corpora.snomed_el.statistics`.

Checks: every annotated note exists, spans lie inside the text, are not whitespace-only and do not
overlap, concepts are active and under Clinical finding, Procedure or Body structure. Spans with
leading or trailing whitespace are reported in the card; the ``trim_whitespace`` option trims them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from clinical_corpora.builders.contract.base import AgreementReport, BuildContext, Builder, BuilderOptions, Partial, Row
from clinical_corpora.builders.contract.display import DocumentDisplay, RowReader
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.sources.mimic.notes import iter_notes
from clinical_corpora.builders.sources.rf2 import Terminology, load_snapshot
from clinical_corpora.core.annotations import SpanAnnotation
from clinical_corpora.core.card import CardSection
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.locators import keys_of, locator
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.corpora.snomed_el import bigbio
from clinical_corpora.corpora.snomed_el.agreement import annotator_agreement
from clinical_corpora.corpora.snomed_el.annotations import SPLIT_SEED, TEST_FRACTION, NoteAnnotations, read_annotations
from clinical_corpora.corpora.snomed_el.baselines import card_scores
from clinical_corpora.corpora.snomed_el.display import annotator_displays, prediction_displays, snomed_el_displays
from clinical_corpora.corpora.snomed_el.records import HIERARCHY_NAMES, ConceptRecord, ConceptStats, LinkedSpan, Note
from clinical_corpora.corpora.snomed_el.released_annotations import concept_links
from clinical_corpora.corpora.snomed_el.statistics import statistics_sections, whitespace_section
from clinical_corpora.validation.metrics.concept_difficulty import Mention, concept_difficulty

CONCEPT_SPLIT = "full"


@dataclass(frozen=True)
class NoteDocument:
    """An annotated note as a shard builds it: its annotations, and its text and line in the notes file
    (no text: the notes file lacks it)."""

    note_id: str
    annotations: NoteAnnotations
    text: str | None = None
    line: int = 0


@dataclass(frozen=True)
class NotePartial:
    """What one note adds to the cross-note tables: its released mentions (none if rejected) and the
    spans read with leading or trailing whitespace (before any rejection)."""

    mentions: list[Mention]
    padded_spans: list[tuple[str, int, int]]


@dataclass(frozen=True)
class SnomedElOptions(BuilderOptions):
    """How a snomed_el release is built."""

    trim_whitespace: bool = False
    """Trim leading and trailing whitespace from span boundaries (the challenge's spans are kept as annotated)."""
    split_seed: int = SPLIT_SEED
    """Without the challenge's test annotations: random seed of the shuffle that draws the test notes."""
    test_fraction: float = TEST_FRACTION
    """Without the challenge's test annotations: the share of the notes drawn for test."""


class SnomedElBuilder(Builder):
    """Builds ``snomed_el``, ``concepts`` and ``concept_stats``; keeps span boundaries as annotated."""

    CONFIGS = {
        "snomed_el": Note,
        "concepts": ConceptRecord,
        "concept_stats": ConceptStats,
        bigbio.CONFIG: bigbio.KbDocument,
    }
    RECORD_CONFIG = "snomed_el"
    OPTIONS = SnomedElOptions
    options: SnomedElOptions
    DOCUMENTS: ClassVar[dict[str, str]] = {
        "annotations": "train_annotations.csv rows note_id,start,end,concept_id naming notes of the notes file"
    }

    def __init__(self, options: BuilderOptions | None = None) -> None:
        super().__init__(options)
        self.padded_spans: list[tuple[str, int, int]] = []
        """(note_id, start, end) of spans read with leading or trailing whitespace (as annotated)."""
        self._terminologies: dict[Path, Terminology] = {}

    def _terminology(self, ctx: BuildContext) -> Terminology:
        """The RF2 snapshot, loaded once (by :meth:`shards`, in the main process; forked workers share it)."""
        path = ctx.source("terminology")
        if path not in self._terminologies:
            self._terminologies[path] = load_snapshot(path)
        return self._terminologies[path]

    def displays(self, rows: RowReader) -> Iterator[DocumentDisplay]:
        return snomed_el_displays(rows)

    def annotator_displays(self, ctx: BuildContext, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
        return annotator_displays(ctx, rows)

    def prediction_displays(self, predictions: Path, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
        return prediction_displays(predictions, rows)

    def count(self, ctx: BuildContext) -> int:
        """The annotated notes (the annotation files are small; the notes file is not read)."""
        return len(read_annotations(ctx, self.options.split_seed, self.options.test_fraction))

    def shards(self, ctx: BuildContext) -> dict[str, Any]:
        """The annotated notes in notes-file order, read in one pass over it, then those it lacks."""
        by_note = read_annotations(ctx, self.options.split_seed, self.options.test_fraction)
        self._terminology(ctx)
        documents = [
            NoteDocument(raw.note_id, by_note[raw.note_id], raw.text, raw.line)
            for raw in iter_notes(ctx.source("notes"), by_note.keys())
        ]
        seen = {document.note_id for document in documents}
        documents += [NoteDocument(note_id, by_note[note_id]) for note_id in sorted(by_note.keys() - seen)]
        return {"notes": documents}

    def generate_shard(self, ctx: BuildContext, notes: Iterable[NoteDocument] = ()) -> Iterator[Row | Partial]:
        """Per note: its record and BigBio document, and (a :class:`NotePartial`) its mentions and padded
        spans; a note the notes file lacks fails the build or is quarantined."""
        terminology, notes_path = self._terminology(ctx), ctx.source("notes")
        for document in notes:
            annotations = document.annotations
            if document.text is None:
                with ctx.record(f"{annotations.path} [{document.note_id}]"):
                    raise SourceError(
                        annotations.path,
                        f"note_id {document.note_id!r} is not in the notes file {notes_path.name}",
                        line=annotations.spans[0].line,
                    )
                continue
            partial = NotePartial([], [])
            with ctx.record(f"{notes_path}:{document.line} [{document.note_id}]"):
                note = Note(
                    note_id=document.note_id,
                    text=document.text,
                    split=annotations.split,
                    annotations=[
                        self._linked_span(
                            document.note_id, document.text, annotation, annotations.path, terminology, partial
                        )
                        for annotation in sorted(annotations.spans, key=lambda a: (a.start, a.end))
                    ],
                )
                partial.mentions.extend(
                    Mention(note.note_id, note.split, span.concept_id, span.text) for span in note.annotations
                )
                yield Row("snomed_el", note.split, note)
                yield Row(bigbio.CONFIG, note.split, bigbio.kb_document(note))
            yield Partial(partial)

    def aggregate(self, ctx: BuildContext, partials: list[NotePartial]) -> Iterator[Row]:
        """``concepts`` and ``concept_stats`` over every released note's mentions; the padded spans of
        every note read, for the card."""
        self.padded_spans = [span for partial in partials for span in partial.padded_spans]
        return concept_rows([mention for partial in partials for mention in partial.mentions], self._terminology(ctx))

    def _linked_span(
        self,
        note_id: str,
        text: str,
        annotation: SpanAnnotation,
        path: Path,
        terminology: Terminology,
        partial: NotePartial,
    ) -> LinkedSpan:
        """The released span of one annotation; a SourceError naming the annotation's line if it is wrong.
        A span with leading or trailing whitespace goes to the note's ``partial``."""
        start, end = annotation.start, annotation.end

        def problem(message: str) -> SourceError:
            return SourceError(path, f"note {note_id} span {start}-{end}: {message}", line=annotation.line)

        if end > len(text):
            raise problem(f"ends past the end of the note text ({len(text)} characters)")
        covered = text[start:end]
        stripped = covered.strip()
        if stripped and stripped != covered:
            partial.padded_spans.append((note_id, start, end))
            if self.options.trim_whitespace:
                start += len(covered) - len(covered.lstrip())
                end -= len(covered) - len(covered.rstrip())
        concept_id = annotation.concept_id
        if concept_id not in terminology.active:
            state = "inactive" if concept_id in terminology.inactive else "not"
            raise problem(f"concept {concept_id} is {state} in the RF2 snapshot; expected an active concept")
        hierarchy = terminology.hierarchy.get(concept_id)
        if hierarchy is None:
            raise problem(
                f"concept {concept_id} {terminology.fsn[concept_id]!r} is not under "
                f"{', '.join(HIERARCHY_NAMES.values())}"
            )
        if concept_id not in terminology.depth:
            raise problem(f"concept {concept_id} has no active is-a path to the root concept")
        return LinkedSpan(
            start=start,
            end=end,
            text=text[start:end],
            concept_id=concept_id,
            fsn=terminology.fsn[concept_id],
            semantic_tag=terminology.semantic_tag[concept_id],
            hierarchy=hierarchy,
        )

    def agreement(self, ctx: BuildContext, release: ReleaseView) -> AgreementReport | None:
        """Mean pairwise Jaccard (Davidson et al. 2025) of the released annotations and each annotator
        file; None without."""
        if not ctx.has_source("annotators"):
            return None
        return annotator_agreement(ctx.source("annotators"), release)

    def baselines(self, release: ReleaseView) -> list[BaselineScore]:
        return card_scores(release)

    def statistics(self, release: ReleaseView) -> list[CardSection]:
        return statistics_sections(release)

    def measured(self) -> list[CardSection]:
        """The spans the annotations gave with whitespace at their ends (the release holds them trimmed)."""
        return [whitespace_section(self.padded_spans, self.options.trim_whitespace)]

    def quality_tables(self, release: ReleaseView) -> dict[str, pd.DataFrame]:
        return {"snomed_el.concept_links": concept_links(release)}

    def source_documents(self, ctx: BuildContext, config: str, row: Mapping[str, Any]) -> list[str]:
        """The note (``notes:<note_id>``) and each linked concept's terms (``terminology:<concept id>``)."""
        if config == "snomed_el":
            concepts = sorted({span["concept_id"] for span in row["annotations"]})
            return [locator("notes", row["note_id"]), *(locator("terminology", str(c)) for c in concepts)]
        if config == "concepts":
            return [locator("terminology", str(row["concept_id"]))]
        if config == "concept_stats":
            return []
        if config == bigbio.CONFIG:
            return [locator("notes", row["document_id"])]
        return super().source_documents(ctx, config, row)

    def read_documents(self, ctx: BuildContext, locators: Collection[str]) -> Iterator[tuple[str, str]]:
        """The wanted notes in one pass over the notes file; a concept's document is its FSN then its
        synonyms, one a line, as the RF2 snapshot gives them."""
        note_ids = keys_of("notes", locators)
        if note_ids:
            for note in iter_notes(ctx.source("notes"), note_ids, encoding=ctx.encoding("notes")):
                yield locator("notes", note.note_id), note.text
        concept_ids = [int(key) for key in keys_of("terminology", locators) if key.isdigit()]
        if concept_ids:
            terminology = load_snapshot(ctx.source("terminology"))
            for concept_id in concept_ids:
                if concept_id in terminology.active:
                    concept = terminology.concept(concept_id)
                    yield locator("terminology", str(concept_id)), "\n".join((concept.fsn, *concept.synonyms))


def concept_rows(mentions: list[Mention], terminology: Terminology) -> Iterator[Row]:
    """``concepts`` and ``concept_stats`` rows of the concepts linked in the released notes."""
    features = concept_difficulty(mentions, terminology.depth)
    for feature in features:
        concept = terminology.concept(feature.concept_id)
        yield Row(
            "concepts",
            CONCEPT_SPLIT,
            ConceptRecord.model_validate(asdict(concept) | {"synonyms": list(concept.synonyms)}),
        )
    for feature in features:
        yield Row("concept_stats", CONCEPT_SPLIT, ConceptStats(**asdict(feature)))
