"""The card's PHI gate section, drawn from manifest.json alone (its phi verdict and what it let through), so that
``clincorp validate`` draws it again byte for byte."""

from __future__ import annotations

from clinical_corpora.core.card import CardSection, Table
from clinical_corpora.core.release_manifest import ReleaseManifest

SCANNED = (
    "Every string of every file of this release (parquet values at any depth and their metadata, JSON and JSON "
    "Lines values and keys, this card, the text chunks of its figures) was scanned for protected health "
    "information in the categories of HIPAA's safe harbor method (dates, ages over 89, phone and fax numbers, "
    "email and web addresses, IP addresses, social security, medical record and account numbers, ZIP codes and "
    "street addresses, person names), de-identification placeholders (MIMIC-III's bracketed placeholders, "
    "MIMIC-IV-Note's underscores, i2b2 surrogate tags) recognised as such. A finding is named by file, field, row, "
    "category and a short hash, never by its text; none is shown here."
)


def phi_sections(manifest: ReleaseManifest) -> list[CardSection]:
    """The PHI gate's result and the allowed fields and reviewed findings it let through, with their reasons; none
    for a release whose manifest records no PHI gate."""
    verdict = next((gate for gate in manifest.gates if gate.gate == "phi"), None)
    if verdict is None:
        return []
    text = f"{SCANNED}\n\nResult: {verdict.status}, {verdict.observed}."
    allowances = manifest.phi
    if allowances is None:
        return [CardSection("PHI gate", text)]
    rows = [
        [f"`data/{field.config}/` `{field.field}`", "allowed field (corpus.yaml)", field.reason]
        for field in allowances.allowed_fields
    ]
    rows += [
        [f"`{entry.file}` `{entry.field}`", f"reviewed {entry.category} (sha256 {entry.hash}…)", entry.reason]
        for entry in allowances.reviewed
    ]
    text += " These strings were let through, each for the reason given:"
    return [CardSection("PHI gate", text, Table(["where", "what", "reason"], rows))]
