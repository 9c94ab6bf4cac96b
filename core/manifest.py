"""Corpus manifests (``corpora/<name>/corpus.yaml``): what a corpus is, validated by pydantic."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from clinical_corpora.core.errors import SourceError

SEMVER = r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$"
MANIFEST_NAME = "corpus.yaml"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Access(Strict):
    """Who may get the raw data, and how."""

    public: bool
    how: str = Field(description="e.g. 'PhysioNet credentialed access (MIMIC-IV-Note)'")


class SourceSpec(Strict):
    """A named raw input: its default (embedded sample) path and where users get the real one."""

    path: str | None = Field(
        default=None,
        description="default path, relative to the corpus folder (the embedded sample); "
        "without one the source is read only when given with --source",
    )
    kind: Literal["file", "directory"]
    description: str = Field(description="what the input is and where the real file comes from")
    required: bool = True
    replaces: list[str] = Field(
        default_factory=list, description="sources this one stands in for when given: they are not read"
    )
    sha256: dict[str, str] = Field(
        default_factory=dict,
        description="expected sha256 of the real input's files, by path relative to the source; "
        "checked when the source is given with --source",
    )


class ConfigSpec(Strict):
    """A released config (one parquet table per split)."""

    description: str
    splits: list[str] = Field(min_length=1)


class Expectation(BaseModel):
    """One great-expectations expectation on a flattened release table; other keys are its kwargs."""

    model_config = ConfigDict(extra="allow")
    table: str
    expectation: str = Field(pattern=r"^expect_[a-z0-9_]+$")

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    @property
    def columns(self) -> list[str]:
        """The columns the expectation names (column, column_A, column_B, column_list)."""
        named: list[str] = []
        for argument in ("column", "column_A", "column_B", "column_list"):
            value = self.kwargs.get(argument)
            named += [value] if isinstance(value, str) else list(value or [])
        return named


class Threshold(Strict):
    """Bounds an agreement measure must stay within."""

    min: float | None = None
    max: float | None = None


class Gates(Strict):
    max_rejects: int = Field(default=0, ge=0)
    expectations: list[Expectation] = Field(default_factory=list)
    agreement: dict[str, Threshold] = Field(default_factory=dict)


class CorpusManifest(Strict):
    """The contents of a corpus.yaml."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    version: str = Field(pattern=SEMVER)
    pretty_name: str
    description: str
    license: str
    access: Access
    citation: str
    homepage: str
    builder: str = Field(pattern=r"^[\w.]+:\w+$", description="module:Class")
    sources: dict[str, SourceSpec]
    configs: dict[str, ConfigSpec] = Field(min_length=1)
    task_categories: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    gates: Gates = Field(default_factory=Gates)
    folder: Path = Field(default=Path("."), exclude=True)

    @model_validator(mode="after")
    def _sources_are_consistent(self) -> CorpusManifest:
        for name, spec in self.sources.items():
            unknown = set(spec.replaces) - set(self.sources)
            if unknown:
                raise ValueError(f"source {name!r} replaces unknown sources {sorted(unknown)}")
            if spec.required and spec.path is None:
                raise ValueError(f"source {name!r} is required, so it needs a default path")
        return self

    @model_validator(mode="after")
    def _expectation_tables_name_configs(self) -> CorpusManifest:
        for expectation in self.gates.expectations:
            if expectation.table.split(".")[0] not in self.configs:
                raise ValueError(f"expectation table {expectation.table!r} names no config")
        return self


def load_manifest(path: Path) -> CorpusManifest:
    """Read and validate a corpus.yaml (or the corpus.yaml inside a folder)."""
    path = path / MANIFEST_NAME if path.is_dir() else path
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise SourceError(path, f"cannot read the corpus manifest: {error}") from error
    try:
        return CorpusManifest.model_validate({**(raw or {}), "folder": path.parent})
    except ValidationError as error:
        raise SourceError(path, f"not a valid corpus manifest:\n{error}") from error
