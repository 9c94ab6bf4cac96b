"""Agreement between ``rad_coref``'s annotators: mention spans, then their chains (Datta et al. 2022, §4.4).

Each annotator's folder sits beside ``gold/`` in the ``annotations`` source and is laid out as the gold
(:mod:`clinical_corpora.corpora.rad_coref.reports`); patients whose gold was quarantined are left out.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from clinical_corpora.builders.contract.base import AgreementReport
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.sources.annotators import annotator_folders
from clinical_corpora.builders.sources.brat.folder import ANN_SUFFIX
from clinical_corpora.core.card import BarChart, CardSection, Cell, Series, Table
from clinical_corpora.core.counts import NO_COUNTS, PRFCounts
from clinical_corpora.core.file_limits import MAX_FILE_BYTES
from clinical_corpora.corpora.rad_coref.reports import (
    GOLD_FOLDER,
    AnnotatedMention,
    list_annotation_folder,
    read_annotator,
)
from clinical_corpora.validation.metrics.coref import CONLL_METRICS, Score, score_documents_all

Span = tuple[int, int, int]
"""(ROW_ID, start, end) of a mention: how annotators' mentions are matched (exact span)."""
Annotation = dict[int, list[AnnotatedMention]]
"""One annotator's mentions of one patient, by ROW_ID."""
F1_NAMES = ("span F1", "MUC F1", "CoNLL F1")
"""The measures the agreement figure draws per annotator pair."""

COLUMNS = [
    "annotators",
    "patients",
    "reports",
    "mentions marked (sum)",
    "exact span matches",
    "span F1",
    "MUC F1",
    "CoNLL F1",
]


def release_agreement(
    annotations: Path, config: str, release: ReleaseView, max_bytes: int = MAX_FILE_BYTES
) -> AgreementReport | None:
    """The agreement of the annotators' folders of ``annotations`` on the released (gold) reports of
    ``config``; None when fewer than two annotators are given."""
    folders = annotator_folders(annotations, ANN_SUFFIX, exclude={GOLD_FOLDER})
    if len(folders) < 2:
        return None
    released = [row for _, row in release.rows(config)]
    texts = {report["row_id"]: report["text"] for row in released for report in row["reports"]}
    gold = list_annotation_folder(annotations / GOLD_FOLDER, quiet=True)
    quarantined = set(gold) - {int(row["patient_id"]) for row in released}
    annotated = {name: read_annotator(folder, texts, quarantined, max_bytes) for name, folder in folders.items()}
    report = annotator_agreement(annotated)
    if quarantined:
        report.sections.append(
            CardSection(
                "Patients left out of the agreement",
                "Their gold annotations were quarantined (rejects.jsonl says why), so the annotators' "
                f"reports of them are not compared: patients {', '.join(map(str, sorted(quarantined)))}.",
            )
        )
    return report


@dataclass(frozen=True)
class PairComparison:
    """Two annotators on the reports both annotated: exact-span counts, and per patient (document) the
    chains of each restricted to the mentions both marked."""

    spans: PRFCounts
    reports: int
    key: dict[str, list[list[Span]]]
    response: dict[str, list[list[Span]]]


def compare_annotators(first: Mapping[str, Annotation], second: Mapping[str, Annotation], label: str) -> PairComparison:
    """Compare two annotators patient by patient (``label`` names them in the documents' ids)."""
    key: dict[str, list[list[Span]]] = {}
    response: dict[str, list[list[Span]]] = {}
    spans, reports = NO_COUNTS, 0
    for patient in sorted(set(first) & set(second)):
        a, b = first[patient], second[patient]
        shared_rows = sorted(set(a) & set(b))
        spans_a = {(row, m.start, m.end) for row in shared_rows for m in a[row]}
        spans_b = {(row, m.start, m.end) for row in shared_rows for m in b[row]}
        both = spans_a & spans_b
        spans, reports = spans + PRFCounts(len(both), len(spans_b), len(spans_a)), reports + len(shared_rows)
        document = f"{patient} {label}"
        key[document] = _chains_on(a, shared_rows, both)
        response[document] = _chains_on(b, shared_rows, both)
    return PairComparison(spans, reports, key, response)


def _chains_on(mentions: Annotation, rows: Iterable[int], kept: set[Span]) -> list[list[Span]]:
    chains: dict[str, list[Span]] = {}
    for row_id in rows:
        for mention in mentions[row_id]:
            span = (row_id, mention.start, mention.end)
            if span in kept:
                chains.setdefault(mention.chain, []).append(span)
    return list(chains.values())


def conll_f1_of(scores: Mapping[str, Score]) -> float:
    """CoNLL F1 from scores already summed over documents: the mean of the MUC, B³ and CEAF-e F1."""
    return sum(scores[name].f1 for name in CONLL_METRICS) / 3


def annotator_agreement(annotated: dict[str, dict[str, Annotation]]) -> AgreementReport:
    """Exact-span mention F1, and MUC and CoNLL F1 on the mentions both annotators marked.

    Every pair of annotators is compared on the reports both annotated; span counts and metric
    counts are summed over reports and patients (documents) before the ratios are taken.
    """
    rows: list[list[Cell]] = []
    pairs: dict[str, tuple[float, float, float]] = {}
    total = NO_COUNTS
    key_docs: dict[str, list[list[Span]]] = {}
    response_docs: dict[str, list[list[Span]]] = {}
    for first, second in itertools.combinations(sorted(annotated), 2):
        pair = compare_annotators(annotated[first], annotated[second], f"{first}|{second}")
        scores = score_documents_all(pair.key, pair.response, CONLL_METRICS)
        spans = pair.spans
        rows.append(
            [
                f"{first} vs {second}",
                len(pair.key),
                pair.reports,
                spans.predicted + spans.gold,
                spans.tp,
                spans.dice,
                scores["muc"].f1,
                conll_f1_of(scores),
            ]
        )
        pairs[f"{first} vs {second}"] = (spans.dice, scores["muc"].f1, conll_f1_of(scores))
        total += spans
        key_docs.update(pair.key)
        response_docs.update(pair.response)
    overall = score_documents_all(key_docs, response_docs, CONLL_METRICS)
    measures = {"span_f1": total.dice, "muc_f1": overall["muc"].f1, "conll_f1": conll_f1_of(overall)}
    chart = BarChart(
        "inter-annotator-agreement",
        "Agreement between the annotators",
        F1_NAMES,
        tuple(Series(pair, f1) for pair, f1 in pairs.items()),
        "measure",
        "F1",
        horizontal=True,
    )
    return AgreementReport(
        measures, [CardSection("Inter-annotator agreement", _summary(measures), Table(COLUMNS, rows), figures=[chart])]
    )


def _summary(measures: Mapping[str, float]) -> str:
    return (
        "Datta et al. 2022, §4.4. Mention span F1 with exact span match (2 × matches / mentions marked by the two), "
        "then MUC and CoNLL F1 (mean of MUC, B³, CEAF-e) between the annotators' chains restricted to "
        "the mentions both marked, one document per patient, counts summed over patients. "
        f"Overall: span F1 {measures['span_f1']:.4f}, MUC F1 {measures['muc_f1']:.4f}, "
        f"CoNLL F1 {measures['conll_f1']:.4f}."
    )
