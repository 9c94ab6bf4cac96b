"""``odie_anaphora``'s notes: found in the inputs, named by kind, and turned into released rows.

A note is read from Knowtator XML (source ``knowtator``, the adjudicated gold, with its ``text``) or from
the i2b2/VA 2011 coreference layout (source ``i2b2``). Document names are
``<institution>_<note_type>_<nn>`` (``upmc_rad_01``). A broken annotation of a note fails the build
naming file and line, or with ``--on-error quarantine`` goes alone to rejects.jsonl
(:func:`quarantine`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import get_args

from clinical_corpora.builders.contract.base import BuildContext
from clinical_corpora.builders.sources.brat.folder import TEXT_SUFFIX
from clinical_corpora.builders.sources.discovery import find_documents
from clinical_corpora.builders.sources.i2b2.concepts import TokenGrid
from clinical_corpora.builders.sources.i2b2.coref import Concept, I2b2CorefDocument
from clinical_corpora.builders.sources.knowtator.document import KnowtatorDocument
from clinical_corpora.builders.sources.knowtator.folder import knowtator_files
from clinical_corpora.core.errors import SourceError, excerpt
from clinical_corpora.core.reader_changes import ReaderChange
from clinical_corpora.core.release_records import READER_CHANGES_FILE
from clinical_corpora.corpora.odie_anaphora.records import (
    SEMANTIC_CLASSES,
    Chain,
    Fragment,
    Institution,
    Markable,
    NoteType,
    OdieDocument,
    Pair,
)

logger = logging.getLogger(__name__)
I2B2_CONCEPT_TYPES = frozenset({*SEMANTIC_CLASSES, *(name.replace("_", " ") for name in SEMANTIC_CLASSES)})
"""The concept types an i2b2/VA note may carry: Savova et al. 2011's semantic classes (spaces or underscores)."""
QUARANTINE_HINT = (
    " (with --on-error quarantine this annotation alone is left out, in rejects.jsonl, and the note is released)"
)

_DOCUMENT_NAME = re.compile(r"(?P<institution>[a-z]+)_(?P<note_type>[a-z]+)_\w+")


def document_kind(doc_id: str, where: Path) -> tuple[Institution, NoteType]:
    """Institution and note type from a name ``<institution>_<note_type>_<nn>``."""
    match = _DOCUMENT_NAME.fullmatch(doc_id)
    institutions, note_types = get_args(Institution), get_args(NoteType)
    if match is None or match["institution"] not in institutions or match["note_type"] not in note_types:
        raise SourceError(
            where,
            f"document name {doc_id!r} is not <institution>_<note_type>_<number> with "
            f"institution in {list(institutions)} and note type in {list(note_types)}",
        )
    return match["institution"], match["note_type"]  # type: ignore[return-value]


def _fragments(text: str, pieces: Iterable[tuple[int, int]]) -> list[Fragment]:
    return [Fragment(start=start, end=end, text=text[start:end]) for start, end in pieces]


def _chains(chains: Iterable[Iterable[str]]) -> list[Chain]:
    return [Chain(id=f"chain_{number}", markable_ids=list(ids)) for number, ids in enumerate(chains, start=1)]


def knowtator_record(document: KnowtatorDocument, where: Path) -> OdieDocument:
    """The released row of a Knowtator gold document."""
    institution, note_type = document_kind(document.doc_id, where)
    text = document.text
    return OdieDocument(
        id=document.doc_id,
        institution=institution,
        note_type=note_type,
        text=text,
        markables=[
            Markable(
                id=m.id,
                start=m.start,
                end=m.end,
                text=text[m.start : m.end],
                fragments=_fragments(text, m.fragments),
                grammatical_category=m.grammatical_category,
                sentence_function=m.sentence_function,
                semantic_class=m.semantic_class,
            )
            for m in document.markables
        ],
        pairs=[
            Pair(
                id=p.id,
                anaphor_id=p.anaphor_id,
                antecedent_id=p.antecedent_id,
                bagga_class=p.bagga_class,
                relation=p.relation,
            )
            for p in document.pairs
        ],
        chains=_chains(document.identity_chains()),
    )


