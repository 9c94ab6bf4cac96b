"""``rad_coref``: findings and devices tracked across a patient's radiology reports (Datta et al. 2022).

Sources: MIMIC-III ``NOTEEVENTS`` (streamed; only the annotated ROW_IDs are kept) and an
``annotations`` folder holding ``gold/`` and one folder per annotator, each laid out as
``<SUBJECT_ID>/<ROW_ID>.ann`` (optionally with the ``.txt``, checked against NOTEEVENTS). Text-bound
types are ``Finding`` and ``Device``; each mention's chain is an AnnotatorNotes line
``#1<TAB>AnnotatorNotes T3<TAB>chain=E12`` (format: ``corpora/rad_coref/README.md``).

Configs: ``rad_coref`` (one row per patient) and ``mention_pairs`` (every within-patient mention
pair with its sentences and a coreferent label, Datta et al. 2022, §5.2).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from clinical_corpora.builders.contract.base import (
    AgreementReport,
    BuildContext,
    Builder,
    CardSection,
    Row,
    Table,
)
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.contract.text_units import Sentence, split_sentences, tokenize
from clinical_corpora.builders.sources.annotators import annotator_folders
from clinical_corpora.builders.sources.brat import ANN_SUFFIX, TEXT_SUFFIX, brat_documents, parse_brat, read_utf8
from clinical_corpora.builders.sources.discovery import Document
from clinical_corpora.builders.sources.documents import keys_of, locator
from clinical_corpora.builders.sources.mimic_notes import NoteEvent, iter_noteevents
from clinical_corpora.core.counts import NO_COUNTS, PRFCounts
from clinical_corpora.core.errors import SourceError, excerpt
from clinical_corpora.corpora.rad_coref import bigbio
from clinical_corpora.corpora.rad_coref.records import (
    MENTION_TYPES,
    Chain,
    Mention,
    MentionPair,
    MentionType,
    Modality,
    PairMention,
    Patient,
    Report,
)
from clinical_corpora.corpora.rad_coref.string_match import string_match_chains
from clinical_corpora.validation.metrics.coref import score_documents_all

CONFIG = "rad_coref"
PAIRS_CONFIG = "mention_pairs"
GOLD_FOLDER = "gold"
NOTEEVENTS = "noteevents"
RADIOLOGY = "Radiology"
_CHAIN_NOTE = re.compile(r"chain=(\S+)")
_MODALITY_RULES: tuple[tuple[Modality, re.Pattern[str]], ...] = (
    ("CTA", re.compile(r"\bCTA\b")),
    ("CT", re.compile(r"\bCT\b")),
    ("MR", re.compile(r"\bMR[AIV]?\b")),
    ("US", re.compile(r"\bUS\b|\bU\.S\.|ULTRASOUND|DUPLEX|DOPPLER|\bEXT VEINS\b")),
    ("XR", re.compile(r"\b(?:AP|PA|LAT|LATERAL|VIEWS?|SUPINE|ERECT|DECUB\w*|PORT\.?|PORTABLE|X-?RAY|XR|KUB)\b")),
)
TWO_WEEKS_DAYS = 14


def modality_of(description: str) -> Modality:
    """The imaging modality a NOTEEVENTS DESCRIPTION names (first matching rule, else OTHER)."""
    upper = description.upper()
    return next((modality for modality, rule in _MODALITY_RULES if rule.search(upper)), "OTHER")


@dataclass(frozen=True)
class AnnotatedMention:
    """One text-bound of an ``.ann`` file with its chain id, and where it was read."""

    textbound: str
    type: MentionType
    start: int
    end: int
    text: str
    chain: str
    line: int


@dataclass(frozen=True)
class AnnotatedReport:
    """One report of an annotation folder: ``<SUBJECT_ID>/<ROW_ID>.ann`` and, optionally, its ``.txt``."""

    subject_id: int
    row_id: int
    document: Document

    @property
    def ann(self) -> Path:
        """The ``.ann`` file; a SourceError naming the ``.txt`` when the report has none."""
        return self.document.require(ANN_SUFFIX)

    @property
    def text(self) -> Path | None:
        return self.document.get(TEXT_SUFFIX)


def list_annotation_folder(folder: Path, *, quiet: bool = False) -> dict[int, list[AnnotatedReport]]:
    """SUBJECT_ID → its reports, from ``<folder>/<SUBJECT_ID>/<ROW_ID>.ann`` (and ``.txt``); a patient
    folder holding no file is listed with no report (an error when the patient is built)."""
    patients: dict[int, list[AnnotatedReport]] = {}
    for document in brat_documents(folder, quiet=quiet):
        relative = document.id.split("/")
        if len(relative) != 2 or not relative[0].isdigit() or not relative[1].isdigit():
            raise SourceError(
                next(iter(document.files.values())),
                "expected an annotation file at <SUBJECT_ID>/<ROW_ID>.ann (integers)",
            )
        subject_id = int(relative[0])
        patients.setdefault(subject_id, []).append(AnnotatedReport(subject_id, int(relative[1]), document))
    for entry in folder.iterdir():
        if entry.is_dir() and entry.name.isdigit() and not any(entry.iterdir()):
            patients.setdefault(int(entry.name), [])
    return dict(sorted(patients.items()))


def read_mentions(report: AnnotatedReport, text: str) -> list[AnnotatedMention]:
    """The Finding/Device mentions of an ``.ann`` file, each with its chain id, checked against ``text``."""
    content = read_utf8(report.ann)
    document = parse_brat(content, text, report.ann)
    line_of = {line.partition("\t")[0]: number for number, line in enumerate(content.split("\n"), start=1)}
    chains: dict[str, str] = {}
    for note in document.notes:
        match = _CHAIN_NOTE.fullmatch(note.text.strip())
        if note.type != "AnnotatorNotes" or match is None:
            raise SourceError(
                report.ann,
                f"expected an AnnotatorNotes line '#<n>\\tAnnotatorNotes T<n>\\tchain=<id>', "
                f"got {note.type} {note.target} {excerpt(note.text)}",
                line=line_of[note.id],
            )
        if note.target in chains:
            raise SourceError(
                report.ann,
                f"{note.target} has a second chain id ({match[1]}, first {chains[note.target]})",
                line=line_of[note.id],
            )
        chains[note.target] = match[1]
    for kind, found in (
        ("event", document.events),
        ("relation", document.relations),
        ("attribute", document.attributes),
        ("equivalence", document.equivalences),
        ("normalisation", document.normalizations),
    ):
        if found:
            raise SourceError(
                report.ann,
                f"unexpected {kind} annotations: expected only Finding/Device text-bounds and their chain notes",
            )
    mentions = []
    for textbound in document.textbounds:
        line = line_of[textbound.id]
        mention_type = next((name for name in MENTION_TYPES if name == textbound.type), None)
        if mention_type is None:
            raise SourceError(
                report.ann, f"{textbound.id} has type {textbound.type}; expected Finding or Device", line=line
            )
        if len(textbound.fragments) != 1:
            raise SourceError(report.ann, f"{textbound.id} is discontinuous; expected one contiguous span", line=line)
        if textbound.start == textbound.end:
            raise SourceError(report.ann, f"{textbound.id} is empty; expected a mention's text", line=line)
        if textbound.id not in chains:
            raise SourceError(
                report.ann,
                f"{textbound.id} has no chain id: expected a line '#<n>\\tAnnotatorNotes {textbound.id}\\tchain=<id>'",
                line=line,
            )
        mentions.append(
            AnnotatedMention(
                textbound.id, mention_type, textbound.start, textbound.end, textbound.text, chains[textbound.id], line
            )
        )
    return mentions


class ChainRegistry:
    """Chain ids seen in one annotation folder: each must belong to one patient only."""

    def __init__(self) -> None:
        self.first_use: dict[str, tuple[int, Path, int]] = {}

    def claim(self, subject_id: int, report: AnnotatedReport, mention: AnnotatedMention) -> None:
        owner = self.first_use.setdefault(mention.chain, (subject_id, report.ann, mention.line))
        if owner[0] != subject_id:
            raise SourceError(
                report.ann,
                f"chain id {mention.chain} is already used by patient {owner[0]} "
                f"({owner[1]}:{owner[2]}); a chain links mentions of one patient only",
                line=mention.line,
            )


@dataclass(frozen=True)
class PatientBlock:
    """Consecutive gold patients built together (one chain registry), with the NOTEEVENTS rows their
    reports name."""

    patients: list[tuple[int, list[AnnotatedReport]]]
    notes: dict[int, NoteEvent]


def chain_ids_named(reports: Iterable[AnnotatedReport]) -> set[str]:
    """Every ``chain=<id>`` written in the reports' ``.ann`` files: a superset of the chain ids building
    the patient can claim (no file is checked here; an unreadable one names none)."""
    named: set[str] = set()
    for report in reports:
        path = report.document.get(ANN_SUFFIX)
        if path is not None:
            with contextlib.suppress(OSError):
                named.update(_CHAIN_NOTE.findall(path.read_bytes().decode("utf-8", errors="replace")))
    return named


def patient_blocks(gold: dict[int, list[AnnotatedReport]], notes: dict[int, NoteEvent]) -> list[PatientBlock]:
    """The gold patients in order, cut into the shortest runs that keep together every patient naming a
    chain id another names (so that each :class:`ChainRegistry` check sees, in the same order, the claims
    one registry over every patient would): usually one patient per block."""
    patients = list(gold.items())
    named = [chain_ids_named(reports) for _, reports in patients]
    last_naming = {chain: index for index, chains in enumerate(named) for chain in chains}
    blocks, start, reach = [], 0, 0
    for index, chains in enumerate(named):
        reach = max(reach, index, *(last_naming[chain] for chain in chains))
        if reach == index:
            members = patients[start : index + 1]
            row_ids = {report.row_id for _, reports in members for report in reports}
            blocks.append(PatientBlock(members, {row_id: notes[row_id] for row_id in sorted(row_ids & notes.keys())}))
            start = index + 1
    return blocks


def checked_note(report: AnnotatedReport, notes: dict[int, NoteEvent], noteevents: Path) -> NoteEvent:
    """The NOTEEVENTS row of an annotated report, checked to be this patient's radiology report."""
    note = notes.get(report.row_id)
    if note is None:
        raise SourceError(report.ann, f"ROW_ID {report.row_id} is not in NOTEEVENTS ({noteevents.name})")
    if note.subject_id != report.subject_id:
        raise SourceError(
            report.ann,
            f"ROW_ID {report.row_id} belongs to SUBJECT_ID {note.subject_id} in "
            f"NOTEEVENTS (line {note.line}), not to the folder's {report.subject_id}",
        )
    if note.category.strip() != RADIOLOGY:
        raise SourceError(
            report.ann,
            f"ROW_ID {report.row_id} has CATEGORY {note.category!r} in NOTEEVENTS "
            f"(line {note.line}); expected {RADIOLOGY}",
        )
    if note.iserror:
        raise SourceError(report.ann, f"ROW_ID {report.row_id} is marked ISERROR in NOTEEVENTS (line {note.line})")
    if note.charttime is None:
        raise SourceError(
            report.ann,
            f"ROW_ID {report.row_id} has no CHARTTIME in NOTEEVENTS (line {note.line}); "
            "expected one to order the patient's reports",
        )
    text_file = report.text
    if text_file is not None:
        stored = read_utf8(text_file)
        if stored != note.text:
            at = next(
                (i for i, (a, b) in enumerate(zip(stored, note.text, strict=False)) if a != b),
                min(len(stored), len(note.text)),
            )
            raise SourceError(
                text_file,
                f"differs from the TEXT of ROW_ID {report.row_id} in NOTEEVENTS (line {note.line}) from character {at}",
                line=stored.count("\n", 0, at) + 1,
            )
    return note


