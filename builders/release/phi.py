"""The PHI gate of a release folder (``validation/phi_gate.py`` walks it), shared by ``release``, ``release
--text-free`` and ``validate``: a full release's licensed text fields excluded and said so, the corpus's allowed
fields (corpus.yaml ``gates: phi_allowed``) and the maintainer's reviewed findings (``--phi-allow FILE``) let
through and counted; findings named by place, category and short hash only.

What the corpus declares publicly (its corpus.yaml: citation, homepage, licence link) and the vocabularies of
croissant.json are not findings: a card cites its papers' authors and links its licence."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from clinical_corpora.builders.release.card.croissant import CONTEXT, CROISSANT_VERSION, RAI_VERSION
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import PhiAllowedField
from clinical_corpora.core.release_manifest import Count, PhiAllowances, PhiReviewed
from clinical_corpora.core.release_records import FULL_FOLDER, MAX_LISTED, read_json_lines
from clinical_corpora.schemas.licensed import licensed_paths
from clinical_corpora.validation.gates import GateResult
from clinical_corpora.validation.phi_gate import Excluded, PhiFinding, PhiScan, scan_release

EXPECTED = "no protected health information in any string of the release (licensed text fields excluded)"
CORPUS_FILE = "corpus.yaml"
PHI_ADVICE = (
    "the PHI gate's findings, by place, category and short hash (never their text), to review in the enclave: "
    "remove them from the inputs, declare a field expected to hold them (corpus.yaml gates: phi_allowed, with a "
    'reason) or let reviewed ones through with --phi-allow FILE (these lines, each with a "reason")'
)


class PhiAllowLine(PhiReviewed):
    """A line of a ``--phi-allow`` file: a line of the PHI report (its row, line and rows are kept for the
    reader, not matched) with the maintainer's reason."""

    row: Count | None = None
    line: Count | None = None
    rows: Count | None = None


@dataclass(frozen=True)
class PhiPolicy:
    """What a release's PHI gate leaves out (licensed text fields) and lets through (allowed fields, reviewed
    findings), and the public text whose matches are no finding."""

    excluded: Excluded
    public: str
    allowed_fields: list[PhiAllowedField] = field(default_factory=list)
    reviewed: list[PhiReviewed] = field(default_factory=list)

    def allowance(self, finding: PhiFinding) -> PhiAllowedField | PhiReviewed | None:
        """The allowed field or reviewed finding ``finding`` is, or None (a finding). A reviewed finding of a full
        release lets the same one through in ``full/`` of its text-free variant."""
        config = finding.file.split("/")[1] if finding.file.startswith("data/") else None
        declared = (f for f in self.allowed_fields if (f.config, f.field) == (config, finding.field))
        places = _places(finding)
        reviewed = (r for r in self.reviewed if (r.file, r.field, r.category, r.hash) in places)
        return next(declared, None) or next(reviewed, None)


@dataclass(frozen=True)
class PhiOutcome:
    """The gate's verdict, its walk, and what the release records of what it let through."""

    gate: GateResult
    scan: PhiScan
    findings: list[PhiFinding]
    """The scan's findings that are neither an allowed field nor a reviewed finding."""
    allowances: PhiAllowances | None


def run_phi_gate(folder: Path, policy: PhiPolicy) -> PhiOutcome:
    """Walk ``folder`` and judge: passes when every finding is an allowed field or a reviewed finding."""
    scan = scan_release(folder, policy.excluded, policy.public)
    matched = [(finding, policy.allowance(finding)) for finding in scan.findings]
    findings = [finding for finding, allowance in matched if allowance is None]
    used = {id(allowance): allowance for _, allowance in matched if isinstance(allowance, PhiReviewed)}
    reviewed = [entry for entry in policy.reviewed if id(entry) in used]
    recorded = [PhiReviewed(**entry.model_dump(include=set(PhiReviewed.model_fields))) for entry in reviewed]
    allowances = PhiAllowances(allowed_fields=policy.allowed_fields, reviewed=recorded)
    gate = phi_gate(scan, findings, len(matched) - len(findings))
    return PhiOutcome(gate, scan, findings, allowances if policy.allowed_fields or recorded else None)


