"""The card's "Changes since <version>" section, from the summary ``clincorp release --previous OLD`` records
in manifest.json (``core.changes``), and its check in ``clincorp validate``."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from clinical_corpora.builders.release.card.markdown import section_markdown
from clinical_corpora.core.card import CardSection, Cell, Table
from clinical_corpora.core.changes import ReleaseChanges

MANIFEST_FIELD = "changes"


def changes_sections(provenance: dict[str, Any]) -> list[CardSection]:
    """The section, when the release records its changes since a previous release."""
    recorded = provenance.get(MANIFEST_FIELD)
    return [] if recorded is None else [changes_section(ReleaseChanges.model_validate(recorded))]


def changes_section(changes: ReleaseChanges) -> CardSection:
    previous = changes.previous
    text = (
        f"Compared record by record (matched by id) with release {previous.version} ({previous.variant}; its "
        f"manifest.json has sha256 `{previous.digest}`) by `clincorp diff`, which lists the records themselves."
    )
    if not changes.text_compared:
        text += " The text was not compared: one of the two releases is text-free (ids, offsets, labels were)."
    schema = [
        f"`{config}.{path}` ({why})"
        for config, entry in changes.configs.items()
        for path, why in entry.uncompared.items()
        if why != "text"
    ]
    if schema:
        text += f" Fields added, removed or retyped, not compared: {', '.join(schema)}."
    whole = [f"`{name}` {entry.status}" for name, entry in changes.configs.items() if entry.status != "compared"]
    if whole:
        text += f" Configs {', '.join(whole)}."
    rows: list[list[Cell]] = []
    for config, entry in changes.configs.items():
        for split, counts in entry.splits.items():
            fields = "; ".join(
                f"{path}: " + ", ".join(f"{kind} {count}" for kind, count in kinds.items())
                for path, kinds in counts.fields.items()
            )
            rows.append([config, split, counts.added, counts.removed, counts.changed, counts.moved_in, fields])
    if changes.empty:
        return CardSection(f"Changes since {previous.version}", text + " No record changed.")
    columns = ["config", "split", "added", "removed", "changed", "moved in", "what changed (field: kind count)"]
    return CardSection(f"Changes since {previous.version}", text, Table(columns, rows))


def changes_problems(manifest: dict[str, Any], card: str, configs: list[str]) -> list[str]:
    """What is wrong with the changes a release's manifest.json records (a summary, read back as it is): its
    form, configs the release lacks, and the card's section, which must render it."""
    if MANIFEST_FIELD not in manifest:
        return []
    try:
        changes = ReleaseChanges.model_validate(manifest[MANIFEST_FIELD])
    except ValidationError as error:
        return [
            f"manifest.json changes: not a summary of changes since a previous release ({error.error_count()} problems)"
        ]
    problems = [
        f"manifest.json changes name config {name!r}, which the release does not hold"
        for name, entry in changes.configs.items()
        if entry.status != "removed" and name not in configs
    ]
    if section_markdown(changes_section(changes)) not in card:
        problems.append(f"README.md: no section 'Changes since {changes.previous.version}' as manifest.json records it")
    return problems