def build_patient(
    subject_id: int,
    reports: list[AnnotatedReport],
    notes: dict[int, NoteEvent],
    noteevents: Path,
    registry: ChainRegistry,
) -> Patient:
    """A patient record: reports in CHARTTIME order, mentions in report then offset order, chains. A report
    without its ``.ann`` is a SourceError naming its ``.txt``."""
    for report in reports:
        report.ann  # noqa: B018 - raises naming the .txt of a report without annotations
    checked = sorted(
        ((checked_note(report, notes, noteevents), report) for report in reports),
        key=lambda pair: (pair[0].charttime, pair[0].row_id),
    )
    mentions: list[Mention] = []
    chain_members: dict[str, list[str]] = {}
    for index, (note, report) in enumerate(checked):
        for mention in sorted(read_mentions(report, note.text), key=lambda m: (m.start, m.end, m.line)):
            registry.claim(subject_id, report, mention)
            mention_id = f"{note.row_id}-{mention.textbound}"
            mentions.append(
                Mention(
                    id=mention_id,
                    report_index=index,
                    start=mention.start,
                    end=mention.end,
                    text=mention.text,
                    type=mention.type,
                )
            )
            chain_members.setdefault(mention.chain, []).append(mention_id)
    return Patient(
        patient_id=str(subject_id),
        reports=[
            Report(
                row_id=note.row_id,
                charttime=note.charttime.isoformat(sep=" "),  # type: ignore[union-attr]
                description=note.description,
                modality=modality_of(note.description),
                text=note.text,
            )
            for note, _ in checked
        ],
        mentions=mentions,
        chains=[Chain(id=chain_id, mention_ids=members) for chain_id, members in chain_members.items()],
    )


