"""The card's "Changes since <version>" section, from the summary ``clincorp release --previous OLD`` records
in manifest.json (``core.changes``), and its check in ``clincorp validate``."""

from __future__ import annotations

from clinical_corpora.core.card import CardSection, Cell, Table
from clinical_corpora.core.changes import ReleaseChanges


def changes_sections(changes: ReleaseChanges | None) -> list[CardSection]:
    """The section, when the release records its changes since a previous release."""
    return [] if changes is None else [changes_section(changes)]


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


def changes_problems(changes: ReleaseChanges | None, configs: list[str]) -> list[str]:
    """The configs the changes a release records name but the release does not hold (the card's section is
    checked by drawing the card again)."""
    return [
        f"manifest.json changes name config {name!r}, which the release does not hold"
        for name, entry in (changes.configs.items() if changes is not None else ())
        if entry.status != "removed" and name not in configs
    ]
