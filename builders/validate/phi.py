"""The PHI gate of ``clincorp validate`` (``builders/release/phi.py``): every string of every file of a release,
full, text-free or rehydrated, scanned for protected health information, with the allowed fields and reviewed
findings its manifest records let through."""

from __future__ import annotations

from pathlib import Path

from clinical_corpora.builders.release.opened import OpenedRelease
from clinical_corpora.builders.release.phi import EXPECTED, PhiOutcome, phi_policy, run_phi_gate, write_phi_report

__all__ = ["EXPECTED", "validate_phi"]


def validate_phi(opened: OpenedRelease, report: Path | None) -> PhiOutcome:
    """The gate over ``opened``'s folder; its findings (no text) written to ``report`` when given."""
    configs = None if opened.variant == "text-free" else opened.builder.CONFIGS
    outcome = run_phi_gate(opened.folder, phi_policy(opened.corpus.folder, configs, opened.manifest.phi))
    if report is not None:
        write_phi_report(report, outcome.findings)
    return outcome