def _context(sentences: list[Sentence], starts: list[int], start: int, end: int) -> tuple[int, int]:
    """The span of the sentences a mention overlaps (widened to the mention itself)."""
    first = max(bisect_right(starts, start) - 1, 0)
    last = max(bisect_right(starts, max(end - 1, start)) - 1, first)
    if not sentences:
        return start, end
    return min(sentences[first].start, start), max(sentences[last].end, end)


def mention_pairs(patient: Patient) -> Iterator[MentionPair]:
    """Every unordered pair of the patient's mentions, in mention order, labelled coreferent or not."""
    chain_of = {mention_id: chain.id for chain in patient.chains for mention_id in chain.mention_ids}
    segmented = [split_sentences(report.text) for report in patient.reports]
    sides = []
    for mention in patient.mentions:
        report, sentences = patient.reports[mention.report_index], segmented[mention.report_index]
        begin, finish = _context(sentences, [s.start for s in sentences], mention.start, mention.end)
        sides.append(
            PairMention(
                id=mention.id,
                report_index=mention.report_index,
                row_id=report.row_id,
                charttime=report.charttime,
                modality=report.modality,
                type=mention.type,
                start=mention.start,
                end=mention.end,
                text=mention.text,
                sentence=report.text[begin:finish],
                sentence_start=begin,
            )
        )
    for first, second in itertools.combinations(sides, 2):
        yield MentionPair(
            id=f"{first.id}|{second.id}",
            patient_id=patient.patient_id,
            first=first,
            second=second,
            same_report=first.report_index == second.report_index,
            coreferent=chain_of[first.id] == chain_of[second.id],
        )


