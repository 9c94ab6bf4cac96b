"""The PHI gate of ``clincorp validate``: every string of every file of a release, full, text-free or
rehydrated, scanned for protected health information (``validation/phi.py``), a full release's licensed text
fields (the notes themselves) excluded and said so; findings named by place, category and short hash only.

What the corpus declares publicly (its corpus.yaml: citation, homepage, licence link) and the vocabularies of
croissant.json are not findings: a card cites its papers' authors and links its licence."""

from __future__ import annotations

import json
from pathlib import Path

from clinical_corpora.builders.release.card.croissant import CONTEXT, CROISSANT_VERSION, RAI_VERSION
from clinical_corpora.builders.release.opened import OpenedRelease
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.release_records import MAX_LISTED
from clinical_corpora.schemas.licensed import licensed_paths
from clinical_corpora.validation.gates import GateResult
from clinical_corpora.validation.phi_gate import Excluded, PhiScan, scan_release

EXPECTED = "no protected health information in any string of the release (licensed text fields excluded)"
CORPUS_FILE = "corpus.yaml"


def phi_scan(opened: OpenedRelease) -> PhiScan:
    """The walk over ``opened``'s folder, against its installed corpus's public declarations."""
    return scan_release(opened.folder, _excluded(opened), public_text(opened.corpus.folder / CORPUS_FILE))


def phi_gate(scan: PhiScan) -> GateResult:
    """The gate: passes with no finding; lists where the first ones are, never what they are."""
    categories: dict[str, int] = {}
    for finding in scan.findings:
        categories[finding.category] = categories.get(finding.category, 0) + 1
    counted = ", ".join(f"{category} {count}" for category, count in sorted(categories.items()))
    observed = (
        f"{len(scan.findings)} findings{f' ({counted})' if counted else ''} in {scan.strings} strings of "
        f"{scan.files} files; {scan.excluded_fields} licensed text fields excluded; {scan.not_read} figures not read"
    )
    details = [
        {"problem": f"{finding.place()}: {finding.category} (sha256 {finding.hash}…)"}
        for finding in scan.findings[:MAX_LISTED]
    ]
    return GateResult("phi", not scan.findings, observed, EXPECTED, details)


def public_text(corpus_file: Path) -> str:
    """The corpus's corpus.yaml and croissant.json's vocabularies: text whose matches are no finding."""
    try:
        declared = corpus_file.read_text(encoding="utf-8")
    except OSError as error:
        raise ClincorpError(f"{corpus_file}: cannot be read ({error.strerror or error})") from None
    return "\n".join([declared, json.dumps(CONTEXT), CROISSANT_VERSION, RAI_VERSION])


def _excluded(opened: OpenedRelease) -> Excluded:
    """A full (or rehydrated) release's licensed text fields, per data file; nothing in a text-free one."""
    if opened.variant == "text-free":
        return lambda file, field: False
    licensed = {config: set(licensed_paths(model)) for config, model in opened.builder.CONFIGS.items()}
    return lambda file, field: file.startswith("data/") and field in licensed.get(file.split("/")[1], set())


def write_phi_report(path: Path, scan: PhiScan) -> None:
    """``--phi-report FILE``: one JSON line per finding (file, field, row, line, rows, category, hash), no text."""
    lines = [json.dumps(finding.__dict__, ensure_ascii=False) for finding in scan.findings]
    try:
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    except OSError as error:
        raise ClincorpError(f"--phi-report {path}: cannot be written ({error.strerror or error})") from None
