"""The entity recogniser against hand-marked cases: precision, recall and F1 of CliCR's entities.

The optional ``entity_gold`` source holds BRAT standoff of some cases' passages (``<case id>.txt`` and
``.ann``); each text-bound is a gold entity, compared with the entities the release recognised in that
passage, with exact and with overlapping boundaries.
"""

from __future__ import annotations

from pathlib import Path

from clinical_corpora.builders.contract.base import AgreementReport
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.sources.brat.standoff import iter_brat_folder
from clinical_corpora.core.card import CardSection, Table
from clinical_corpora.core.counts import PRFCounts, f_measure, ratio
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.file_limits import MAX_FILE_BYTES


def recogniser_agreement(
    gold_root: Path, release: ReleaseView, max_bytes: int = MAX_FILE_BYTES
) -> AgreementReport | None:
    """The released passages' entities against the gold standoff of ``gold_root``; None (the check not
    run) when the folder holds no case."""
    gold = {doc_id: (text, doc) for doc_id, text, doc in iter_brat_folder(gold_root, max_bytes=max_bytes)}
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
