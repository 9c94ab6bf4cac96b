"""CliCR: cloze queries over BMJ Case Reports (Šuster & Daelemans 2018), from pages and UMLS.

Per case (``bmj_html`` page, read by :mod:`clinical_corpora.builders.sources.bmj_html`): the passage is the case
without its Learning points; the UMLS dictionary matcher (:mod:`clinical_corpora.corpora.clicr.entity_matcher`) marks
the entities of the passage and of every learning point. Each entity of a learning point gives a
query (Šuster & Daelemans 2018, §3.1): the learning point with that entity replaced by ``@placeholder``, left out when
the longer side of the blank (by characters, stripped) occurs verbatim in the passage (counted per
case). Its answers (§3.2) are the entity (origin ``dataset``) then its concept's UMLS synonyms
(origin ``UMLS``). Cases are split train/dev/test by a seeded shuffle of the sorted case ids
(:data:`SPLIT_PROPORTIONS`, Šuster & Daelemans 2018's 87/6/7).

With the optional ``entities`` source (BRAT standoff from another recogniser, see
:func:`standoff_entities`) its entities replace the matcher's; Šuster & Daelemans 2018's boundary refinements
are applied to them too. The matcher index is cached outside the release: ``$CLINCORP_CACHE``, else
``~/.cache/clinical-corpora``. Agreement: the recogniser against the hand-marked ``entity_gold``
cases (BRAT), precision/recall/F1 with exact and overlapping boundaries.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from datasets import Features

from clinical_corpora.builders.contract.base import AgreementReport, BuildContext, Builder, CardSection, Row, Table
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.contract.text_units import token_strings
from clinical_corpora.builders.sources.bmj_html import (
    MAX_PAGE_BYTES,
    PASSAGE_SEPARATOR,
    CaseReport,
    read_case_report,
)
from clinical_corpora.builders.sources.brat import (
    ANN_SUFFIX,
    TEXT_SUFFIX,
    brat_documents,
    iter_brat_folder,
    read_brat,
    read_utf8,
)
from clinical_corpora.builders.sources.discovery import Document, is_hidden, walk_files, warn_left_out
from clinical_corpora.builders.sources.documents import keys_of, locator
from clinical_corpora.builders.sources.umls import locate_rrf_files
from clinical_corpora.core.counts import PRFCounts, f_measure, ratio
from clinical_corpora.core.errors import ClincorpError, SourceError, excerpt
from clinical_corpora.core.processes import child_process
from clinical_corpora.core.splits import seeded_split
from clinical_corpora.corpora.clicr import bigbio
from clinical_corpora.corpora.clicr.entity_matcher import (
    CATEGORIES,
    Entity,
    EntityMatcher,
    UmlsIndex,
    load_or_build_index,
    refine_span,
)
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
from clinical_corpora.schemas.features import row_decoder
from clinical_corpora.validation.metrics.clicr import AnswerKey, maxfreq_entity_predictions, rand_entity_predictions

SPLIT_PROPORTIONS = (("train", 0.87), ("dev", 0.06), ("test", 0.07))
SPLIT_SEED = 2018
CACHE_ENVIRONMENT = "CLINCORP_CACHE"


def cache_dir() -> Path:
    """Where the matcher index is cached: ``$CLINCORP_CACHE`` or ``~/.cache/clinical-corpora``."""
    configured = os.environ.get(CACHE_ENVIRONMENT)
    return Path(configured) if configured else Path.home() / ".cache" / "clinical-corpora"


def load_index(meta: Path) -> UmlsIndex:
    """The matcher index of a UMLS ``META`` folder (cached)."""
    mrconso, mrsty = locate_rrf_files(meta)
    return load_or_build_index(mrconso, mrsty, cache_dir())


def assign_splits(case_ids: Sequence[str], seed: int = SPLIT_SEED) -> dict[str, str]:
    """Case id → split: a seeded shuffle of the sorted ids, cut at :data:`SPLIT_PROPORTIONS`.

    dev and test get at least one case each once there are three cases.
    """
    (train, _), *held_out = SPLIT_PROPORTIONS
    return seeded_split(case_ids, seed, held_out, train, at_least=1)


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


def query_rows(release: ReleaseView, columns: Sequence[str], split: str | None = None) -> list[tuple[str, dict]]:
    """(split, row) of the ``clicr`` config with only ``columns``, ClassLabels as names.

    Leaving out ``context`` (the passage, repeated in every query of a case) keeps this small.
    """
    return list(iter_query_rows(release, columns, split))


def iter_query_rows(
    release: ReleaseView, columns: Sequence[str], split: str | None = None
) -> Iterator[tuple[str, dict]]:
    """:func:`query_rows` one at a time, read in batches (memory bounded by a batch)."""
    features = release.features("clicr")
    decode = row_decoder(Features({name: features[name] for name in columns}))
    for shard in release.shards("clicr", split):
        shard_split = release.split_of(shard)
        for batch in pq.ParquetFile(shard).iter_batches(batch_size=QUERY_BATCH, columns=list(columns)):
            for row in batch.to_pylist():
                yield shard_split, decode(row)


def read_columns(release: ReleaseView, config: str, columns: Sequence[str]) -> pd.DataFrame:
    """Some columns of a config, all splits, as stored (only these columns are read)."""
    return pd.concat(
        [pq.read_table(shard, columns=list(columns)).to_pandas() for shard in release.shards(config)], ignore_index=True
    )


LEARNING_POINTS_HEADING = "Learning points"
_CUI = re.compile(r"C\d{7}")


class CaseEntities(NamedTuple):
    """A case's entities: in the passage, and in each learning point (offsets into that point)."""

    passage: list[Entity]
    learning_points: list[list[Entity]]


