"""Agreement of ``odie_anaphora``'s two annotators: Savova et al. 2011's pair-wise F and κ, and chain scores.

With the Knowtator input, the optional sources ``annotator_a`` and ``annotator_b`` (one folder per
annotator, laid out as the gold) are compared with each other and with the released gold: pair tables
over (anaphor, antecedent, relation) triples (:mod:`clinical_corpora.validation.agreement.pairwise`) and
the identity chains scored as coreference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from clinical_corpora.builders.contract.base import AgreementReport, BuildContext
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.sources.annotators import annotator_folders
from clinical_corpora.builders.sources.knowtator.document import KnowtatorDocument
from clinical_corpora.builders.sources.knowtator.folder import KNOWTATOR_SUFFIX, knowtator_files
from clinical_corpora.builders.sources.knowtator.xml import read_knowtator_file
from clinical_corpora.core.card import BarChart, CardSection, Series, Table
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.file_limits import MAX_FILE_BYTES
from clinical_corpora.corpora.odie_anaphora.notes import document_kind, quarantine
from clinical_corpora.corpora.odie_anaphora.records import RELATION_TYPES
from clinical_corpora.validation.agreement.pairwise import AgreementReport as PairwiseReport
from clinical_corpora.validation.agreement.pairwise import (
    AgreementTable,
    AnnotatedPairs,
    document_agreement,
    sum_by_group,
)
from clinical_corpora.validation.metrics.coref import Score, score_documents_all

CHAIN_METRICS = ("muc", "b_cubed", "ceaf_e", "blanc")
ANNOTATOR_SOURCES = ("annotator_a", "annotator_b")
BETWEEN_ANNOTATORS = "annotator_a vs annotator_b"


def pairwise_agreement(
    ctx: BuildContext, config: str, release: ReleaseView, max_bytes: int = MAX_FILE_BYTES
) -> AgreementReport | None:
    """Savova et al. 2011's pair-wise F and kappa, and chain scores, of the two annotators of the
    Knowtator input."""
    given = [name for name in ANNOTATOR_SOURCES if ctx.has_source(name)]
    if ctx.has_source("i2b2") or not given:
        return None
    if len(given) == 1:
        raise ClincorpError(
            f"only source {given[0]!r} is given: the agreement needs both {' and '.join(ANNOTATOR_SOURCES)}, or neither"
        )
    gold_dir, text_dir = ctx.source("knowtator"), ctx.source("text")
    gold_files = knowtator_files(gold_dir, quiet=True)
    gold = {
        row["id"]: read_knowtator_file(gold_files[row["id"]], text_dir, max_bytes=max_bytes)
        for _, row in release.rows(config)
    }
    folders = annotator_folders({name: ctx.source(name) for name in ANNOTATOR_SOURCES}, KNOWTATOR_SUFFIX)
    first, second = (read_annotator(folder, text_dir, max_bytes) for folder in folders.values())
    broken = [p for annotator in (first, second) for d in annotator.values() for p in d.problems]
    quarantine(ctx, broken)
    comparisons = [
        _compare(BETWEEN_ANNOTATORS, first, second, _by_note_type),
        _compare("annotator_a vs gold", first, gold, _by_annotator(first)),
        _compare("annotator_b vs gold", second, gold, _by_annotator(second)),
    ]
    between, first_gold, second_gold = comparisons
    measures = {
        "kappa": between.overall.kappa,
        "f_score": between.overall.f_score,
        **{f"chains_{metric}_f1": between.chains[metric].f1 for metric in CHAIN_METRICS},
        "annotator_a_gold_kappa": first_gold.overall.kappa,
        "annotator_b_gold_kappa": second_gold.overall.kappa,
    }
    left_out = [
        *(f"{doc_id} (not in the released gold)" for doc_id in sorted({*first, *second} - set(gold))),
        *(f"{doc_id} (annotated by one annotator only)" for doc_id in sorted(set(first) ^ set(second))),
    ]
    sections = _agreement_sections(comparisons, left_out)
    if broken:
        sections.append(
            CardSection(
                "Annotators' annotations left out of the agreement",
                "Broken annotations of the annotators' files (quarantined with --on-error quarantine; "
                "the pairs that need them are left out too): "
                + "; ".join(f"{ctx.relative(p.location)}: {p.message}" for p in broken),
            )
        )
    return AgreementReport(measures, sections)


@dataclass(frozen=True)
class _Comparison:
    """One annotation against a reference: pair tables per group (and ``"all"``), chain scores."""

    label: str
    groups: dict[str, PairwiseReport]
    chains: dict[str, Score]

    @property
    def overall(self) -> AgreementTable:
        return self.groups["all"].overall


def read_annotator(folder: Path, text_dir: Path, max_bytes: int = MAX_FILE_BYTES) -> dict[str, KnowtatorDocument]:
    """Note id → one annotator's Knowtator document, its name checked as the gold's are."""
    documents = {}
    for xml_path in knowtator_files(folder).values():
        document = read_knowtator_file(xml_path, text_dir, max_bytes=max_bytes)
        document_kind(document.doc_id, xml_path)
        documents[document.doc_id] = document
    return documents


Grouping = Callable[[str], str]


def _by_note_type(doc_id: str) -> str:
    return doc_id.split("_")[1]


def _by_annotator(documents: dict[str, KnowtatorDocument]) -> Grouping:
    return lambda doc_id: "+".join(documents[doc_id].annotators) or "unnamed annotator"


def _annotated(document: KnowtatorDocument) -> AnnotatedPairs:
    return AnnotatedPairs(document.semantic_classes_by_key(), document.pair_keys())


def _compare(
    label: str, response: dict[str, KnowtatorDocument], reference: dict[str, KnowtatorDocument], group: Grouping
) -> _Comparison:
    """Pair tables (summed per group) and chain scores over the documents both annotations have."""
    shared = sorted(set(response) & set(reference))
    groups = sum_by_group(
        (group(doc_id), document_agreement(_annotated(response[doc_id]), _annotated(reference[doc_id]), RELATION_TYPES))
        for doc_id in shared
    )
    chains = score_documents_all(
        {d: reference[d].identity_chain_keys() for d in shared},
        {d: response[d].identity_chain_keys() for d in shared},
        CHAIN_METRICS,
    )
    return _Comparison(label, groups, chains)


MEASURE_ROWS = {
    "true_positive": "True positive",
    "false_positive": "False positive",
    "false_negative": "False negative",
    "true_negative": "True negative",
    "precision": "Precision",
    "recall": "Recall",
    "f_score": "F-score",
    "kappa": "κ",
}


def _measure_table(columns: dict[str, AgreementTable]) -> Table:
    """Savova et al. 2011's layout: one row per measure, one column per group."""
    values = {name: table.as_dict() for name, table in columns.items()}
    return Table(
        ["", *columns], [[label, *(values[name][key] for name in columns)] for key, label in MEASURE_ROWS.items()]
    )


