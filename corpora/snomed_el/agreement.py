"""Agreement of ``snomed_el``'s annotators with the release: mean pairwise Jaccard (Davidson et al. 2025).

The optional ``annotators`` source holds one ``note_id,start,end,concept_id`` CSV per annotator, named by
its file stem; each is compared with the released annotations (annotator ``released``) and with the others.
"""

from __future__ import annotations

from pathlib import Path

from clinical_corpora.builders.contract.base import AgreementReport
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.sources.annotators import annotator_folders
from clinical_corpora.builders.sources.mimic.notes import read_span_annotations
from clinical_corpora.core.card import BarChart, CardSection, Cell, Table
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.corpora.snomed_el.released_annotations import released_annotations
from clinical_corpora.validation.agreement.jaccard import mean_pairwise_jaccard

RELEASED_ANNOTATOR = "released"


def annotator_agreement(folder: Path, release: ReleaseView) -> AgreementReport:
    """Mean pairwise Jaccard of the released annotations and each annotator file of ``folder``."""
    files = annotator_folders(folder, ".csv")
    if not files:
        raise SourceError(folder, "expected one note_id,start,end,concept_id CSV per annotator")
    others = {name: read_span_annotations(path) for name, path in files.items()}
    annotated = {annotation.note_id for annotations in others.values() for annotation in annotations}
    annotators = {RELEASED_ANNOTATOR: released_annotations(release, annotated), **others}
    try:
        report = mean_pairwise_jaccard(annotators)
    except ValueError as error:
        raise ClincorpError(f"{folder}: {error}") from None
    rows: list[list[Cell]] = [
        [p.annotator_a, p.annotator_b, p.shared_notes, p.matched, p.only_a, p.only_b, p.jaccard] for p in report.pairs
    ]
    text = (
        "Jaccard similarity of the sets of (entity, concept) on the notes two annotators share, ignoring "
        "span boundary variation (an entity matches when spans overlap and the concept is the same), "
        f"averaged over annotator pairs (Davidson et al. 2025 report 0.85). `{RELEASED_ANNOTATOR}` is this release."
    )
    table = Table(["annotator A", "annotator B", "shared notes", "matched", "only A", "only B", "Jaccard"], rows)
    chart = BarChart.counts(
        "inter-annotator-agreement",
        "Jaccard similarity of each pair of annotators",
        {f"{p.annotator_a} vs {p.annotator_b}": p.jaccard for p in report.pairs},
        "annotators",
        "Jaccard",
        horizontal=True,
    )
    return AgreementReport(
        {"mean_jaccard": report.mean_jaccard}, [CardSection("Agreement", text, table, figures=[chart])]
    )
