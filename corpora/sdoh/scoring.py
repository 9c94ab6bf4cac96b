"""Score BRAT folders of SHAC events with the n2c2 2022 Track 2 (SDOH) scorer.

Reads gold and predicted folders with the BRAT reader, converts each document through
``builders.sources.shac`` (the release's conversion, without its label scheme) and counts it with
the pure scorer in :mod:`clinical_corpora.validation.metrics.sdoh`, streaming chunks of documents,
optionally over worker processes; writes the official scores CSV and the per-document one. The gold may
also be an sdoh release (or its ``data/sdoh`` config): :func:`gold_folder` writes it as SHAC BRAT first.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import gc
import os
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from clinical_corpora.builders.contract.release_view import GivenRelease, given_release
from clinical_corpora.builders.sources.brat.annotations import BratDocument
from clinical_corpora.builders.sources.brat.folder import ANN_SUFFIX, TEXT_SUFFIX, brat_documents
from clinical_corpora.builders.sources.brat.standoff import read_brat_document
from clinical_corpora.builders.sources.discovery import Document
from clinical_corpora.builders.sources.shac import shac_annotations
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.file_limits import MAX_FILE_BYTES
from clinical_corpora.core.processes import end_with_parent, fork_context
from clinical_corpora.corpora.sdoh.exports import CONFIG, write_shac
from clinical_corpora.validation.metrics.sdoh import (
    DETAILED_CSV_COLUMNS,
    Counts,
    EventSpan,
    ScoreRow,
    ScoringCriteria,
    SdohEvent,
    count_document,
    detailed_csv_path,
    unpaired_documents,
    write_scores_csv,
)


def events_from_brat(doc: BratDocument, source: str | Path) -> list[SdohEvent]:
    """The events of a BRAT document, subtypes taken from the value attribute on each text-bound.

    Read by :func:`~clinical_corpora.builders.sources.shac.shac_annotations` without a scheme, so any
    event type or attribute is scored; ``source`` names the document in errors.
    """
    annotations = shac_annotations(doc, source)
    spans = {
        key: EventSpan(span.textbound.type, span.textbound.start, span.textbound.end, span.textbound.text, span.subtype)
        for key, span in annotations.textbounds.items()
    }
    return [
        SdohEvent(spans[event.trigger], tuple([spans[target] for _, target in event.arguments]))
        for event in annotations.events
    ]


DEFAULT_CRITERIA = ScoringCriteria()
"""The n2c2 2022 scorer's defaults: triggers overlap, span-only arguments exact, span-with-value arguments label."""


def score_folders(
    gold_dir: str | Path,
    pred_dir: str | Path,
    criteria: ScoringCriteria = DEFAULT_CRITERIA,
    *,
    on_document: Callable[[str, list[ScoreRow]], None] | None = None,
    workers: int = 1,
    max_bytes: int = MAX_FILE_BYTES,
) -> list[ScoreRow]:
    """Score two BRAT folders with ``criteria``, streaming chunks of documents; OVERALL row first.

    ``on_document(doc_id, rows)`` receives each document's rows in id order (the ``--detailed``
    output). ``workers`` > 1 scores chunks in that many processes; results are identical. A file over
    ``max_bytes`` (a release's own ``max_file_bytes`` when the gold is one) is a SourceError naming it.
    Raises SourceError when the gold folder is empty or lists documents found in one folder only.
    """
    gold = {document.id: document for document in brat_documents(gold_dir, quiet=True)}
    if not gold:
        raise SourceError(gold_dir, "no BRAT documents (.txt + .ann) found in the gold folder")
    predicted = {document.id: document for document in brat_documents(pred_dir, quiet=True)}
    problem = unpaired_documents(gold, predicted)
    if problem:
        raise SourceError(pred_dir, f"{problem} (gold folder: {gold_dir})")
    pairs = [(doc_id, gold[doc_id], predicted[doc_id]) for doc_id in sorted(gold)]
    total = Counts()
    with _chunk_mapper(workers, pairs) as mapper:
        for outcome in mapper(functools.partial(_score_chunk, criteria, on_document is not None, max_bytes)):
            if isinstance(outcome, _FailedChunk):
                raise SourceError(outcome.path, outcome.message, line=outcome.line,
                                  record=outcome.record)  # fmt: skip
            chunk_counts, documents = outcome
            total.add(chunk_counts)
            if on_document is not None:
                for doc_id, rows in documents:
                    on_document(doc_id, rows)
    return total.summary()


@dataclass(frozen=True)
class Reading:
    """How two folders are read for scoring: the processes scoring chunks, and the largest file read whole."""

    workers: int = 1
    max_bytes: int = MAX_FILE_BYTES


