"""CliCR: cloze queries over BMJ Case Reports (Šuster & Daelemans 2018), from pages and UMLS.

Per case (``bmj_html`` page, read by :mod:`clinical_corpora.builders.sources.bmj_html`): the passage is the case
without its Learning points; the case's entities (:mod:`clinical_corpora.corpora.clicr.entities`: the UMLS
dictionary matcher's, or BRAT standoff from another recogniser) are those of the passage and of every
learning point. Each entity of a learning point gives a
query (Šuster & Daelemans 2018, §3.1): the learning point with that entity replaced by ``@placeholder``, left out when
the longer side of the blank (by characters, stripped) occurs verbatim in the passage (counted per
case). Its answers (§3.2) are the entity (origin ``dataset``) then its concept's UMLS synonyms
(origin ``UMLS``). Cases are split train/dev/test by a seeded shuffle of the sorted case ids
(:mod:`clinical_corpora.corpora.clicr.splits`, Šuster & Daelemans 2018's 87/6/7).

Agreement (:mod:`~clinical_corpora.corpora.clicr.agreement`): the recogniser against the hand-marked
``entity_gold`` cases (BRAT), precision/recall/F1 with exact and overlapping boundaries. Card statistics:
:mod:`~clinical_corpora.corpora.clicr.statistics`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from clinical_corpora.builders.contract.base import AgreementReport, BuildContext, Builder, BuilderOptions, Row
from clinical_corpora.builders.contract.display import DocumentDisplay, RowReader
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.contract.text_units import token_strings
from clinical_corpora.builders.sources.bmj_html import (
    MAX_PAGE_BYTES,
    PASSAGE_SEPARATOR,
    CaseReport,
    case_pages,
    read_case_report,
)
from clinical_corpora.builders.sources.brat.folder import brat_documents
from clinical_corpora.builders.sources.discovery import Document
from clinical_corpora.builders.sources.umls import locate_rrf_files
from clinical_corpora.core.card import CardSection
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.core.locators import keys_of, locator
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.core.text_encoding import UTF8
from clinical_corpora.corpora.clicr import bigbio
from clinical_corpora.corpora.clicr.agreement import recogniser_agreement
from clinical_corpora.corpora.clicr.baselines import card_scores
from clinical_corpora.corpora.clicr.display import annotator_displays, clicr_displays
from clinical_corpora.corpora.clicr.entities import (
    CaseEntities,
    case_document,
    recognised_entities,
    standoff_entities,
)
from clinical_corpora.corpora.clicr.entity_matcher import Entity, EntityMatcher
from clinical_corpora.corpora.clicr.index_cache import default_cache_dir, load_or_build_index
from clinical_corpora.corpora.clicr.predictions import prediction_displays
from clinical_corpora.corpora.clicr.records import (
    CUI_PATTERN,
    PLACEHOLDER,
    Answer,
    AnswerOrigin,
    CaseMetadata,
    ClicrDocument,
    ClicrQuery,
    EntitySpan,
    SectionSpan,
)
from clinical_corpora.corpora.clicr.released_rows import read_columns
from clinical_corpora.corpora.clicr.splits import SPLIT_SEED, assign_splits
from clinical_corpora.corpora.clicr.statistics import statistics_sections
from clinical_corpora.corpora.clicr.umls_index import UmlsIndex


def token_key(text: str) -> str:
    """Lower-cased tokens joined and padded by spaces: ``key(a) in key(b)`` is a whole-token match."""
    return f" {' '.join(token_strings(text.lower()))} "


def blank_repeats_passage(learning_point: str, entity: Entity, passage: str) -> bool:
    """Šuster & Daelemans 2018, §3.1: the longer side of the blank (by characters, stripped) occurs
    verbatim in the passage."""
    left, right = learning_point[: entity.start].strip(), learning_point[entity.end :].strip()
    return (left if len(left) >= len(right) else right) in passage


def answers_for(entity: Entity, index: UmlsIndex) -> list[Answer]:
    """The entity (origin ``dataset``), then its concept's UMLS synonyms (origin ``UMLS``)."""
    origins: list[tuple[AnswerOrigin, str]] = [("dataset", entity.text)]
    origins += [("UMLS", name) for name in index.synonyms(entity.cui, entity.text)]
    return [
        Answer(text=text, origin=origin, cui=entity.cui, sem_type=entity.sem_type, category=entity.category)
        for origin, text in origins
    ]


