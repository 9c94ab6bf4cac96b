"""``clincorp diff``'s report: counts per config, split, field and kind of change, with at most N examples of
each, as readable text or JSON; and the summary a release records of the changes since its predecessor."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from clinical_corpora.builders.diff.engine import RECORD, Change, ConfigComparison, compare
from clinical_corpora.builders.diff.opened import OpenedRelease, same_corpus
from clinical_corpora.builders.release import opened as door
from clinical_corpora.core.changes import ConfigChanges, PreviousRelease, ReleaseChanges, SplitChanges

RECORD_KINDS = {"added": "added", "removed": "removed", "moved to another split": "moved_in"}


@dataclass
class KindTally:
    """How often one kind of change happened to one field, and the first examples."""

    count: int = 0
    examples: list[Change] = field(default_factory=list)


@dataclass
class SplitTally:
    records: dict[str, KindTally] = field(default_factory=dict)
    """added, removed, changed, moved_in → count and examples (record ids)."""
    fields: dict[str, dict[str, KindTally]] = field(default_factory=dict)


@dataclass
class ConfigTally:
    comparison: ConfigComparison
    splits: dict[str, SplitTally] = field(default_factory=dict)


@dataclass
class ReleaseDiff:
    """Every config's tallies, from :func:`diff_releases`."""

    old: OpenedRelease
    new: OpenedRelease
    examples: int
    configs: dict[str, ConfigTally] = field(default_factory=dict)

    @property
    def text_compared(self) -> bool:
        return not (self.old.text_free ^ self.new.text_free)

    @property
    def warnings(self) -> list[str]:
        """Two releases of one version and variant whose bytes differ: one was remade without a new version."""
        old, new = self.old, self.new
        if old.version != new.version or old.variant != new.variant or None in (old.digest, new.digest):
            return []
        if old.digest == new.digest:
            return []
        return [
            f"both releases are {old.corpus} {old.version} ({old.variant}) but their bytes differ (digest "
            f"sha256:{old.digest} and sha256:{new.digest}): a release that changed needs a new version"
        ]

    def add(self, tally: ConfigTally, change: Change, changed_record: bool) -> None:
        split = tally.splits.setdefault(change.split, SplitTally())
        if change.path == RECORD and change.kind in RECORD_KINDS:
            self._count(split.records.setdefault(RECORD_KINDS[change.kind], KindTally()), change)
            return
        if changed_record:
            self._count(split.records.setdefault("changed", KindTally()), change)
        self._count(split.fields.setdefault(change.path or "(record)", {}).setdefault(change.kind, KindTally()), change)

    def _count(self, tally: KindTally, change: Change) -> None:
        tally.count += 1
        if len(tally.examples) < self.examples:
            tally.examples.append(change)

    def summary(self) -> ReleaseChanges:
        """What the new release records of these changes (counts only)."""
        assert self.old.digest is not None
        previous = PreviousRelease(version=self.old.version, variant=self.old.variant, digest=self.old.digest)
        configs = {}
        for name, tally in self.configs.items():
            splits = {
                split: SplitChanges(
                    **{kind: kinds.count for kind, kinds in counts.records.items()},
                    fields={
                        path: {kind: k.count for kind, k in kinds.items()} for path, kinds in counts.fields.items()
                    },
                )
                for split, counts in sorted(tally.splits.items())
            }
            shape = tally.comparison.shape
            uncompared = {} if shape is None else shape.uncompared
            if splits or uncompared or _status(tally) != "compared":
                configs[name] = ConfigChanges(status=_status(tally), uncompared=uncompared, splits=splits)
        return ReleaseChanges(previous=previous, text_compared=self.text_compared, configs=configs)


def open_release(folder: Path) -> OpenedRelease:
    """A release folder given on the command line, through the door (``release/opened.py``): what needs no file
    read is checked now, the files' contents beside the diff's reading, until :meth:`OpenedRelease.confirm`."""
    release = door.open_release(folder, door.Trust.DEFERRED)
    manifest = release.manifest
    return OpenedRelease(
        folder, manifest.corpus, manifest.version, manifest.kind, release.digest, id_fields(release), release.confirm
    )


def id_fields(release: door.OpenedRelease) -> dict[str, str]:
    """Config → the field naming its records, from the installed corpus's record models."""
    return {config: str(getattr(model, "id_field", "id")) for config, model in release.builder.CONFIGS.items()}


def diff_releases(old: OpenedRelease, new: OpenedRelease, examples: int = 3) -> ReleaseDiff:
    """Compare two releases of one corpus: every change counted, ``examples`` of each kind kept. Returned only
    once both releases' files are confirmed (:meth:`OpenedRelease.confirm`); a file that differs from its
    manifest is the error raised, whatever reading it raised first."""
    same_corpus(old, new)
    try:
        diff = _tallied(old, new, examples)
    except Exception:
        old.confirm()
        new.confirm()
        raise
    old.confirm()
    new.confirm()
    return diff