def recognised_entities(case: CaseReport, matcher: EntityMatcher) -> CaseEntities:
    """The dictionary matcher's entities of a case (in the passage and each learning point)."""
    return CaseEntities(matcher.find(case.passage), [matcher.find(point) for point in case.learning_points])


def case_text(case: CaseReport) -> tuple[str, list[int]]:
    """The text an ``entities`` standoff annotates, and where each learning point starts in it.

    The passage, then (when the case has learning points) the heading ``Learning points`` and the
    points, every block separated by a blank line.
    """
    if not case.learning_points:
        return case.passage, []
    blocks = [case.passage, LEARNING_POINTS_HEADING, *case.learning_points]
    offsets, position = [], 0
    for index, block in enumerate(blocks):
        if index >= 2:
            offsets.append(position)
        position += len(block) + len(PASSAGE_SEPARATOR)
    return PASSAGE_SEPARATOR.join(blocks), offsets


def case_document(case: CaseReport) -> str:
    """A case's source document for its text-free variant: the title, then :func:`case_text`."""
    return PASSAGE_SEPARATOR.join((case.title, case_text(case)[0]))


def standoff_entities(folder: Path | Document, case: CaseReport, index: UmlsIndex) -> CaseEntities:
    """A case's entities from BRAT standoff: ``<case id>.txt`` (:func:`case_text`) and ``.ann`` (in
    ``folder``, or the document as :func:`brat_documents` lists it).

    Each text-bound is typed by its i2b2 category and carries its CUI in an ``AnnotatorNotes``
    note (``#1<TAB>AnnotatorNotes T1<TAB>C0035020``); its semantic type comes from UMLS (empty for
    a concept outside the mapped types). Spans are refined as the matcher's are.
    """
    if isinstance(folder, Document):
        text_path, ann_path = folder.require(TEXT_SUFFIX), folder.require(ANN_SUFFIX)
    else:
        text_path, ann_path = folder / f"{case.case_id}{TEXT_SUFFIX}", folder / f"{case.case_id}{ANN_SUFFIX}"
    if not (text_path.is_file() and ann_path.is_file()):
        raise SourceError(
            text_path.parent, f"expected {text_path.name} and {ann_path.name} for this case", record=case.case_id
        )
    text, point_starts = case_text(case)
    if read_utf8(text_path) != text:
        raise SourceError(
            text_path,
            "differs from the case text (the passage, 'Learning points' and the points, "
            "blank-line separated): the standoff is stale or from other pages",
        )
    document = read_brat(ann_path, text)
    cuis = {note.target: note.text.strip() for note in document.notes if note.type == "AnnotatorNotes"}
    found = CaseEntities([], [[] for _ in point_starts])
    for bound in document.textbounds:
        where = f"text-bound {bound.id}"
        cui = cuis.get(bound.id, "")
        if bound.type not in CATEGORIES or len(bound.fragments) != 1 or not _CUI.fullmatch(cui):
            raise SourceError(
                ann_path,
                f"{where}: expected one contiguous span typed {'/'.join(CATEGORIES)} with "
                f"a CUI note, found type {bound.type!r}, {len(bound.fragments)} "
                f"fragment(s), note {cui!r}",
            )
        refined = refine_span(text, bound.start, bound.end)
        if refined is None:
            raise SourceError(ann_path, f"{where}: {excerpt(bound.text)} holds only determiners and pronouns")
        category = CATEGORIES[CATEGORIES.index(bound.type)]
        mapped = index.semantic_type(cui)
        sem_type = mapped[0] if mapped else ""
        start, end = refined
        if end <= len(case.passage):
            found.passage.append(Entity(start, end, text[start:end], cui, sem_type, category))
            continue
        point = next(
            (
                i
                for i, first in enumerate(point_starts)
                if first <= start and end <= first + len(case.learning_points[i])
            ),
            None,
        )
        if point is None:
            raise SourceError(ann_path, f"{where}: {start}-{end} lies in no passage block or learning point")
        first = point_starts[point]
        found.learning_points[point].append(
            Entity(start - first, end - first, text[start:end], cui, sem_type, category)
        )
    return CaseEntities(
        sorted(found.passage, key=_span_order),
        [sorted(entities, key=_span_order) for entities in found.learning_points],
    )


