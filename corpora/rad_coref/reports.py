"""Reading ``rad_coref``'s annotation folders: each report's Finding/Device mentions and their chains.

An ``annotations`` folder holds ``gold/`` and one folder per annotator, each laid out as
``<SUBJECT_ID>/<ROW_ID>.ann`` (optionally with the ``.txt``, checked against NOTEEVENTS). Text-bound
types are ``Finding`` and ``Device``; each mention's chain is an AnnotatorNotes line
``#1<TAB>AnnotatorNotes T3<TAB>chain=E12`` (format: ``corpora/rad_coref/README.md``). A chain id belongs
to one patient only (:class:`ChainRegistry`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from clinical_corpora.builders.sources.brat.folder import ANN_SUFFIX, TEXT_SUFFIX, brat_documents
from clinical_corpora.builders.sources.brat.standoff import parse_brat
from clinical_corpora.builders.sources.discovery import Document
from clinical_corpora.builders.sources.mimic.notes import NoteEvent
from clinical_corpora.builders.sources.text_lines import read_utf8
from clinical_corpora.core.errors import SourceError, excerpt
from clinical_corpora.core.file_limits import MAX_FILE_BYTES, read_bounded
from clinical_corpora.corpora.rad_coref.records import MENTION_TYPES, MentionType

GOLD_FOLDER = "gold"
RADIOLOGY = "Radiology"
_CHAIN_NOTE = re.compile(r"chain=(\S+)")


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


def read_mentions(report: AnnotatedReport, text: str, max_bytes: int = MAX_FILE_BYTES) -> list[AnnotatedMention]:
    """The Finding/Device mentions of an ``.ann`` file, each with its chain id, checked against ``text``; a file
    over ``max_bytes`` is a SourceError naming it."""
    content = read_utf8(report.ann, max_bytes)
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


def chain_ids_named(reports: Iterable[AnnotatedReport], max_bytes: int = MAX_FILE_BYTES) -> set[str]:
    """Every ``chain=<id>`` written in the reports' ``.ann`` files: a superset of the chain ids building
    the patient can claim (no file is checked here; an unreadable one, or one over ``max_bytes``, names none:
    building the patient names it)."""
    named: set[str] = set()
    for report in reports:
        path = report.document.get(ANN_SUFFIX)
        if path is not None:
            with contextlib.suppress(SourceError):
                named.update(_CHAIN_NOTE.findall(read_bounded(path, max_bytes).decode("utf-8", errors="replace")))
    return named


def checked_note(
    report: AnnotatedReport, notes: dict[int, NoteEvent], noteevents: Path, max_bytes: int = MAX_FILE_BYTES
) -> NoteEvent:
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
        stored = read_utf8(text_file, max_bytes)
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


def read_annotator(
    folder: Path, texts: dict[int, str], left_out: Collection[int] = (), max_bytes: int = MAX_FILE_BYTES
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
            mentions = read_mentions(report, texts[report.row_id], max_bytes)
            for mention in mentions:
                registry.claim(subject_id, report, mention)
            patients.setdefault(str(subject_id), {})[report.row_id] = mentions
    return patients
