"""What a release records of the changes since its predecessor (``clincorp release --previous OLD``).

A summary, not an input: counts per config, split, field and kind of change (no record ids, no text), with
the version, variant and digest of the release compared against. ``manifest.json`` holds it as ``changes``
and the card renders it as "Changes since <version>"; ``clincorp validate`` reads it back from the manifest
and checks its form and the card's rendering of it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from clinical_corpora.core.manifest import RELEASE_VERSION

Count = Annotated[int, Field(ge=0)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PreviousRelease(_Strict):
    """The release compared against: its version, variant and digest (the sha256 of its manifest.json)."""

    version: str = Field(pattern=RELEASE_VERSION)
    variant: Literal["full", "text-free", "re-anchored", "partial"]
    digest: str = Field(pattern=r"^[0-9a-f]{64}$")


class SplitChanges(_Strict):
    """Records added, removed, changed and moved in from another split; field → kind of change → count."""

    added: Count = 0
    removed: Count = 0
    changed: Count = 0
    moved_in: Count = 0
    fields: dict[str, dict[str, Count]] = Field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.moved_in)


class ConfigChanges(_Strict):
    """A config: ``compared``, or ``added``/``removed`` whole; the fields not compared (path → why: ``text``
    when one release is text-free, ``added``, ``removed`` or ``retyped`` in the schema); each split's changes."""

    status: Literal["compared", "added", "removed"] = "compared"
    uncompared: dict[str, str] = Field(default_factory=dict)
    splits: dict[str, SplitChanges] = Field(default_factory=dict)


class ReleaseChanges(_Strict):
    """The changes of a release since ``previous``, per config (only configs with a change)."""

    previous: PreviousRelease
    text_compared: bool
    configs: dict[str, ConfigChanges] = Field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return all(
            config.status == "compared" and all(split.empty for split in config.splits.values())
            for config in self.configs.values()
        )