def _measure_chart(name: str, title: str, columns: dict[str, AgreementTable], axis: str) -> BarChart:
    """F-score and κ per group (a group without pairs has no κ, and no bar)."""
    return BarChart(
        name,
        title,
        tuple(columns),
        tuple(
            Series(MEASURE_ROWS[measure], tuple(table.as_dict()[measure] for table in columns.values()))
            for measure in ("f_score", "kappa")
        ),
        axis,
        "agreement",
        horizontal=True,
    )


def _charted(
    title: str, text: str, measures: dict[str, AgreementTable], name: str, chart_title: str, axis: str
) -> CardSection:
    """A section of agreement per group: its table, and a chart of it (figure ``name``, ``chart_title``, ``axis``)."""
    figure = _measure_chart(name, chart_title, measures, axis)
    return CardSection(title, text, _measure_table(measures), figures=[figure])


def _agreement_sections(comparisons: list[_Comparison], left_out: list[str]) -> list[CardSection]:
    between, *against_gold = comparisons
    totals = between.groups["all"]
    note_types = {name: between.groups[name].overall for name in sorted(between.groups) if name != "all"}
    sections = [
        _charted(
            "Pair-wise agreement between the annotators",
            "Annotator A against annotator B (the reference) over (anaphor, antecedent, relation) "
            "triples, summed over notes, overall and per note type; κ counts as true negatives every "
            "other ordered markable pair with each of the four relation types (Savova et al. 2011, "
            "eqns 1-8).",
            {"all": between.overall, **note_types},
            "agreement-per-note-type",
            "Pair-wise agreement between the annotators, per note type",
            "note type",
        ),
        _charted(
            "Pair-wise agreement per relation type",
            "",
            dict(totals.by_relation),
            "agreement-per-relation-type",
            "Pair-wise agreement per relation type",
            "relation type",
        ),
        _charted(
            "Pair-wise agreement per markable type",
            "Pairs grouped by the semantic class of their anaphor.",
            dict(sorted(totals.by_markable_type.items())),
            "agreement-per-markable-type",
            "Pair-wise agreement per semantic class of the anaphor",
            "semantic class",
        ),
        CardSection(
            "Pair-wise agreement of each annotator with the gold standard",
            "Columns name the annotators recorded in the Knowtator files.",
            _measure_table(
                {
                    f"{name} and gold": report.overall
                    for comparison in against_gold
                    for name, report in sorted(comparison.groups.items())
                    if name != "all"
                }
            ),
        ),
        CardSection(
            "Identity chains scored as coreference",
            "Identity chains of the response against the reference with the CoNLL-2012 scorer's "
            "definitions, mentions matched by exact span.",
            Table(
                ["comparison", *(f"{metric} {part}" for metric in CHAIN_METRICS for part in ("R", "P", "F1"))],
                [[c.label, *(value for metric in CHAIN_METRICS for value in c.chains[metric])] for c in comparisons],
            ),
        ),
    ]
    if left_out:
        sections.append(CardSection("Annotated notes left out of the agreement", ", ".join(left_out)))
    return sections