class RadCorefBuilder(Builder):
    """Patients of the radiology cross-report coreference corpus, and their mention pairs."""

    VERSION = "1.1.0"
    CONFIGS = {CONFIG: Patient, PAIRS_CONFIG: MentionPair, bigbio.CONFIG: bigbio.KbDocument}
    DOCUMENTS = {"annotations": f"one BRAT file per report, {GOLD_FOLDER}/<SUBJECT_ID>/<ROW_ID>.ann"}

    def count(self, ctx: BuildContext) -> int:
        """Patients, the records read (a listing of the gold folder)."""
        return len(list_annotation_folder(ctx.source("annotations") / GOLD_FOLDER, quiet=True))

    def source_documents(self, ctx: BuildContext, config: str, row: Mapping[str, Any]) -> list[str]:
        """Each report's NOTEEVENTS TEXT (``noteevents:<ROW_ID>``) and the DESCRIPTION and CHARTTIME it
        shows (``noteevents:<ROW_ID>/DESCRIPTION``, ``/CHARTTIME``)."""
        if config == bigbio.CONFIG:  # passages are "<patient>_report_<ROW_ID>", texts only
            return [locator(NOTEEVENTS, passage["id"].rpartition("_report_")[2]) for passage in row["passages"]]
        if config not in (CONFIG, PAIRS_CONFIG):
            return super().source_documents(ctx, config, row)
        columns: tuple[str, ...] = ("", "/DESCRIPTION", "/CHARTTIME")
        row_ids = [report["row_id"] for report in row["reports"]] if config == CONFIG else []
        if config == PAIRS_CONFIG:
            row_ids, columns = (
                list(dict.fromkeys((row["first"]["row_id"], row["second"]["row_id"]))),
                ("", "/CHARTTIME"),
            )
        return [locator(NOTEEVENTS, f"{row_id}{column}") for row_id in row_ids for column in columns]

    def read_documents(self, ctx: BuildContext, locators: Collection[str]) -> Iterator[tuple[str, str]]:
        """One pass over NOTEEVENTS keeping the wanted ROW_IDs (reading stops once all were seen)."""
        row_ids = {
            int(key.partition("/")[0]) for key in keys_of(NOTEEVENTS, locators) if key.partition("/")[0].isdigit()
        }
        if not row_ids:
            return
        for note in iter_noteevents(ctx.source(NOTEEVENTS), row_ids):
            yield locator(NOTEEVENTS, str(note.row_id)), note.text
            yield locator(NOTEEVENTS, f"{note.row_id}/DESCRIPTION"), note.description
            if note.charttime is not None:
                yield locator(NOTEEVENTS, f"{note.row_id}/CHARTTIME"), note.charttime.isoformat(sep=" ")

    def shards(self, ctx: BuildContext) -> dict[str, Any]:
        """The gold patients in blocks (:func:`patient_blocks`), each with its NOTEEVENTS rows, read in the
        one pass over NOTEEVENTS that keeps the annotated ROW_IDs."""
        gold = list_annotation_folder(ctx.source("annotations") / GOLD_FOLDER)
        wanted = {report.row_id for reports in gold.values() for report in reports}
        notes = {note.row_id: note for note in iter_noteevents(ctx.source(NOTEEVENTS), row_ids=wanted)}
        return {"blocks": patient_blocks(gold, notes)}

    def generate_shard(self, ctx: BuildContext, blocks: Iterable[PatientBlock] = ()) -> Iterator[Row]:
        """Per patient: its record, its mention pairs and its BigBio document; a patient that fails a check
        fails the build or is quarantined whole."""
        noteevents, gold = ctx.source(NOTEEVENTS), ctx.source("annotations") / GOLD_FOLDER
        for block in blocks:
            registry = ChainRegistry()
            for subject_id, reports in block.patients:
                rows: list[Row] = []
                folder = gold / str(subject_id)
                with ctx.record(f"{folder} [patient {subject_id}]"):
                    if not reports:
                        raise SourceError(folder, "holds no <ROW_ID>.ann: expected the patient's annotated reports")
                    patient = build_patient(subject_id, reports, block.notes, noteevents, registry)
                    rows = [
                        Row(CONFIG, "train", patient),
                        *(Row(PAIRS_CONFIG, "train", pair) for pair in mention_pairs(patient)),
                        Row(bigbio.CONFIG, "train", bigbio.kb_document(patient)),
                    ]
                yield from rows

    def agreement(self, ctx: BuildContext, release: ReleaseView) -> AgreementReport | None:
        folders = annotator_folders(ctx.source("annotations"), ANN_SUFFIX, exclude={GOLD_FOLDER})
        if len(folders) < 2:
            return None
        released = [row for _, row in release.rows(CONFIG)]
        texts = {report["row_id"]: report["text"] for row in released for report in row["reports"]}
        gold = list_annotation_folder(ctx.source("annotations") / GOLD_FOLDER, quiet=True)
        quarantined = set(gold) - {int(row["patient_id"]) for row in released}
        annotated = {name: read_annotator(folder, texts, quarantined) for name, folder in folders.items()}
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

    def statistics(self, release: ReleaseView) -> list[CardSection]:
        patients = [row for _, row in release.rows(CONFIG)]
        return [
            corpus_statistics(patients),
            top_mentions(patients),
            chain_coverage(patients),
            modality_combinations(patients),
            time_gaps(patients),
            string_match_baseline(patients),
        ]

    def quality_tables(self, release: ReleaseView) -> dict[str, pd.DataFrame]:
        """``mention_pairs.per_patient``: pairs and coreferent pairs written vs. implied by the chains."""
        written: Counter[tuple[str, bool]] = Counter()
        for batch in release.batches(PAIRS_CONFIG, columns=["patient_id", "coreferent"]):
            written.update(zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True))
        rows = []
        for _, patient in release.rows(CONFIG):
            pid, n = patient["patient_id"], len(patient["mentions"])
            rows.append(
                {
                    "patient_id": pid,
                    "expected_pairs": n * (n - 1) // 2,
                    "pairs": written[(pid, True)] + written[(pid, False)],
                    "expected_coreferent_pairs": sum(math.comb(len(c["mention_ids"]), 2) for c in patient["chains"]),
                    "coreferent_pairs": written[(pid, True)],
                }
            )
        columns = ["patient_id", "expected_pairs", "pairs", "expected_coreferent_pairs", "coreferent_pairs"]
        return {f"{PAIRS_CONFIG}.per_patient": pd.DataFrame(rows, columns=columns)}  # columns even with no patient