def section_spans(case: CaseReport) -> list[SectionSpan]:
    """Each section's span in the passage (heading and paragraphs laid out as ``CaseReport.passage``)."""
    spans, offset = [], 0
    for section in case.sections:
        blocks = ([section.heading] if section.heading else []) + list(section.paragraphs)
        text = PASSAGE_SEPARATOR.join(blocks)
        spans.append(
            SectionSpan(start=offset, end=offset + len(text), text=text, heading=section.heading, level=section.level)
        )
        offset += len(text) + len(PASSAGE_SEPARATOR)
    return spans


@dataclass(frozen=True)
class ClicrOptions(BuilderOptions):
    """How a CliCR release is built."""

    split_seed: int = SPLIT_SEED
    """Random seed of the shuffle that splits the case ids 87/6/7 (Šuster & Daelemans 2018)."""

    max_file_bytes: int = MAX_PAGE_BYTES
    """Largest page (or entity file) read, in bytes: a BMJ Case Reports page is about 100 KB."""


class ClicrBuilder(Builder):
    OPTIONS = ClicrOptions
    options: ClicrOptions
    CONFIGS = {"clicr": ClicrQuery, "clicr_documents": ClicrDocument, bigbio.CONFIG: bigbio.QaRecord}
    RECORD_CONFIG = "clicr_documents"
    DOCUMENTS = {"bmj_html": "one BMJ Case Reports page per case, <case id>.html (e.g. bcr-2014-204357.html)"}

    def displays(self, rows: RowReader) -> Iterator[DocumentDisplay]:
        return clicr_displays(rows)

    def annotator_displays(self, ctx: BuildContext, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
        return annotator_displays(ctx, rows)

    def prediction_displays(self, predictions: Path, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
        return prediction_displays(predictions, rows)

    def count(self, ctx: BuildContext) -> int:
        return len(case_pages(ctx.source("bmj_html"), quiet=True))

    def __init__(self, options: BuilderOptions | None = None) -> None:
        super().__init__(options)
        self._answer_cuis: dict[str, list[str]] = {}
        self._matchers: dict[Path, tuple[UmlsIndex, EntityMatcher]] = {}
        """UMLS META folder → its index and matcher, loaded once per process (workers fork after :meth:`shards`
        loaded it)."""
        self._rrf_files: dict[Path, tuple[Path, Path]] = {}
        """UMLS META folder → its MRCONSO.RRF and MRSTY.RRF, located (and its other files warned of) once."""

    def workers_started(self) -> None:
        """The forked workers hold the matcher index (hundreds of MB at UMLS scale); the main process no
        longer needs it (shards() took what it needed, and there is no aggregate)."""
        self._matchers.clear()

    def built(self) -> None:
        """The matcher index is not needed by the gates and the card."""
        self._matchers.clear()

    def _located(self, meta: Path) -> tuple[Path, Path]:
        if meta not in self._rrf_files:
            self._rrf_files[meta] = locate_rrf_files(meta)
        return self._rrf_files[meta]

    def _matcher(self, meta: Path) -> tuple[UmlsIndex, EntityMatcher]:
        if meta not in self._matchers:
            index = load_or_build_index(*self._located(meta), default_cache_dir())
            self._matchers[meta] = index, EntityMatcher(index)
        return self._matchers[meta]

    def source_documents(self, ctx: BuildContext, config: str, row: Mapping[str, Any]) -> list[str]:
        """The case (``bmj_html:<case id>``, :func:`case_document`) and, for a query, the UMLS names of
        its answers' concept (``umls:<CUI>``); a ``clicr_bigbio_qa`` row's CUIs are those its ``clicr`` row
        named (configs are read in corpus.yaml order)."""
        if config == "clicr_documents":
            return [locator("bmj_html", row["id"])]
        if config == "clicr":
            cuis = list(dict.fromkeys(answer["cui"] for answer in row["answers"]))
            self._answer_cuis[row["id"]] = cuis
        elif config == bigbio.CONFIG:  # its answers carry no CUI: the clicr row of the query (listed first) does
            known = self._answer_cuis.get(row["id"])
            if known is None:
                raise ClincorpError(f"{bigbio.CONFIG} row {row['id']}: no clicr row of that query was seen before it")
            cuis = known
        else:
            return super().source_documents(ctx, config, row)
        return [locator("bmj_html", row["document_id"]), *(locator("umls", cui) for cui in cuis)]

    def read_documents(self, ctx: BuildContext, locators: Collection[str]) -> Iterator[tuple[str, str]]:
        """Each wanted page read as a build reads it (in the encoding the user names, if any); a concept's
        document is its English non-suppressed MRCONSO names, one a line, in file order (what answer expansion
        draws from)."""
        cases = set(keys_of("bmj_html", locators))
        if cases:
            named = ctx.encoding("bmj_html")  # UTF-8 unless the user names their copy's: then the page's is ignored
            for page in case_pages(ctx.source("bmj_html"), quiet=True):
                if page.stem in cases:
                    case = read_case_report(
                        page, max_bytes=self.options.max_file_bytes, encoding=None if named == UTF8 else named
                    )
                    yield locator("bmj_html", page.stem), case_document(case)
        cuis = keys_of("umls", locators)
        if cuis:
            index, _ = self._matcher(ctx.source("umls"))
            for cui in cuis:
                names = index.concepts.names_of(int(cui[1:])) if re.fullmatch(CUI_PATTERN, cui) else []
                if names:
                    yield locator("umls", cui), "\n".join(names)

    def shards(self, ctx: BuildContext) -> dict[str, Any]:
        """Every page with its split and the first page of its case id, and the standoff documents; the
        checks across pages (untyped UMLS concepts, standoff of no page) run here, once per build."""
        index, _ = self._matcher(ctx.source("umls"))
        mrconso, mrsty = self._located(ctx.source("umls"))
        for cui, line in sorted(index.untyped.items()):
            ctx.reject(
                SourceError(
                    mrconso,
                    f"concept {cui} has no row in {mrsty.name}, so no semantic type or category: its names are "
                    "left out of the dictionary and of the answers (expected the MRSTY.RRF of the same release)",
                    line=line,
                ),
                "annotation",
            )
        standoff = ctx.source("entities") if ctx.has_source("entities") else None
        documents = {document.id: document for document in brat_documents(standoff)} if standoff else {}
        pages = case_pages(ctx.source("bmj_html"))
        splits = assign_splits(sorted({path.stem for path in pages}), self.options.split_seed)
        unmatched = sorted(set(documents) - set(splits))
        if unmatched:
            raise SourceError(
                standoff or "entities",
                f"standoff of no case in bmj_html: {', '.join(unmatched[:10])}"
                f"{f' and {len(unmatched) - 10} more' if len(unmatched) > 10 else ''} "
                "(expected <case id>.txt and .ann for cases of these pages)",
            )
        first_page: dict[str, Path] = {}
        return {
            "pages": pages,
            "splits": [splits[page.stem] for page in pages],
            "first_pages": [first_page.setdefault(page.stem, page) for page in pages],
            "documents": documents,
        }

    def generate_shard(
        self,
        ctx: BuildContext,
        pages: Sequence[Path] = (),
        splits: Sequence[str] = (),
        first_pages: Sequence[Path] = (),
        documents: Mapping[str, Document] | None = None,
    ) -> Iterator[Row]:
        index, matcher = self._matcher(ctx.source("umls"))
        standoff = ctx.source("entities") if ctx.has_source("entities") else None
        for page, split, first in zip(pages, splits, first_pages, strict=True):
            rows: list[Row] = []
            with ctx.record(f"{page} [{page.stem}]"):
                if first != page:
                    raise SourceError(
                        page, f"case id {page.stem!r} is also the id of {first}: expected one page per case id"
                    )
                case = read_case_report(page, max_bytes=self.options.max_file_bytes)
                entities = (
                    recognised_entities(case, matcher)
                    if standoff is None
                    else standoff_entities(
                        (documents or {}).get(case.case_id, standoff), case, index, self.options.max_file_bytes
                    )
                )
                rows = self._case_rows(case, entities, split, index)
            yield from rows

    def _case_rows(self, case: CaseReport, entities: CaseEntities, split: str, index: UmlsIndex) -> list[Row]:
        passage = case.passage
        passage_key = token_key(passage)
        queries: list[ClicrQuery] = []
        removed = 0
        for learning_point, point_entities in zip(case.learning_points, entities.learning_points, strict=True):
            for entity in point_entities:
                if blank_repeats_passage(learning_point, entity, passage):
                    removed += 1
                    continue
                answers = answers_for(entity, index)
                queries.append(
                    ClicrQuery(
                        id=f"{case.case_id}.{len(queries) + 1}",
                        document_id=case.case_id,
                        title=case.title,
                        context=passage,
                        answers=answers,
                        query=learning_point[: entity.start] + PLACEHOLDER + learning_point[entity.end :],
                        answer_in_passage=any(token_key(answer.text) in passage_key for answer in answers),
                    )
                )
        passage_entities = [
            EntitySpan(start=e.start, end=e.end, text=e.text, cui=e.cui, sem_type=e.sem_type, category=e.category)
            for e in entities.passage
        ]
        metadata = CaseMetadata(
            series=list(case.metadata.series), specialties=list(case.metadata.specialties), year=case.metadata.year
        )
        document = ClicrDocument(
            id=case.case_id,
            title=case.title,
            passage=passage,
            sections=section_spans(case),
            learning_points=list(case.learning_points),
            entities=passage_entities,
            metadata=metadata,
            repeated_queries_removed=removed,
        )
        return [
            Row("clicr_documents", split, document),
            *(Row("clicr", split, query) for query in queries),
            *(Row(bigbio.CONFIG, split, bigbio.qa_record(query)) for query in queries),
        ]

    def quality_tables(self, release: ReleaseView) -> dict[str, pd.DataFrame]:
        """``clicr_documents.with_learning_points``: queries per case that has learning points."""
        queries = read_columns(release, "clicr", ["document_id"])
        per_case = queries["document_id"].value_counts()
        documents = read_columns(release, "clicr_documents", ["id", "learning_points"])
        with_points = documents[documents["learning_points"].map(len) > 0]
        yield_table = pd.DataFrame(
            {
                "document_id": with_points["id"].to_numpy(),
                "n_queries": with_points["id"].map(per_case).fillna(0).astype(int).to_numpy(),
            }
        )
        return {"clicr_documents.with_learning_points": yield_table}

    def statistics(self, release: ReleaseView) -> list[CardSection]:
        return statistics_sections(release)

    def baselines(self, release: ReleaseView) -> list[BaselineScore]:
        return card_scores(release)

    def agreement(self, ctx: BuildContext, release: ReleaseView) -> AgreementReport | None:
        if not ctx.has_source("entity_gold"):
            return None
        return recogniser_agreement(ctx.source("entity_gold"), release, self.options.max_file_bytes)
