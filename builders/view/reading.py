"""What the viewer reads of a release: its identity, its rows (licensed text None when text-free) and the
records its validation results name. A release is untrusted: every value used is checked for its type."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasets import Features

from clinical_corpora.builders.contract.base import BuildContext, Builder
from clinical_corpora.builders.contract.display import DocumentDisplay, RowReader
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release import opened as door
from clinical_corpora.builders.release.card.baselines import baselines_of
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.release.phi import PhiPolicy, phi_policy
from clinical_corpora.core.card import CardSection
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.release_manifest import LeakObserved
from clinical_corpora.core.release_records import ExpectationDetail, GateRecord
from clinical_corpora.core.release_records import Violation as RecordedViolation
from clinical_corpora.core.results import ResultRecord, read_record
from clinical_corpora.schemas.features import row_decoder
from clinical_corpora.schemas.licensed import licensed_tree, map_licensed

BATCH_ROWS = 256


@dataclass(frozen=True)
class Violation:
    """One offending record an expectation lists in validation.json."""

    gate: str
    table: str
    expectation: str
    verdict: str
    """``failed`` or ``tolerated`` (the expectation passed, allowing it)."""
    split: str
    record: str
    values: str

    @property
    def config(self) -> str:
        return self.table.split(".")[0]


@dataclass(frozen=True)
class GateLine:
    """A gate as validation.json records it: agreement measures among them."""

    source: str
    gate: str
    status: str
    observed: str
    expected: str
    measure: float | None = None
    """An agreement measure between 0 and 1, drawn as a bar beside its value."""


@dataclass
class Release:
    """A release folder as the viewer reads it."""

    folder: Path
    corpus: str
    version: str
    text_free: bool
    sample: bool
    builder: Builder
    phi: PhiPolicy
    """The release's PHI gate policy: the view's pages pass the same gate."""
    violations: list[Violation] = field(default_factory=list)
    gates: list[GateLine] = field(default_factory=list)
    annotators: dict[str, dict[str, DocumentDisplay]] = field(default_factory=dict)
    """Annotator → document id → that annotator's display, for the overlay (empty without annotators' files)."""
    baselines: CardSection | None = None
    """The card's baselines table (``release/card/baselines.py``)."""
    results: list[ResultRecord] = field(default_factory=list)
    """The result records given with ``--results``, each made on this release."""

    def rows(self) -> RowReader:
        """The release's rows for the builder's ``displays`` hook."""
        view = ReleaseView(self.folder)

        def read(config: str, columns: list[str] | None) -> Iterator[tuple[str, dict[str, Any]]]:
            if config not in view.configs():
                raise ClincorpError(f"{self.folder}: the release has no config {config!r}")
            features = view.features(config)
            chosen = [name for name in features if columns is None or name in columns]
            decode = row_decoder(Features({name: features[name] for name in chosen}))
            model = self.builder.CONFIGS.get(config)
            licensed = licensed_tree(model) if model is not None and self.text_free else {}
            licensed = {name: node for name, node in licensed.items() if name in chosen}
            for split in view.splits(config):
                for batch in view.batches(config, split, chosen, BATCH_ROWS):
                    for row in batch.to_pylist():
                        yield split, map_licensed(decode(row), licensed, _withheld)

        return read


def _withheld(_: object) -> None:
    return None


def open_release(
    folder: Path, sources: dict[str, Path] | None = None, predictions: Path | None = None, results: Path | None = None
) -> Release:
    """The release in ``folder``, through the door (``release/opened.py``), its corpus the installed one its
    manifest names. With ``predictions`` (a system's output in its scorer's format), the gold and the system are
    what the overlay compares; otherwise, with ``sources`` (or, for a sample release, its corpus's embedded
    samples), the annotators' files they hold. ``results``: a folder of result records made on this release."""
    opened = door.open_release(folder)
    release = Release(
        folder=folder,
        corpus=opened.corpus.name,
        version=opened.version,
        text_free=opened.text_free,
        sample=opened.manifest.sample,
        builder=opened.builder,
        phi=phi_policy(opened.corpus.folder, None if opened.text_free else opened.builder.CONFIGS, opened.manifest.phi),
    )
    records = [("validation.json", opened.validation)]
    if opened.text_free:
        records.append((f"{door.FULL_FOLDER}/validation.json", opened.full_validation))
    for source, record in records:
        release.gates += [gate_line(source, gate) for gate in record.gates]
        release.violations += violations(record.gates)
    release.baselines = _baselines(opened)
    release.results = result_records(opened, results) if results is not None else []
    if predictions is not None:
        release.annotators = _predictions(release, predictions)
    elif sources or release.sample:
        context = BuildContext(opened.corpus, resolve_sources(opened.corpus, sources or {}))
        release.annotators = release.builder.annotator_displays(context, release.rows())
    return release