# ---- agreement (Datta et al. 2022, §4.4) ---------------------------------------------------------------

Span = tuple[int, int, int]
"""(ROW_ID, start, end) of a mention: how annotators' mentions are matched (exact span)."""


def read_annotator(
    folder: Path, texts: dict[int, str], left_out: Collection[int] = ()
) -> dict[str, dict[int, list[AnnotatedMention]]]:
    """patient id → ROW_ID → mentions of one annotator, checked against the released report texts; the
    patients ``left_out`` (their gold quarantined) are not read."""
    registry = ChainRegistry()
    patients: dict[str, dict[int, list[AnnotatedMention]]] = {}
    for subject_id, reports in list_annotation_folder(folder).items():
        if subject_id in left_out:
            continue
        for report in reports:
            if report.row_id not in texts:
                raise SourceError(
                    report.ann,
                    f"ROW_ID {report.row_id} is not a released (gold) report; "
                    "agreement is measured on the gold reports only",
                )
            mentions = read_mentions(report, texts[report.row_id])
            for mention in mentions:
                registry.claim(subject_id, report, mention)
            patients.setdefault(str(subject_id), {})[report.row_id] = mentions
    return patients


def _chains_on(mentions: dict[int, list[AnnotatedMention]], rows: Iterable[int], kept: set[Span]) -> list[list[Span]]:
    chains: dict[str, list[Span]] = {}
    for row_id in rows:
        for mention in mentions[row_id]:
            span = (row_id, mention.start, mention.end)
            if span in kept:
                chains.setdefault(mention.chain, []).append(span)
    return list(chains.values())


