"""A CliCR case's entities: recognised by the UMLS dictionary matcher, or read from BRAT standoff.

The matcher (:mod:`clinical_corpora.corpora.clicr.entity_matcher`) marks the passage and every learning
point. With the optional ``entities`` source (BRAT standoff from another recogniser, see
:func:`standoff_entities`) its entities replace the matcher's; Šuster & Daelemans 2018's boundary
refinements are applied to them too.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from clinical_corpora.builders.sources.bmj_html import PASSAGE_SEPARATOR, CaseReport
from clinical_corpora.builders.sources.brat.annotations import TextBound
from clinical_corpora.builders.sources.brat.folder import ANN_SUFFIX, TEXT_SUFFIX
from clinical_corpora.builders.sources.brat.standoff import read_brat
from clinical_corpora.builders.sources.discovery import Document
from clinical_corpora.builders.sources.text_lines import read_utf8
from clinical_corpora.core.errors import SourceError, excerpt
from clinical_corpora.core.file_limits import MAX_FILE_BYTES
from clinical_corpora.corpora.clicr.entity_matcher import CATEGORIES, Entity, EntityMatcher, refine_span
from clinical_corpora.corpora.clicr.umls_index import UmlsIndex

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


def standoff_entities(
    folder: Path | Document, case: CaseReport, index: UmlsIndex, max_bytes: int = MAX_FILE_BYTES
) -> CaseEntities:
    """A case's entities from BRAT standoff: ``<case id>.txt`` (:func:`case_text`) and ``.ann`` (in
    ``folder``, or the document as :func:`brat_documents` lists it).

    Each text-bound is typed by its i2b2 category and carries its CUI in an ``AnnotatorNotes``
    note (``#1<TAB>AnnotatorNotes T1<TAB>C0035020``); its semantic type comes from UMLS (empty for
    a concept outside the mapped types). Spans are refined as the matcher's are.
    """
    text_path, ann_path = _standoff_files(folder, case)
    text, point_starts = case_text(case)
    if read_utf8(text_path, max_bytes) != text:
        raise SourceError(
            text_path,
            "differs from the case text (the passage, 'Learning points' and the points, "
            "blank-line separated): the standoff is stale or from other pages",
        )
    document = read_brat(ann_path, text, max_bytes=max_bytes)
    cuis = {note.target: note.text.strip() for note in document.notes if note.type == "AnnotatorNotes"}
    found = CaseEntities([], [[] for _ in point_starts])
    for bound in document.textbounds:
        entity = _standoff_entity(bound, cuis.get(bound.id, ""), text, index, ann_path)
        if entity.end <= len(case.passage):
            found.passage.append(entity)
            continue
        point = _learning_point_of(entity, case, point_starts)
        if point is None:
            raise SourceError(
                ann_path,
                f"text-bound {bound.id}: {entity.start}-{entity.end} lies in no passage block or learning point",
            )
        first = point_starts[point]
        found.learning_points[point].append(
            Entity(entity.start - first, entity.end - first, entity.text, entity.cui, entity.sem_type, entity.category)
        )
    return CaseEntities(
        sorted(found.passage, key=_span_order),
        [sorted(entities, key=_span_order) for entities in found.learning_points],
    )


def _standoff_files(folder: Path | Document, case: CaseReport) -> tuple[Path, Path]:
    """The case's ``.txt`` and ``.ann``, a SourceError naming them when either is missing."""
    if isinstance(folder, Document):
        text_path, ann_path = folder.require(TEXT_SUFFIX), folder.require(ANN_SUFFIX)
    else:
        text_path, ann_path = folder / f"{case.case_id}{TEXT_SUFFIX}", folder / f"{case.case_id}{ANN_SUFFIX}"
    if not (text_path.is_file() and ann_path.is_file()):
        raise SourceError(
            text_path.parent, f"expected {text_path.name} and {ann_path.name} for this case", record=case.case_id
        )
    return text_path, ann_path


def _standoff_entity(bound: TextBound, cui: str, text: str, index: UmlsIndex, ann_path: Path) -> Entity:
    """A text-bound of the case text as an entity: checked, its span refined, its semantic type from UMLS."""
    where = f"text-bound {bound.id}"
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
    start, end = refined
    return Entity(start, end, text[start:end], cui, mapped[0] if mapped else "", category)


def _learning_point_of(entity: Entity, case: CaseReport, point_starts: list[int]) -> int | None:
    """The index of the learning point holding the entity (offsets into the case text), if any."""
    return next(
        (
            i
            for i, first in enumerate(point_starts)
            if first <= entity.start and entity.end <= first + len(case.learning_points[i])
        ),
        None,
    )


def _span_order(entity: Entity) -> tuple[int, int]:
    return entity.start, entity.end
