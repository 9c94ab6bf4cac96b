"""What the viewer reads of a release: its identity, its rows (licensed text None when text-free) and the
records its validation results name. A release is untrusted: every value used is checked for its type."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasets import Features

from clinical_corpora.builders.contract.base import BuildContext, Builder, make_builder
from clinical_corpora.builders.contract.display import DocumentDisplay, RowReader
from clinical_corpora.builders.contract.release_view import MANIFEST, ReleaseView
from clinical_corpora.builders.plugins import installed_corpus
from clinical_corpora.builders.release.folder import checked_version, read_json
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.text_free.layout import FULL_FOLDER, VARIANT
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.schemas.features import row_decoder
from clinical_corpora.schemas.licensed import licensed_tree, map_licensed

BATCH_ROWS = 256
VALIDATION = "validation.json"


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


@dataclass
class Release:
    """A release folder as the viewer reads it."""

    folder: Path
    corpus: str
    version: str
    text_free: bool
    sample: bool
    builder: Builder
    violations: list[Violation] = field(default_factory=list)
    gates: list[GateLine] = field(default_factory=list)
    annotators: dict[str, dict[str, DocumentDisplay]] = field(default_factory=dict)
    """Annotator → document id → that annotator's display, for the overlay (empty without annotators' files)."""

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


def open_release(folder: Path, sources: dict[str, Path] | None = None) -> Release:
    """The release in ``folder``, its corpus found among the installed ones by the name its manifest gives.
    With ``sources`` (or, for a sample release, its corpus's embedded samples), the annotators' files they
    hold are read for the overlay."""
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise ClincorpError(f"{folder} is not a release: it has no {MANIFEST}")
    manifest = read_json(manifest_path)
    if not isinstance(manifest, dict):
        raise ClincorpError(f"{manifest_path}: expected a JSON object")
    corpus = installed_corpus(manifest.get("corpus"), manifest_path)
    options = manifest.get("options")
    release = Release(
        folder=folder,
        corpus=corpus.name,
        version=checked_version(manifest.get("version"), manifest_path),
        text_free=manifest.get("variant") == VARIANT,
        sample=manifest.get("sample") is True,
        builder=make_builder(corpus.builder, options if isinstance(options, dict) else None),
    )
    for path in (folder / VALIDATION, folder / FULL_FOLDER / VALIDATION):
        if path.is_file():
            gates = _gates(path)
            source = path.relative_to(folder).as_posix()
            release.gates += [_gate_line(source, gate) for gate in gates if isinstance(gate, dict)]
            release.violations += violations(gates)
    if sources or release.sample:
        context = BuildContext(corpus, resolve_sources(corpus, sources or {}))
        release.annotators = release.builder.annotator_displays(context, release.rows())
    return release


def _gates(path: Path) -> list[Any]:
    results = read_json(path)
    gates = results.get("gates", []) if isinstance(results, dict) else None
    if not isinstance(gates, list):
        raise ClincorpError(f"{path}: expected an object whose 'gates' is a list")
    return gates


def _gate_line(source: str, gate: dict[str, Any]) -> GateLine:
    return GateLine(
        source, str(gate.get("gate")), str(gate.get("status")), str(gate.get("observed")), str(gate.get("expected"))
    )


def violations(gates: list[Any]) -> list[Violation]:
    """The offending records every expectation of validation.json's gates lists (failed or tolerated)."""
    found = []
    for gate in gates:
        details = gate.get("details", []) if isinstance(gate, dict) else []
        for detail in details if isinstance(details, list) else []:
            if not isinstance(detail, dict) or not isinstance(detail.get("violations"), list):
                continue
            verdict = "tolerated" if detail.get("success") is True else "failed"
            for listed in detail["violations"]:
                if isinstance(listed, dict):
                    found.append(_violation(str(gate.get("gate")), detail, verdict, listed))
    return found


def _violation(gate: str, detail: dict[str, Any], verdict: str, listed: dict[str, Any]) -> Violation:
    values = listed.get("values")
    shown = ", ".join(f"{k}={v!r}" for k, v in values.items()) if isinstance(values, dict) else ""
    return Violation(
        gate=gate,
        table=str(detail.get("table", "")),
        expectation=str(detail.get("expectation", "")),
        verdict=verdict,
        split=str(listed.get("split", "")),
        record=str(listed.get("record", "")),
        values=shown,
    )