def annotator_agreement(annotated: dict[str, dict[str, dict[int, list[AnnotatedMention]]]]) -> AgreementReport:
    """Exact-span mention F1, and MUC and CoNLL F1 on the mentions both annotators marked.

    Every pair of annotators is compared on the reports both annotated; span counts and metric
    counts are summed over reports and patients (documents) before the ratios are taken.
    """
    rows: list[list[object]] = []
    total = NO_COUNTS
    key_docs: dict[str, list[list[Span]]] = {}
    response_docs: dict[str, list[list[Span]]] = {}
    for first, second in itertools.combinations(sorted(annotated), 2):
        pair_key: dict[str, list[list[Span]]] = {}
        pair_response: dict[str, list[list[Span]]] = {}
        spans, reports = NO_COUNTS, 0
        for patient in sorted(set(annotated[first]) & set(annotated[second])):
            a, b = annotated[first][patient], annotated[second][patient]
            shared_rows = sorted(set(a) & set(b))
            spans_a = {(row, m.start, m.end) for row in shared_rows for m in a[row]}
            spans_b = {(row, m.start, m.end) for row in shared_rows for m in b[row]}
            both = spans_a & spans_b
            spans, reports = spans + PRFCounts(len(both), len(spans_b), len(spans_a)), reports + len(shared_rows)
            document = f"{patient} {first}|{second}"
            pair_key[document] = _chains_on(a, shared_rows, both)
            pair_response[document] = _chains_on(b, shared_rows, both)
        scores = score_documents_all(pair_key, pair_response, ("muc", "b_cubed", "ceaf_e"))
        rows.append(
            [
                f"{first} vs {second}",
                len(pair_key),
                reports,
                spans.predicted + spans.gold,
                spans.tp,
                spans.dice,
                scores["muc"].f1,
                sum(score.f1 for score in scores.values()) / 3,
            ]
        )
        total += spans
        key_docs.update(pair_key)
        response_docs.update(pair_response)
    overall = score_documents_all(key_docs, response_docs, ("muc", "b_cubed", "ceaf_e"))
    measures = {
        "span_f1": total.dice,
        "muc_f1": overall["muc"].f1,
        "conll_f1": sum(score.f1 for score in overall.values()) / 3,
    }
    table = Table(
        [
            "annotators",
            "patients",
            "reports",
            "mentions marked (sum)",
            "exact span matches",
            "span F1",
            "MUC F1",
            "CoNLL F1",
        ],
        rows,
    )
    text = (
        "Datta et al. 2022, §4.4. Mention span F1 with exact span match (2 × matches / mentions marked by the two), "
        "then MUC and CoNLL F1 (mean of MUC, B³, CEAF-e) between the annotators' chains restricted to "
        "the mentions both marked, one document per patient, counts summed over patients. "
        f"Overall: span F1 {measures['span_f1']:.4f}, MUC F1 {measures['muc_f1']:.4f}, "
        f"CoNLL F1 {measures['conll_f1']:.4f}."
    )
    return AgreementReport(measures, [CardSection("Inter-annotator agreement", text, table)])


