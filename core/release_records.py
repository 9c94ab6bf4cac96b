"""The JSON files a release holds beside its manifest, typed: ``validation.json`` (its gates, the expectation
suite it was checked with, its agreement measures and the card sections only its build could measure) and the
JSON Lines files (``rejects.jsonl``, ``reader-changes.jsonl``, ``rehydrate-rejects.jsonl``, ``re-anchored.jsonl``).

Like the manifest (``core/release_manifest.py``) each is untrusted once the release travels: every key is
declared, and every free string is bounded, so no file can carry more than what it declares.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Final, Literal, Self, TypeVar

from pydantic import AfterValidator, BaseModel, Field, JsonValue, model_validator

from clinical_corpora.core.card import BarChart, CardSection
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CORPUS_NAME, RELEASE_VERSION, Expectation
from clinical_corpora.core.reader_changes import ReaderChange
from clinical_corpora.core.release_manifest import (
    MAX_TEXT,
    GateName,
    Name,
    Observed,
    ReleaseManifest,
    Status,
    Strict,
    read_typed,
    read_typed_file,
    reader_changes_summary,
)
from clinical_corpora.core.results import BaselineScore

VALIDATION_FILE = "validation.json"
REJECTS_FILE = "rejects.jsonl"
READER_CHANGES_FILE = "reader-changes.jsonl"
"""Every line a reader read otherwise than written (``core/reader_changes.py``), one line each."""
INPUTS_FILE = "inputs.jsonl"
ANCHORS_FILE = "anchors.parquet"
"""A text-free release's evidence for re-anchoring spans in copies of its sources that differ."""
FULL_FOLDER = "full"
"""A text-free release's copy of the full release's manifest.json and :data:`FULL_JSON_FILES`."""
FULL_JSON_FILES = (VALIDATION_FILE, INPUTS_FILE, REJECTS_FILE, READER_CHANGES_FILE)
"""The full release's JSON files beside its manifest.json, which a text-free release keeps in ``full/``."""
REANCHORED_FILE: Final = "re-anchored.jsonl"
"""What a re-anchored rehydration lost or left out, one line each."""
REHYDRATE_REJECTS_FILE: Final = "rehydrate-rejects.jsonl"
"""The records a partial rehydration left out, one line each."""
MAX_LISTED = 20
"""Problems, violations and offending values a gate lists at most."""
MAX_LINE = 2_000
"""The longest free string of a JSON Lines entry (a reject's reason) or of a problem a gate names."""

Text = Annotated[str, Field(max_length=MAX_TEXT)]
Line = Annotated[str, Field(max_length=MAX_LINE)]


def _bounded(value: JsonValue, depth: int = 0) -> JsonValue:
    """``value`` when every string in it is short, every list and object small and nesting shallow."""
    if isinstance(value, str) and len(value) > MAX_TEXT:
        raise ValueError(f"a text of {len(value)} characters (at most {MAX_TEXT})")
    if isinstance(value, list | dict):
        if depth > 4 or len(value) > 2 * MAX_LISTED:
            raise ValueError(f"a list or object of {len(value)} items nested {depth} deep")
        for key in value if isinstance(value, dict) else ():
            _bounded(key, depth + 1)
        for item in value.values() if isinstance(value, dict) else value:
            _bounded(item, depth + 1)
    return value


Value = Annotated[JsonValue, AfterValidator(_bounded)]
"""A value great-expectations reports or an expectation takes: numbers, short texts, small lists and tables."""


class Violation(Strict):
    """One offending row an expectation lists: where it is and the checked columns' values."""

    split: Text | None = None
    record: Text | None = None
    row: int | None = None
    values: dict[Text, Value] = Field(default_factory=dict)


class ExpectationDetail(Strict):
    """One expectation's outcome, as the expectations gate records it."""

    table: Text
    expectation: str = Field(pattern=r"^expect_[a-z0-9_]+$", max_length=120)
    kwargs: dict[Text, JsonValue]
    success: bool
    observed: dict[Text, Value]
    violations: list[Violation] = Field(max_length=MAX_LISTED)


class PublishedDetail(Strict):
    """One published number against the value a release recomputed."""

    key: Text
    published: float
    recomputed: float | None
    tolerance: float
    verdict: Literal["match", "explained", "unexplained", "not compared"]
    source: Text
    note: Line | None = None


class ProblemDetail(Strict):
    problem: Line


Detail = ExpectationDetail | PublishedDetail | ProblemDetail


class GateRecord(Strict):
    """A gate as validation.json records it."""

    gate: GateName
    status: Status
    success: bool | None
    observed: Observed = None
    expected: Text
    reason: Line | None = None
    warning: Line | None = None
    details: list[Detail] = Field(default_factory=list)

    @model_validator(mode="after")
    def _status_agrees(self) -> Self:
        success = None if self.status == "skipped" else self.status != "fail"
        if self.success != success:
            raise ValueError(f"gate {self.gate}: status {self.status} with success {self.success}")
        return self