def view_findings(pages: Path, release: Path, policy: PhiPolicy) -> list[PhiFinding]:
    """The PHI gate over ``clincorp view``'s ``pages`` of the release in ``release``: the findings that are not a
    string (category and hash) the release holds in a licensed text field (a full release's chart time, shown in a
    page's titles) or lets through under ``policy`` (an allowed field, a reviewed finding)."""
    held = scan_release(release, lambda file, field: False, policy.public).findings
    let_through = {
        (f.category, f.hash) for f in held if policy.excluded(f.file, f.field) or policy.allowance(f) is not None
    }
    scan = scan_release(pages, lambda file, field: False, policy.public)
    return [finding for finding in scan.findings if (finding.category, finding.hash) not in let_through]


def phi_gate(scan: PhiScan, findings: list[PhiFinding], allowed: int) -> GateResult:
    """The gate: passes with no finding left; lists where the first ones are, never what they are."""
    categories: dict[str, int] = {}
    for finding in findings:
        categories[finding.category] = categories.get(finding.category, 0) + 1
    counted = ", ".join(f"{category} {count}" for category, count in sorted(categories.items()))
    observed = (
        f"{len(findings)} findings{f' ({counted})' if counted else ''} in {scan.strings} strings of "
        f"{scan.files} files; {allowed} allowed; {scan.excluded_fields} licensed text fields excluded"
        f"{f'; the text chunks of {scan.figures} figures read' if scan.figures else ''}"
    )
    details = [
        {"problem": f"{finding.place()}: {finding.category} (sha256 {finding.hash}…)"}
        for finding in findings[:MAX_LISTED]
    ]
    return GateResult("phi", not findings, observed, EXPECTED, details)


def phi_policy(
    corpus_folder: Path, configs: Mapping[str, type[BaseModel]] | None, allowances: PhiAllowances | None
) -> PhiPolicy:
    """The policy of a release of the corpus in ``corpus_folder``: ``configs`` the record models whose licensed
    text fields a full release holds (None for a text-free release), ``allowances`` what it lets through."""
    public = public_text(corpus_folder / CORPUS_FILE)
    allowed = allowances.allowed_fields if allowances else []
    reviewed = allowances.reviewed if allowances else []
    if configs is None:
        return PhiPolicy(lambda file, field: False, public, list(allowed), list(reviewed))
    licensed = {config: set(licensed_paths(model)) for config, model in configs.items()}
    return PhiPolicy(
        lambda file, field: file.startswith("data/") and field in licensed.get(file.split("/")[1], set()),
        public,
        list(allowed),
        list(reviewed),
    )


def public_text(corpus_file: Path) -> str:
    """The corpus's corpus.yaml and croissant.json's vocabularies: text whose matches are no finding."""
    try:
        declared = corpus_file.read_text(encoding="utf-8")
    except OSError as error:
        raise ClincorpError(f"{corpus_file}: cannot be read ({error.strerror or error})") from None
    return "\n".join([declared, json.dumps(CONTEXT), CROISSANT_VERSION, RAI_VERSION])


def read_phi_allow(path: Path) -> list[PhiReviewed]:
    """A ``--phi-allow FILE``: one reviewed finding per line (a PHI report line with a ``reason``)."""
    if not path.is_file():
        raise ClincorpError(f"--phi-allow {path}: no such file (give the PHI report's lines, each with a reason)")
    return list(read_json_lines(path, PhiAllowLine, f"--phi-allow {path}"))


def write_phi_report(path: Path, findings: list[PhiFinding]) -> None:
    """``--phi-report FILE``: one JSON line per finding (file, field, row, line, rows, category, hash), no text."""
    lines = [json.dumps(finding.__dict__, ensure_ascii=False) for finding in findings]
    try:
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    except OSError as error:
        raise ClincorpError(f"--phi-report {path}: cannot be written ({error.strerror or error})") from None


def phi_report_file(corpus_dir: Path, release_name: str) -> Path:
    """Where a release refused by its PHI gate leaves its findings: beside the release folder it did not write."""
    return corpus_dir / f"{release_name}.phi-report.jsonl"


def keep_phi_report(path: Path | None, findings: list[PhiFinding]) -> None:
    """Write the findings to ``path`` when there are any; else remove an earlier run's report there."""
    if path is None:
        return
    if findings:
        write_phi_report(path, findings)
    else:
        path.unlink(missing_ok=True)


def _places(finding: PhiFinding) -> set[tuple[str, str, str, str]]:
    """How a reviewed finding may name ``finding``: by its place, or one in ``full/`` of a text-free release by
    its place in the full release."""
    files = (finding.file, finding.file.removeprefix(f"{FULL_FOLDER}/"))
    return {(file, finding.field, finding.category, finding.hash) for file in files}