def score_folders_to_csv(
    gold_dir: str | Path,
    pred_dir: str | Path,
    out: str | Path,
    criteria: ScoringCriteria = DEFAULT_CRITERIA,
    *,
    detailed: bool = False,
    reading: Reading = Reading(),
) -> list[ScoreRow]:
    """``score_folders`` writing ``out`` and, if ``detailed``, per-document rows to
    ``detailed_csv_path(out)``; returns the summary rows."""
    if not detailed:
        rows = score_folders(gold_dir, pred_dir, criteria, workers=reading.workers, max_bytes=reading.max_bytes)
    else:
        with open(detailed_csv_path(out), "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(DETAILED_CSV_COLUMNS)
            rows = score_folders(
                gold_dir, pred_dir, criteria, workers=reading.workers, max_bytes=reading.max_bytes,
                on_document=lambda doc_id, doc_rows: writer.writerows(
                    (doc_id, *row.csv_fields()) for row in doc_rows
                ),
            )  # fmt: skip
    write_scores_csv(rows, out)
    return rows


def file_limit(gold: Path | GivenRelease) -> int:
    """The largest file scoring reads whole: the release's own ``max_file_bytes`` when the gold is one (a
    maintainer who raised it for long notes scores them too), else the default."""
    return gold.max_file_bytes if isinstance(gold, GivenRelease) else MAX_FILE_BYTES


@contextlib.contextmanager
def gold_folder(gold: Path | GivenRelease, split: str | None = None) -> Iterator[Path]:
    """The BRAT folder to score against: ``gold`` itself, or, for an sdoh release (or its ``data/sdoh``
    config), the release written as SHAC BRAT in a temporary folder: ``{split}/{source}/<doc>``, or with
    ``split`` that split's ``{source}/<doc>`` (to score predictions of one split)."""
    release = given_release(gold, split)
    if release is None:
        assert isinstance(gold, Path)
        yield gold
        return
    release = release.of(CONFIG, CONFIG)
    with tempfile.TemporaryDirectory(prefix="clincorp-sdoh-gold-") as folder:
        list(write_shac(release.view, Path(folder), release.splits(CONFIG, split)))
        yield Path(folder) / split if split else Path(folder)


_CHUNK_SIZE = 256

Pair = tuple[str, Document, Document]
"""A document's id, its gold files and its predicted files."""


@dataclass(frozen=True, slots=True)
class _FailedChunk:
    """A SourceError from a worker process (SourceError itself does not survive pickling)."""

    path: str
    message: str
    line: int | None
    record: str | None


ChunkOutcome = tuple[Counts, list[tuple[str, list[ScoreRow]]]] | _FailedChunk


def _score_chunk(criteria: ScoringCriteria, keep_rows: bool, max_bytes: int, pairs: list[Pair]) -> ChunkOutcome:
    """Counts of a chunk of (id, gold, predicted) documents, and each document's rows when ``keep_rows``."""
    total = Counts()
    documents = []
    try:
        for doc_id, gold, predicted in pairs:
            counts = count_document(_folder_events(gold, max_bytes), _folder_events(predicted, max_bytes), criteria)
            total.add(counts)
            if keep_rows:
                documents.append((doc_id, counts.rows()))
    except SourceError as error:
        return _FailedChunk(error.path, error.message, error.line, error.record)
    return total, documents


ChunkScorer = Callable[[list[Pair]], ChunkOutcome]


@contextlib.contextmanager
def _chunk_mapper(workers: int, pairs: list[Pair]) -> Iterator[Callable[[ChunkScorer], Iterator[ChunkOutcome]]]:
    """Maps a chunk scorer over ``pairs`` in chunks of ``_CHUNK_SIZE``, in order. Worker processes are given
    the pairs once, when they start (inherited, not pickled, where processes fork), and each job only the
    start of its chunk."""
    if workers < 1:
        raise ValueError(f"workers must be at least 1; got {workers}")
    starts = range(0, len(pairs), _CHUNK_SIZE)
    if workers == 1:
        yield lambda score: (score(pairs[start : start + _CHUNK_SIZE]) for start in starts)
        return
    context = fork_context()
    held = (pairs, os.getpid())
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_hold_pairs, initargs=held) as pool:
        yield lambda score: pool.map(functools.partial(_score_held, score), starts)


_HELD: list[Pair] = []
"""In a worker process: every pair being scored (set once, when the worker starts)."""


def _hold_pairs(pairs: list[Pair], parent: int) -> None:
    """A worker's start: keep the pairs, and freeze what it inherited (the pairs' listing included), which the
    collector would otherwise traverse again and again as scoring allocates (~7% of a worker's time)."""
    global _HELD
    end_with_parent(parent)
    _HELD = pairs
    gc.freeze()


def _score_held(score: ChunkScorer, start: int) -> ChunkOutcome:
    return score(_HELD[start : start + _CHUNK_SIZE])


def _folder_events(document: Document, max_bytes: int) -> list[SdohEvent]:
    _, doc = read_brat_document(document, text_without_ann=True, max_bytes=max_bytes)
    return events_from_brat(doc, document.paths.get(ANN_SUFFIX) or document.require(TEXT_SUFFIX))


__all__ = [
    "DEFAULT_CRITERIA",
    "Reading",
    "events_from_brat",
    "file_limit",
    "gold_folder",
    "score_folders",
    "score_folders_to_csv",
]
