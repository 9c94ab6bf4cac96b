"""``rad_coref``: findings and devices tracked across a patient's radiology reports (Datta et al. 2022).

Sources: MIMIC-III ``NOTEEVENTS`` (streamed; only the annotated ROW_IDs are kept) and an
``annotations`` folder holding ``gold/`` and one folder per annotator (read by
:mod:`clinical_corpora.corpora.rad_coref.reports`). Agreement: :mod:`~clinical_corpora.corpora.rad_coref.agreement`;
card statistics: :mod:`~clinical_corpora.corpora.rad_coref.statistics`.

Configs: ``rad_coref`` (one row per patient) and ``mention_pairs`` (every within-patient mention
pair with its sentences and a coreferent label, Datta et al. 2022, §5.2).
"""

from __future__ import annotations

import itertools
import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from clinical_corpora.builders.contract.base import AgreementReport, BuildContext, Builder, Row
from clinical_corpora.builders.contract.display import DocumentDisplay, RowReader
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.contract.text_units import Sentence, split_sentences
from clinical_corpora.builders.sources.mimic.notes import NoteEvent, iter_noteevents
from clinical_corpora.core.card import CardSection
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.file_limits import MAX_FILE_BYTES
from clinical_corpora.core.locators import keys_of, locator
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.corpora.rad_coref import bigbio
from clinical_corpora.corpora.rad_coref.agreement import release_agreement
from clinical_corpora.corpora.rad_coref.baselines import card_scores
from clinical_corpora.corpora.rad_coref.display import annotator_displays, rad_coref_displays
from clinical_corpora.corpora.rad_coref.predictions import prediction_displays
from clinical_corpora.corpora.rad_coref.records import (
    Chain,
    Mention,
    MentionPair,
    Modality,
    PairMention,
    Patient,
    Report,
)
from clinical_corpora.corpora.rad_coref.reports import (
    GOLD_FOLDER,
    AnnotatedReport,
    ChainRegistry,
    chain_ids_named,
    checked_note,
    list_annotation_folder,
    read_mentions,
)
from clinical_corpora.corpora.rad_coref.statistics import statistics_sections

CONFIG = "rad_coref"
PAIRS_CONFIG = "mention_pairs"
NOTEEVENTS = "noteevents"

_MODALITY_RULES: tuple[tuple[Modality, re.Pattern[str]], ...] = (
    ("CTA", re.compile(r"\bCTA\b")),
    ("CT", re.compile(r"\bCT\b")),
    ("MR", re.compile(r"\bMR[AIV]?\b")),
    ("US", re.compile(r"\bUS\b|\bU\.S\.|ULTRASOUND|DUPLEX|DOPPLER|\bEXT VEINS\b")),
    ("XR", re.compile(r"\b(?:AP|PA|LAT|LATERAL|VIEWS?|SUPINE|ERECT|DECUB\w*|PORT\.?|PORTABLE|X-?RAY|XR|KUB)\b")),
)


def modality_of(description: str) -> Modality:
    """The imaging modality a NOTEEVENTS DESCRIPTION names (first matching rule, else OTHER)."""
    upper = description.upper()
    return next((modality for modality, rule in _MODALITY_RULES if rule.search(upper)), "OTHER")


@dataclass(frozen=True)
class PatientBlock:
    """Consecutive gold patients built together (one chain registry), with the NOTEEVENTS rows their
    reports name."""

    patients: list[tuple[int, list[AnnotatedReport]]]
    notes: dict[int, NoteEvent]


def patient_blocks(
    gold: dict[int, list[AnnotatedReport]], notes: dict[int, NoteEvent], max_bytes: int = MAX_FILE_BYTES
) -> list[PatientBlock]:
    """The gold patients in order, cut into the shortest runs that keep together every patient naming a
    chain id another names (so that each :class:`ChainRegistry` check sees, in the same order, the claims
    one registry over every patient would): usually one patient per block."""
    patients = list(gold.items())
    named = [chain_ids_named(reports, max_bytes) for _, reports in patients]
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


def build_patient(
    subject_id: int,
    reports: list[AnnotatedReport],
    notes: dict[int, NoteEvent],
    noteevents: Path,
    registry: ChainRegistry,
    max_bytes: int = MAX_FILE_BYTES,
) -> Patient:
    """A patient record: reports in CHARTTIME order, mentions in report then offset order, chains. A report
    without its ``.ann`` is a SourceError naming its ``.txt``."""
    for report in reports:
        report.ann  # noqa: B018 - raises naming the .txt of a report without annotations
    checked = sorted(
        ((checked_note(report, notes, noteevents, max_bytes), report) for report in reports),
        key=lambda pair: (pair[0].charttime, pair[0].row_id),
    )
    mentions: list[Mention] = []
    chain_members: dict[str, list[str]] = {}
    for index, (note, report) in enumerate(checked):
        for mention in sorted(read_mentions(report, note.text, max_bytes), key=lambda m: (m.start, m.end, m.line)):
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

    CONFIGS = {CONFIG: Patient, PAIRS_CONFIG: MentionPair, bigbio.CONFIG: bigbio.KbDocument}
    RECORD_CONFIG = CONFIG
    DOCUMENTS = {"annotations": f"one BRAT file per report, {GOLD_FOLDER}/<SUBJECT_ID>/<ROW_ID>.ann"}

    def displays(self, rows: RowReader) -> Iterator[DocumentDisplay]:
        return rad_coref_displays(rows)

    def annotator_displays(self, ctx: BuildContext, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
        return annotator_displays(ctx, rows)

    def prediction_displays(self, predictions: Path, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
        return prediction_displays(predictions, rows)

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
        for note in iter_noteevents(ctx.source(NOTEEVENTS), row_ids, encoding=ctx.encoding(NOTEEVENTS)):
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
        return {"blocks": patient_blocks(gold, notes, self.options.max_file_bytes)}

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
                    patient = build_patient(
                        subject_id, reports, block.notes, noteevents, registry, self.options.max_file_bytes
                    )
                    rows = [
                        Row(CONFIG, "train", patient),
                        *(Row(PAIRS_CONFIG, "train", pair) for pair in mention_pairs(patient)),
                        Row(bigbio.CONFIG, "train", bigbio.kb_document(patient)),
                    ]
                yield from rows

    def agreement(self, ctx: BuildContext, release: ReleaseView) -> AgreementReport | None:
        return release_agreement(ctx.source("annotations"), CONFIG, release, self.options.max_file_bytes)

    def statistics(self, release: ReleaseView) -> list[CardSection]:
        return statistics_sections([row for _, row in release.rows(CONFIG)])

    def baselines(self, release: ReleaseView) -> list[BaselineScore]:
        return card_scores(release)

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