# ---- card statistics (Datta et al. 2022, Tables 3-4, Figures 2-4, §5.1) --------------------------------


def _chain_types(patient: dict[str, Any]) -> dict[str, str]:
    """Chain id → type of its first mention."""
    type_of = {mention["id"]: mention["type"] for mention in patient["mentions"]}
    return {chain["id"]: type_of[chain["mention_ids"][0]] for chain in patient["chains"]}


def _mean(values: list[int] | list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def corpus_statistics(patients: list[dict[str, Any]]) -> CardSection:
    """Datta et al. 2022, Table 3."""
    reports_per_patient = [len(p["reports"]) for p in patients]
    tokens_per_report = [len(tokenize(r["text"])) for p in patients for r in p["reports"]]
    chains_per_patient = [len(p["chains"]) for p in patients]
    lengths = [len(c["mention_ids"]) for p in patients for c in p["chains"]]
    mentions = [m for p in patients for m in p["mentions"]]
    types = Counter(m["type"] for m in mentions)
    rows: list[list[object]] = [
        ["Patients", len(patients)],
        ["Total reports", sum(reports_per_patient)],
        ["Avg no. of reports per patient", _mean(reports_per_patient)],
        ["Max no. of reports per patient", max(reports_per_patient, default=0)],
        ["Avg no. of tokens per report", _mean(tokens_per_report)],
        ["Max no. of tokens per report", max(tokens_per_report, default=0)],
        ["Min no. of mention chains per patient", min(chains_per_patient, default=0)],
        ["Max no. of mention chains per patient", max(chains_per_patient, default=0)],
        ["Total mention chains", len(lengths)],
        ["Total singleton mention chains", sum(1 for n in lengths if n == 1)],
        ["Longest chain length", max(lengths, default=0)],
        ["Avg chain length (excluding singletons)", _mean([n for n in lengths if n > 1])],
        ["Avg no. of tokens per mention", _mean([len(tokenize(m["text"])) for m in mentions])],
        ["Total mentions", len(mentions)],
        *[[f"Total entities ({kind})", types[kind]] for kind in MENTION_TYPES],
    ]
    return CardSection(
        "Corpus statistics",
        "As Datta et al. 2022, Table 3; tokens are `clinical_corpora.builders.text_units.tokenize` "
        "tokens (the paper used NLTK).",
        Table(["item", "count"], rows),
    )


def top_mentions(patients: list[dict[str, Any]], top: int = 5) -> CardSection:
    """Datta et al. 2022, Table 4: the most frequent lower-cased mention strings of each type."""
    counts: dict[str, Counter[str]] = {kind: Counter() for kind in MENTION_TYPES}
    for patient in patients:
        for mention in patient["mentions"]:
            counts[mention["type"]][mention["text"].lower()] += 1
    ranked = [sorted(counts[kind].items(), key=lambda item: (-item[1], item[0]))[:top] for kind in MENTION_TYPES]
    rows: list[list[object]] = []
    for rank in range(max(map(len, ranked))):
        rows.append([cell for column in ranked for cell in (column[rank] if rank < len(column) else ("", ""))])
    return CardSection(
        "Most frequent mentions",
        f"Top {top} lower-cased mention strings by type (Datta et al. 2022, Table 4).",
        Table(["Finding", "count", "Device", "count"], rows),
    )


def chain_coverage(patients: list[dict[str, Any]]) -> CardSection:
    """Datta et al. 2022, Figure 2: chains by the number of reports they cover and their length."""
    counts: Counter[tuple[int, int]] = Counter()
    for patient in patients:
        report_of = {m["id"]: m["report_index"] for m in patient["mentions"]}
        for chain in patient["chains"]:
            counts[(len({report_of[m] for m in chain["mention_ids"]}), len(chain["mention_ids"]))] += 1
    rows = [[reports, length, n] for (reports, length), n in sorted(counts.items())]
    return CardSection(
        "Chains by reports covered",
        "Number of chains by the number of distinct reports their "
        "mentions are in, and by chain length (Datta et al. 2022, Figure 2).",
        Table(["reports covered", "chain length", "chains"], rows),
    )


def modality_combinations(patients: list[dict[str, Any]]) -> CardSection:
    """Datta et al. 2022, Figure 4: the set of imaging modalities of each chain's reports."""
    order = {name: rank for rank, name in enumerate(("XR", "CT", "CTA", "MR", "US", "OTHER"))}
    counts: Counter[tuple[str, ...]] = Counter()
    for patient in patients:
        modality_of_mention = {m["id"]: patient["reports"][m["report_index"]]["modality"] for m in patient["mentions"]}
        for chain in patient["chains"]:
            counts[tuple(sorted({modality_of_mention[m] for m in chain["mention_ids"]}, key=order.__getitem__))] += 1
    rows = [
        [", ".join(combo), len(combo), n] for combo, n in sorted(counts.items(), key=lambda i: (-i[1], len(i[0]), i[0]))
    ]
    return CardSection(
        "Modality combinations within chains",
        "Chains by the set of modalities of the reports their mentions are in (Datta et al. 2022, Figure 4).",
        Table(["modalities", "modalities in set", "chains"], rows),
    )


def time_gaps(patients: list[dict[str, Any]]) -> CardSection:
    """Datta et al. 2022, Figure 3: time between consecutive reports of a chain, in two-week bins, by chain type."""
    bins: Counter[tuple[int, str]] = Counter()
    longest = 0.0
    for patient in patients:
        times = [datetime.fromisoformat(r["charttime"]) for r in patient["reports"]]
        report_of = {m["id"]: m["report_index"] for m in patient["mentions"]}
        types = _chain_types(patient)
        for chain in patient["chains"]:
            covered = sorted({report_of[m] for m in chain["mention_ids"]}, key=lambda i: (times[i], i))
            for earlier, later in itertools.pairwise(covered):
                days = (times[later] - times[earlier]).total_seconds() / 86400
                longest = max(longest, days)
                bins[(int(days // TWO_WEEKS_DAYS), types[chain["id"]])] += 1
    rows = [
        [f"{TWO_WEEKS_DAYS * b}-{TWO_WEEKS_DAYS * (b + 1)} days", *(bins[(b, kind)] for kind in MENTION_TYPES)]
        for b in sorted({b for b, _ in bins})
    ]
    return CardSection(
        "Time between coreferent mentions",
        "Pairs of consecutive reports (by CHARTTIME) within a chain, by the time between them in "
        f"two-week bins and by chain type (Datta et al. 2022, Figure 3). Longest gap: {longest:.1f} days.",
        Table(["gap", *MENTION_TYPES], rows),
    )


def string_match_baseline(patients: list[dict[str, Any]]) -> CardSection:
    """Datta et al. 2022, §5.1 and Table 7: lower-cased string match against the gold chains (gold mentions)."""
    key = {p["patient_id"]: [c["mention_ids"] for c in p["chains"]] for p in patients}
    response = {p["patient_id"]: string_match_chains((m["id"], m["text"]) for m in p["mentions"]) for p in patients}
    scores = score_documents_all(key, response, ("muc", "b_cubed", "ceaf_e", "blanc"))
    names = {"muc": "MUC", "b_cubed": "B³", "ceaf_e": "CEAF-e", "blanc": "BLANC"}
    rows: list[list[object]] = [[names[name], s.recall, s.precision, s.f1] for name, s in scores.items()]
    conll = sum(scores[name].f1 for name in ("muc", "b_cubed", "ceaf_e")) / 3
    rows.insert(3, ["CoNLL", "", "", conll])
    return CardSection(
        "String-match baseline",
        "Mentions with equal lower-cased strings are coreferent "
        "(transitive closure), on gold mentions, one document per patient, counts summed "
        "over patients (Datta et al. 2022, §5.1, Table 7; `builders/string_match.py`).",
        Table(["metric", "recall", "precision", "F1"], rows),
    )