class ValidationRecord(Strict):
    """The contents of a release's validation.json. A full release records the expectation suite it was checked
    with, its agreement measures (None without annotator data) and the card sections only its build could
    measure (agreement tables, what its readers met); a text-free release, its leak gate."""

    corpus: str = Field(pattern=CORPUS_NAME, max_length=64)
    version: str = Field(pattern=RELEASE_VERSION, max_length=64)
    variant: Literal["text-free"] | None = None
    expectation_suite: list[Expectation] | None = None
    agreement: dict[Annotated[str, Field(pattern=r"^[a-z0-9_]+$")], float] | None
    gates: list[GateRecord]
    measured_sections: list[CardSection] | None = None
    baselines: list[BaselineScore] | None = Field(default=None, max_length=200)
    """The corpus's baselines scored on the released rows (``Builder.baselines``); a text-free release's card
    reads them from ``full/validation.json``."""

    @model_validator(mode="after")
    def _bounded(self) -> Self:
        for section in self.measured_sections or []:
            problem = section_problem(section)
            if problem is not None:
                raise ValueError(f"measured_sections: section {section.title[:60]!r}: {problem}")
        return self


SECTION_LIMITS = {"title": 200, "text": 4_000, "cell": MAX_TEXT, "rows": 1_000, "charts": 8}


def section_problem(section: CardSection) -> str | None:
    """Why a measured section holds more than a card section of this package does, or None."""
    strings = [section.title, section.text, *(section.table.columns if section.table else [])]
    cells = [cell for row in (section.table.rows if section.table else []) for cell in row]
    if len(section.title) > SECTION_LIMITS["title"] or len(section.text) > SECTION_LIMITS["text"]:
        return "a title or text longer than a card section's"
    if section.table is not None and len(section.table.rows) > SECTION_LIMITS["rows"]:
        return f"more than {SECTION_LIMITS['rows']} table rows"
    if len(section.figures) > SECTION_LIMITS["charts"]:
        return f"more than {SECTION_LIMITS['charts']} figures"
    longest = max((len(text) for text in [*strings[2:], *map(str, cells), *_chart_strings(section.figures)]), default=0)
    return f"a cell or label of {longest} characters" if longest > SECTION_LIMITS["cell"] else None


def _chart_strings(charts: list[BarChart]) -> Iterator[str]:
    for chart in charts:
        yield from chart.strings()


class RejectLine(Strict):
    """A line of rejects.jsonl: a record (or annotation) kept out of the release, and why."""

    where: Line
    kind: Literal["record", "annotation"] = "record"
    reason: Line


class ReaderChangeLine(Strict):
    """A line of reader-changes.jsonl: one line of the input read otherwise than written, its kind and what the
    reader did."""

    kind: Name
    where: Line
    what: Line


class RehydrateReject(Strict):
    """A line of rehydrate-rejects.jsonl: a record a partial rehydration left out, and its documents."""

    where: Line
    reason: Line
    documents: list[Text]


class ReanchoredLine(Strict):
    """A line of re-anchored.jsonl: one document's map, one string lost, or one record left out."""

    document: dict[Text, Value] | None = None
    lost: dict[Text, Value] | None = None
    left_out: dict[Text, Value] | None = None

    @model_validator(mode="after")
    def _one(self) -> Self:
        if sum(value is not None for value in (self.document, self.lost, self.left_out)) != 1:
            raise ValueError("a line holds one of document, lost and left_out")
        return self


Entry = TypeVar("Entry", bound=BaseModel)


def read_json_lines(path: Path, entry: type[Entry], label: str) -> list[Entry]:
    """Every non-blank line of a JSON Lines file as ``entry``; a ClincorpError naming ``label`` and the line."""
    entries = []
    try:
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if line.strip():
                    entries.append(read_typed(line, entry, f"{label} line {number}", f"a {entry.__name__}"))
    except (OSError, UnicodeDecodeError) as error:
        raise ClincorpError(f"{label}: cannot be read ({error})") from None
    return entries


def write_json_lines(path: Path, entries: list[Any]) -> None:
    """One JSON object per line (models dumped without None values; plain dicts as they are)."""
    lines = [json.dumps(entry.model_dump(mode="json") if isinstance(entry, BaseModel) else entry) for entry in entries]
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def read_validation(folder: Path, label: str) -> ValidationRecord:
    """``folder/validation.json`` read and checked; a ClincorpError naming ``label`` otherwise."""
    return read_typed_file(folder / VALIDATION_FILE, ValidationRecord, label, "a release's validation record")


def write_validation(folder: Path, record: ValidationRecord) -> None:
    (folder / VALIDATION_FILE).write_text(record.json_text(), encoding="utf-8")


def reader_changes_problems(manifest: ReleaseManifest, listed: Path | None, label: str) -> list[str]:
    """The readers' changes ``manifest`` counts by kind (with the first of each) against the lines of its
    reader-changes.jsonl (``listed``, None when the release lists none)."""
    try:
        lines = read_json_lines(listed, ReaderChangeLine, label) if listed is not None else []
    except ClincorpError as error:
        return [str(error)]
    found = reader_changes_summary([ReaderChange(line.kind, line.where, line.what) for line in lines])
    if found == manifest.reader_changes:
        return []
    counted = {kind: entry.count for kind, entry in (manifest.reader_changes or {}).items()}
    held = {kind: entry.count for kind, entry in (found or {}).items()}
    what = f"holds {held}" if held != counted else "lists other first changes"
    return [f"manifest.json reader_changes counts {counted}, {label} {what}"]