def gold_notes(knowtator: Path, texts: Path, *, quiet: bool = False) -> dict[str, tuple[Path | None, Path | None]]:
    """Note id → its gold Knowtator file (in ``knowtator``) and its text (in ``texts``), None when missing,
    sorted by id."""
    annotated = knowtator_files(knowtator, quiet=quiet)
    found = find_documents(texts, [TEXT_SUFFIX], what="note texts <doc>.txt", quiet=quiet)
    text_of = {document.id: document.require(TEXT_SUFFIX) for document in found}
    return {doc_id: (annotated.get(doc_id), text_of.get(doc_id)) for doc_id in sorted({*annotated, *text_of})}


def quarantine(ctx: BuildContext, problems: Iterable[SourceError]) -> None:
    """Each broken annotation of a note fails the build, or with --on-error quarantine goes to
    rejects.jsonl alone while the note is released without it."""
    for problem in problems:
        if ctx.on_error == "fail":
            raise SourceError(problem.path, problem.message + QUARANTINE_HINT, line=problem.line, record=problem.record)
        with ctx.annotation(problem.location):
            raise problem


def record_changes(ctx: BuildContext, doc_id: str, changes: Sequence[ReaderChange]) -> None:
    """What the reader changed in a note, kept for the release (reader-changes.jsonl, counted by kind in the
    manifest and the card), and counted in one warning."""
    ctx.record_changes(changes)
    if changes:
        logger.warning(
            "%s: %d line(s) read otherwise than written (the release lists them in %s)",
            doc_id,
            len(changes),
            READER_CHANGES_FILE,
        )


def i2b2_record(document: I2b2CorefDocument, where: Path) -> OdieDocument:
    """The released row of an i2b2/VA document: markable ids are the concepts' ``L:T-L:T`` positions."""
    institution, note_type = document_kind(document.doc_id, where)
    grid = TokenGrid(document.text)
    markables = [_i2b2_markable(document, concept, grid, where) for concept in document.concepts]
    offsets = sorted(sorted((c.start, c.end) for c in chain.concepts) for chain in document.chains)
    chains = [[_markable_id(grid, start, end) for start, end in chain] for chain in offsets]  # text order
    return OdieDocument(
        id=document.doc_id,
        institution=institution,
        note_type=note_type,
        text=document.text,
        markables=markables,
        pairs=_i2b2_pairs(document, grid, chains, markables),
        chains=_chains(chains),
    )


def _markable_id(grid: TokenGrid, start: int, end: int) -> str:
    """The ``L:T-L:T`` token position of a span (the id of an i2b2/VA markable)."""
    start_line, start_token, end_line, end_token = grid.position(start, end)
    return f"{start_line}:{start_token}-{end_line}:{end_token}"


def _i2b2_markable(document: I2b2CorefDocument, concept: Concept, grid: TokenGrid, where: Path) -> Markable:
    """A concept as a markable: its type is the semantic class; the i2b2/VA format has no other attribute."""
    semantic_class = next((name for name in SEMANTIC_CLASSES if name == concept.type.replace(" ", "_")), None)
    if semantic_class is None:
        raise SourceError(
            concept.source or where,
            f"concept {excerpt(concept.text)} has type {concept.type!r}; expected one of "
            f"{[name.replace('_', ' ') for name in SEMANTIC_CLASSES]}",
            line=concept.line,
            record=None if concept.line else document.doc_id,
        )
    return Markable(
        id=_markable_id(grid, concept.start, concept.end),
        start=concept.start,
        end=concept.end,
        text=concept.text,
        fragments=_fragments(document.text, [(concept.start, concept.end)]),
        grammatical_category=None,
        sentence_function=None,
        semantic_class=semantic_class,
    )


def _i2b2_pairs(
    document: I2b2CorefDocument, grid: TokenGrid, chains: list[list[str]], markables: list[Markable]
) -> list[Pair]:
    """Identity pairs in text order: the pairs file's, else each chain member with the member before it."""
    position = {m.id: (m.start, m.end) for m in markables}
    links = (
        [
            (
                _markable_id(grid, p.anaphor.start, p.anaphor.end),
                _markable_id(grid, p.antecedent.start, p.antecedent.end),
            )
            for p in document.pairs
        ]
        if document.pairs
        else [(anaphor, antecedent) for chain in chains for antecedent, anaphor in pairwise(chain)]
    )
    links.sort(key=lambda link: (position[link[0]], position[link[1]]))
    return [
        Pair(
            id=f"{anaphor}>{antecedent}",
            anaphor_id=anaphor,
            antecedent_id=antecedent,
            bagga_class=None,
            relation="identity",
        )
        for anaphor, antecedent in links
    ]