def _baselines(opened: door.OpenedRelease) -> CardSection | None:
    """The card's baselines table: a full release's own, a text-free release's full release's; none for a
    rehydration that is not the maintainer's release (other data than the scores describe)."""
    sources = opened.builder.note_sources(opened.view)
    if opened.text_free:
        return baselines_of(opened.corpus, opened.view, sources, opened.full_manifest, opened.full_validation)
    if opened.variant == "full":
        return baselines_of(opened.corpus, opened.view, sources, opened.manifest, opened.validation)
    return None


def result_records(opened: door.OpenedRelease, folder: Path) -> list[ResultRecord]:
    """The result records (``*.json``, by name) in ``folder``; an error naming a record made on another release."""
    if not folder.is_dir():
        raise ClincorpError(f"{folder}: no such folder (--results takes a folder of clincorp score --record files)")
    accepted = {opened.digest, *([opened.full_digest] if opened.text_free else [])}
    records = []
    for path in sorted(folder.glob("*.json")):
        record = read_record(path)
        if record.digest not in accepted:
            raise ClincorpError(
                f"{path}: a result record made on release digest {record.digest} ({record.corpus} {record.version}), "
                f"not on {opened.folder} (digest {opened.digest}): its scores do not describe this release"
            )
        records.append(record)
    return records


def _predictions(release: Release, predictions: Path) -> dict[str, dict[str, DocumentDisplay]]:
    if not predictions.exists():
        raise ClincorpError(
            f"{predictions}: no such file or folder (--predictions takes what the corpus's scorer reads)"
        )
    compared = release.builder.prediction_displays(predictions, release.rows())
    if compared is None:
        raise ClincorpError(
            f"{predictions}: the view cannot draw {release.corpus} predictions yet "
            "(its corpus registers no reader of predictions)"
        )
    return compared


def gate_line(source: str, gate: GateRecord) -> GateLine:
    """A gate in words: the leak gate's longest run, an agreement measure with its bar, and "n/a" (never a number
    that looks like 0) for a measure the documents could not give."""
    observed = gate.observed
    measure = None
    if isinstance(observed, LeakObserved):
        shown = f"longest shared run {observed.longest_shared_run} characters (limit {observed.limit})"
    elif isinstance(observed, float) and math.isnan(observed):
        shown = "n/a: not measurable on these documents (no pair or item to compare)"
    elif observed is None:
        shown = "n/a: not measured"
    else:
        shown = str(observed)
        agreement = gate.gate.startswith("agreement.") and isinstance(observed, int | float)
        measure = float(observed) if agreement and 0 <= float(observed) <= 1 else None
    return GateLine(source, gate.gate, gate.status, shown, gate.expected, measure)


def violations(gates: list[GateRecord]) -> list[Violation]:
    """The offending records every expectation of validation.json's gates lists (failed or tolerated)."""
    found = []
    for gate in gates:
        for detail in gate.details:
            if isinstance(detail, ExpectationDetail):
                verdict = "tolerated" if detail.success else "failed"
                found += [_violation(gate.gate, detail, verdict, listed) for listed in detail.violations]
    return found


def _violation(gate: str, detail: ExpectationDetail, verdict: str, listed: RecordedViolation) -> Violation:
    return Violation(
        gate=gate,
        table=detail.table,
        expectation=detail.expectation,
        verdict=verdict,
        split=listed.split or "",
        record=listed.record or "",
        values=", ".join(f"{name}={value!r}" for name, value in listed.values.items()),
    )