def _pages(folder: Path, *, quiet: bool = False) -> list[Path]:
    """The case pages of a bmj_html folder: every file under it (linked folders followed) but hidden ones,
    which are counted in a warning."""
    pages: list[Path] = []
    hidden: list[Path] = []
    for path in walk_files(folder):
        (hidden if is_hidden(path.relative_to(folder).as_posix()) else pages).append(path)
    if hidden and not quiet:
        warn_left_out(folder, [path.relative_to(folder).as_posix() for path in hidden], "a BMJ Case Reports page")
    return pages


def _span_order(entity: Entity) -> tuple[int, int]:
    return entity.start, entity.end


class ClicrBuilder(Builder):
    VERSION = "1.1.0"
    CONFIGS = {"clicr": ClicrQuery, "clicr_documents": ClicrDocument, bigbio.CONFIG: bigbio.QaRecord}
    DOCUMENTS = {"bmj_html": "one BMJ Case Reports page per case, <case id>.html (e.g. bcr-2014-204357.html)"}
    MAX_PAGE_BYTES = MAX_PAGE_BYTES
    """A page over this size is an error naming it (a real page is about 100 KB)."""

    def count(self, ctx: BuildContext) -> int:
        return len(_pages(ctx.source("bmj_html"), quiet=True))

    def __init__(self) -> None:
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
            index = load_or_build_index(*self._located(meta), cache_dir())
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
        """Each wanted page read as a build reads it; a concept's document is its English non-suppressed
        MRCONSO names, one a line, in file order (what answer expansion draws from)."""
        cases = set(keys_of("bmj_html", locators))
        if cases:
            for page in _pages(ctx.source("bmj_html"), quiet=True):
                if page.stem in cases:
                    case = read_case_report(page, max_bytes=self.MAX_PAGE_BYTES)
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
        pages = _pages(ctx.source("bmj_html"))
        splits = assign_splits(sorted({path.stem for path in pages}))
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
                case = read_case_report(page, max_bytes=self.MAX_PAGE_BYTES)
                entities = (
                    recognised_entities(case, matcher)
                    if standoff is None
                    else standoff_entities((documents or {}).get(case.case_id, standoff), case, index)
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
        """From :data:`PASSAGES_APART` cases on, the passages are tokenised in a child process (on the other
        core) while this one tallies the rest and scores the baselines."""
        cases = sum(release.rows_in(shard) for shard in release.shards("clicr_documents"))
        if cases < PASSAGES_APART:
            passages = PassageTally.of(release)
            documents, queries, baselines = _tallies_and_baselines(release)
        else:
            with child_process("counting the passages' tokens") as start:
                counted = start(PassageTally.of, release)
                documents, queries, baselines = _tallies_and_baselines(release)
                passages = counted()
        return [_data_statistics(documents, passages, queries), _answer_categories(queries), baselines]

    def agreement(self, ctx: BuildContext, release: ReleaseView) -> AgreementReport | None:
        if not ctx.has_source("entity_gold"):
            return None
        gold_root = ctx.source("entity_gold")
        gold = {doc_id: (text, doc) for doc_id, text, doc in iter_brat_folder(gold_root)}
        if not gold:  # an empty folder given on purpose: the check is recorded as not run
            return None
        found = {row["id"]: row for _, row in release.rows("clicr_documents") if row["id"] in gold}
        predicted: set[tuple[str, int, int]] = set()
        expected: set[tuple[str, int, int]] = set()
        for doc_id, (text, doc) in gold.items():
            row = found.get(doc_id)
            if row is None:
                raise SourceError(
                    gold_root,
                    "no such case in bmj_html: entity_gold must mark cases of these "
                    "pages (give --source entity_gold=DIR with your own gold; an empty folder "
                    "skips the check)",
                    record=doc_id,
                )
            if row["passage"] != text:
                raise SourceError(
                    gold_root / f"{doc_id}.txt",
                    "differs from the case's passage: the gold is "
                    "stale (expected the passage exactly as the reader builds it)",
                )
            predicted |= {(doc_id, e["start"], e["end"]) for e in row["entities"]}
            expected |= {(doc_id, t.start, t.end) for t in doc.textbounds}
        measures = entity_scores(predicted, expected)
        rows = [
            [
                boundaries,
                len(predicted),
                len(expected),
                round(measures[f"precision_{boundaries}"], 4),
                round(measures[f"recall_{boundaries}"], 4),
                round(measures[f"f1_{boundaries}"], 4),
            ]
            for boundaries in ("exact", "overlap")
        ]
        text = (
            f"The recogniser against {len(gold)} cases with hand-marked entities (source `entity_gold`); "
            "overlap counts an entity as found when it shares a character with one of the other side."
        )
        table = Table(["boundaries", "recognised", "gold", "precision", "recall", "F1"], rows)
        return AgreementReport(measures, [CardSection("Entity recognition against the gold sample", text, table)])


def entity_scores(predicted: set[tuple[str, int, int]], expected: set[tuple[str, int, int]]) -> dict[str, float]:
    """Precision, recall and F1 of (document, start, end) spans, exact and overlapping boundaries.

    With overlapping boundaries each side counts its own spans that overlap the other side, so
    precision and recall have different numerators.
    """

    def overlapping(span: tuple[str, int, int], others: set[tuple[str, int, int]]) -> bool:
        return any(doc == span[0] and start < span[2] and span[1] < end for doc, start, end in others)

    exact = PRFCounts(len(predicted & expected), len(predicted), len(expected))
    precision = ratio(sum(overlapping(p, expected) for p in predicted), len(predicted))
    recall = ratio(sum(overlapping(g, predicted) for g in expected), len(expected))
    scores = {
        "exact": (exact.precision, exact.recall, exact.f1),
        "overlap": (precision, recall, f_measure(precision, recall)),
    }
    return {
        f"{measure}_{boundaries}": value
        for boundaries, values in scores.items()
        for measure, value in zip(("precision", "recall", "f1"), values, strict=True)
    }


DOCUMENT_BATCH = 256
PASSAGES_APART = 1_000
"""Cases from which the card tokenises the passages in a child process: forking it costs about 0.1 s, and
tokenising a thousand passages about 0.5 s."""
QUERY_BATCH = 4096


class QueryTally(NamedTuple):
    """What the card needs from one query (its answers' texts, not the whole answer records)."""

    split: str
    id: str
    document_id: str
    answers: tuple[str, ...]
    dataset_answers: tuple[str, ...]
    category: str
    answer_in_passage: bool


def query_tallies(release: ReleaseView) -> list[QueryTally]:
    """A :class:`QueryTally` per query, read in batches of the columns and answer fields it needs; an answer
    text repeated across queries is one string object."""
    answer = release.features("clicr")["answers"].feature
    dataset = answer["origin"].names.index("dataset")
    categories = pa.array(answer["category"].names, pa.string())
    shared: dict[str, str] = {}
    columns, fields = ["id", "document_id", "answer_in_passage"], {"answers": {"text", "origin", "category"}}
    return [
        tally
        for split in release.splits("clicr")
        for batch in release.batches("clicr", split, columns, QUERY_BATCH, fields)
        for tally in _batch_query_tallies(split, batch, dataset, categories, shared)
    ]


def _batch_query_tallies(
    split: str, batch: pa.RecordBatch, dataset: int, categories: pa.Array, shared: dict[str, str]
) -> Iterator[QueryTally]:
    """The tallies of a batch of queries: ``dataset`` is the id of origin ``dataset``, ``categories`` the
    category names by id."""
    answers = batch.column("answers")
    flat = answers.flatten()
    texts = _shared_texts(flat.field("text"), shared)
    from_dataset = pc.equal(flat.field("origin"), dataset).to_pylist()
    first_categories = categories.take(pc.list_element(answers, 0).field("category")).to_pylist()
    bounds = _list_bounds(answers)
    rows = zip(*(batch.column(name).to_pylist() for name in ("id", "document_id", "answer_in_passage")), strict=True)
    for index, (query_id, document_id, in_passage) in enumerate(rows):
        start, end = bounds[index], bounds[index + 1]
        answer_texts = texts[start:end]
        yield QueryTally(
            split,
            query_id,
            document_id,
            tuple(answer_texts),
            tuple(compress(answer_texts, from_dataset[start:end])),
            first_categories[index],
            in_passage,
        )


@dataclass
class DocumentTally:
    """What the card needs from ``clicr_documents`` but the passages, gathered in one streaming pass."""

    cases: int = 0
    without_learning_points: int = 0
    queries_removed: int = 0
    entity_texts: dict[str, list[str]] = field(default_factory=dict)
    _shared: dict[str, str] = field(default_factory=dict, repr=False)
    """One string object per distinct entity text: millions of mentions share a few hundred thousand."""

    @classmethod
    def of(cls, release: ReleaseView) -> DocumentTally:
        tally = cls()
        columns = ["id", "learning_points", "repeated_queries_removed"]
        for batch in release.batches("clicr_documents", None, columns, DOCUMENT_BATCH, {"entities": {"text"}}):
            tally.add(batch)
        return tally

    def add(self, batch: pa.RecordBatch) -> None:
        """Count a batch of documents (columns ``id``, ``learning_points``, ``repeated_queries_removed`` and
        ``entities`` with their ``text`` only)."""
        entities = batch.column("entities")
        texts = _shared_texts(entities.flatten().field("text"), self._shared)
        bounds = _list_bounds(entities)
        for index, document_id in enumerate(batch.column("id").to_pylist()):
            self.entity_texts[document_id] = texts[bounds[index] : bounds[index + 1]]
        self.cases += batch.num_rows
        self.without_learning_points += pc.list_value_length(batch.column("learning_points")).to_pylist().count(0)
        self.queries_removed += sum(batch.column("repeated_queries_removed").to_pylist())

    @property
    def entity_types(self) -> int:
        """Distinct entity texts, lower-cased."""
        return len({text.lower() for text in self._shared})


class PassageTally(NamedTuple):
    """The passages' tokens and word types (lower-cased)."""

    tokens: int
    word_types: int

    @classmethod
    def of(cls, release: ReleaseView) -> PassageTally:
        """Tokenise every passage, lower-cased, a batch of documents at a time."""
        tokens, types = 0, set()
        for batch in release.batches("clicr_documents", columns=["passage"], batch_size=DOCUMENT_BATCH):
            for passage in batch.column("passage").to_pylist():
                found = token_strings(passage.lower())
                tokens += len(found)
                types.update(found)
        return cls(tokens, len(types))


def _shared_texts(texts: pa.Array, shared: dict[str, str]) -> list[str]:
    """``texts`` as Python strings, one object per distinct text (across calls sharing ``shared``)."""
    encoded = texts.dictionary_encode()
    distinct = [shared.setdefault(text, text) for text in encoded.dictionary.to_pylist()]
    return [distinct[index] for index in encoded.indices.to_pylist()]


def _list_bounds(lists: pa.Array) -> list[int]:
    """Where each list starts among the flattened values of ``lists``, then where the last ends."""
    return list(accumulate(pc.list_value_length(lists).to_pylist(), initial=0))


def _tallies_and_baselines(release: ReleaseView) -> tuple[DocumentTally, list[QueryTally], CardSection]:
    """The card's tallies but the passages', and its baselines section."""
    documents, queries = DocumentTally.of(release), query_tallies(release)
    return documents, queries, _baselines(documents.entity_texts, queries)


def _data_statistics(documents: DocumentTally, passages: PassageTally, queries: Sequence[QueryTally]) -> CardSection:
    """Šuster & Daelemans 2018, Table 2, on the lower-cased dataset."""
    per_split = Counter(query.split for query in queries)
    verbatim = sum(query.answer_in_passage for query in queries)
    rows: list[list[object]] = [
        ["cases", documents.cases],
        ["cases without Learning points (passage only)", documents.without_learning_points],
        ["queries in train/dev/test", "/".join(str(per_split[split]) for split, _ in SPLIT_PROPORTIONS)],
        ["queries removed (learning point repeats the passage)", documents.queries_removed],
        ["tokens in passages", passages.tokens],
        ["word types in passages", passages.word_types],
        ["entity types in passages", documents.entity_types],
        ["distinct answers", len({text.lower() for query in queries for text in query.dataset_answers})],
        ["distinct answers (incl. extended)", len({text.lower() for query in queries for text in query.answers})],
        ["% answers verbatim in passage", round(100 * verbatim / len(queries), 1) if queries else 0.0],
    ]
    text = (
        "As Šuster & Daelemans 2018, Table 2, counted on the lower-cased dataset (each passage once). Tokens are "
        "`clinical_corpora.builders.text_units` tokens; an answer is verbatim in the passage when one of its forms "
        "(original or UMLS synonym) occurs there as whole tokens, in any case."
    )
    return CardSection("Data statistics", text, Table(["statistic", "value"], rows))


def _answer_categories(queries: Sequence[QueryTally]) -> CardSection:
    """Šuster & Daelemans 2018, Table 3: the original answers' i2b2 categories."""
    categories = Counter(query.category for query in queries)
    total = sum(categories.values()) or 1
    rows = [[category, categories[category], round(100 * categories[category] / total, 1)] for category in CATEGORIES]
    return CardSection("Answer categories", table=Table(["category", "answers", "%"], rows))


def _baselines(entities: Mapping[str, list[str]], queries: Sequence[QueryTally]) -> CardSection:
    """rand-entity and maxfreq-entity (Šuster & Daelemans 2018, §5.1) per split, scored as the original evaluation."""
    rows = []
    most_frequent = maxfreq_entity_predictions(entities)  # per case, not per query
    for split, _ in SPLIT_PROPORTIONS:
        in_split = [query for query in queries if query.split == split]
        if not in_split:
            continue
        answers = AnswerKey({query.id: query.answers for query in in_split})  # prepared once for both methods
        candidates = {query.id: entities[query.document_id] for query in in_split}
        for name, predictions in (
            ("rand-entity", rand_entity_predictions(candidates)),
            ("maxfreq-entity", {query.id: most_frequent[query.document_id] for query in in_split}),
        ):
            scores = answers.score(predictions)
            rows.append(
                [
                    name,
                    split,
                    len(in_split),
                    round(scores["exact_match"], 1),
                    round(scores["f1"], 1),
                    round(scores["bleu_2"], 3),
                    round(scores["bleu_4"], 3),
                ]
            )
    text = (
        "Candidates are the passage's recognised entities; rand-entity is seeded (1234, as the "
        "original). EM and F1 in percent, BLEU as fractions (`clincorp score clicr`)."
    )
    return CardSection("Baselines", text, Table(["method", "split", "queries", "EM", "F1", "B-2", "B-4"], rows))