def _tallied(old: OpenedRelease, new: OpenedRelease, examples: int) -> ReleaseDiff:
    diff = ReleaseDiff(old, new, examples)
    for comparison in compare(old, new):
        tally = diff.configs[comparison.config] = ConfigTally(comparison)
        last = None
        for change in comparison.changes:  # a record's field changes come one after another
            key = (change.split, change.record)
            field_change = change.path != RECORD or change.kind == "changed"
            diff.add(tally, change, changed_record=field_change and key != last)
            if field_change:
                last = key
    return diff


def _status(tally: ConfigTally) -> Literal["compared", "added", "removed"]:
    comparison = tally.comparison
    if comparison.shape is not None:
        return "compared"
    return "added" if comparison.new_rows else "removed"


def as_json(diff: ReleaseDiff) -> dict[str, Any]:
    """The report for machines: both releases, then per config and split the records and fields changed."""
    return {
        "old": _identity(diff.old),
        "new": _identity(diff.new),
        "text_compared": diff.text_compared,
        "identical": diff.summary().empty,
        "warnings": diff.warnings,
        "configs": {name: _config_json(tally) for name, tally in diff.configs.items()},
    }


def _identity(release: OpenedRelease) -> dict[str, Any]:
    return {
        "folder": str(release.folder),
        "corpus": release.corpus,
        "version": release.version,
        "variant": release.variant,
        "digest": release.digest,
    }


def _config_json(tally: ConfigTally) -> dict[str, Any]:
    comparison = tally.comparison
    return {
        "status": _status(tally),
        "rows": {"old": comparison.old_rows, "new": comparison.new_rows},
        "uncompared": {} if comparison.shape is None else comparison.shape.uncompared,
        "splits": {
            split: {
                "records": {kind: _kind_json(k, record=True) for kind, k in counts.records.items()},
                "fields": {
                    path: {kind: _kind_json(k) for kind, k in kinds.items()} for path, kinds in counts.fields.items()
                },
            }
            for split, counts in sorted(tally.splits.items())
        },
    }


def _kind_json(tally: KindTally, record: bool = False) -> dict[str, Any]:
    """A kind of change's count and examples: each with the values before and after (JSON values; a record's
    split, for a record added, removed or moved)."""
    if record:
        examples = [{"record": c.record, **_splits(c)} for c in tally.examples]
    else:
        examples = [
            {"record": c.record, "item": c.item, "detail": c.detail, "old": c.old, "new": c.new} for c in tally.examples
        ]
    return {"count": tally.count, "examples": examples}


def _splits(change: Change) -> dict[str, Any]:
    """A record's split before and after (a record changed in place has its field changes instead)."""
    on_record = change.path == RECORD
    return {"old": change.old if on_record else None, "new": change.new if on_record else None}


def as_text(diff: ReleaseDiff) -> str:
    """The report for people: one block per config with changes, one line per field and kind of change."""
    old, new = diff.old, diff.new
    lines = [f"{old.corpus}: {old.version} ({old.variant}, {old.folder}) → {new.version} ({new.variant}, {new.folder})"]
    lines += [f"warning: {warning}" for warning in diff.warnings]
    if not diff.text_compared:
        lines.append("text not compared: one release is text-free (ids, offsets, labels and other fields are)")
    for name, tally in diff.configs.items():
        lines += _config_text(name, tally)
    if diff.summary().empty:
        lines.append("no differences in the records")
    return "\n".join(lines) + "\n"


def _config_text(name: str, tally: ConfigTally) -> list[str]:
    comparison = tally.comparison
    status = _status(tally)
    if status != "compared":
        rows = comparison.new_rows if status == "added" else comparison.old_rows
        return [f"config {name}: {status} ({sum(rows.values())} records)"]
    shape = comparison.shape
    schema = {path: why for path, why in (shape.uncompared if shape else {}).items() if why != "text"}
    if not (tally.splits or schema):
        return []
    lines = [f"config {name}"]
    lines += [f"  field {path}: {why} in the schema, not compared" for path, why in schema.items()]
    for split, counts in sorted(tally.splits.items()):
        before, after = comparison.old_rows.get(split, 0), comparison.new_rows.get(split, 0)
        parts = [
            f"{counts.records[k].count} {k.replace('_', ' ')}"
            for k in ("added", "removed", "changed", "moved_in")
            if k in counts.records
        ]
        lines.append(f"  {split}: {before} → {after} records; {', '.join(parts)}")
        for kind in ("added", "removed", "moved_in"):
            if kind in counts.records:
                ids = ", ".join(
                    change.record + (f" ({change.detail})" if change.detail else "")
                    for change in counts.records[kind].examples
                )
                lines.append(f"    {kind.replace('_', ' ')}: {ids}{_more(counts.records[kind])}")
        for path, kinds in counts.fields.items():
            for kind, k in kinds.items():
                lines.append(f"    {path}: {kind} ×{k.count}")
                lines += [f"      {_example(change)}" for change in k.examples]
    return lines


def _example(change: Change) -> str:
    where = f"{change.record} {change.item}".strip()
    return f"{where}: {change.detail}" if change.detail else where


def _more(tally: KindTally) -> str:
    return f" … and {tally.count - len(tally.examples)} more" if tally.count > len(tally.examples) else ""
