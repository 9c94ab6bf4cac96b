"""corpus.yaml's ``brat:`` section: the closed label sets of a BRAT corpus built by the generic BRAT builder.

A corpus declares its entity types, relation types and entity attributes (each with its closed values, or
``binary``) and which folder of its BRAT source holds which split; the generic builder
(``builders/generic_brat``) derives its record model from the declaration and quarantines every annotation
outside it.
"""

from __future__ import annotations

import keyword
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

TypeName = Annotated[str, StringConstraints(pattern=r"^[^\s:]+$", max_length=64)]
"""An entity, relation or attribute value name as a ``.ann`` line writes it: no whitespace, no colon."""
AttributeName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_]*$", max_length=64)]
"""An attribute name, also the name of its field in the released entity's ``attributes``."""
SplitFolder = Annotated[str, StringConstraints(pattern=r"^[\w.-]+(/[\w.-]+)*$", max_length=200)]
"""A folder inside the source, ``/``-separated (no ``.`` or ``..`` part: checked by the declaration)."""
BINARY: Literal["binary"] = "binary"
"""An attribute with no value (``A1<TAB>Negated T3``): present or not."""


def _unique(names: list[str], what: str) -> list[str]:
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"{what} named twice: {repeated}")
    return names


class BratDeclaration(BaseModel):
    """What the generic BRAT builder releases: one row per note with its entities, relations and attributes."""

    model_config = ConfigDict(extra="forbid")
    source: str | None = Field(default=None, description="the BRAT folder source; default: the corpus's only source")
    config: str | None = Field(default=None, description="the config of one row per note; default: the default one")
    splits: dict[str, SplitFolder] = Field(
        default_factory=dict, description="split → its folder inside the source; default: the folder named as the split"
    )
    entities: list[TypeName] = Field(min_length=1, description="the entity (text-bound) types")
    relations: list[TypeName] = Field(default_factory=list, description="the relation types (two arguments each)")
    attributes: dict[AttributeName, list[TypeName] | Literal["binary"]] = Field(
        default_factory=dict, description="entity attribute → its closed values, or binary (no value)"
    )

    @field_validator("entities", "relations")
    @classmethod
    def _types_are_unique(cls, names: list[str]) -> list[str]:
        return _unique(names, "types")

    @field_validator("attributes")
    @classmethod
    def _attributes_are_fields(
        cls, attributes: dict[str, list[str] | Literal["binary"]]
    ) -> dict[str, list[str] | Literal["binary"]]:
        for name, values in attributes.items():
            if (
                keyword.iskeyword(name)
                or hasattr(BaseModel, name)
                or name.startswith("model_")
                or name.endswith("_name")
            ):
                raise ValueError(
                    f"attribute {name!r} cannot name a field of the release: expected no Python keyword, no pydantic "
                    "BaseModel attribute, nothing starting with model_ or ending with _name"
                )
            if values != BINARY and not values:
                raise ValueError(f"attribute {name!r}: expected its values, or binary for an attribute with none")
            if values != BINARY:
                _unique(values, f"attribute {name!r}: values")
        return attributes

    @model_validator(mode="after")
    def _split_folders_lie_inside(self) -> BratDeclaration:
        for split, folder in self.splits.items():
            if {".", ".."} & set(folder.split("/")):
                raise ValueError(f"split {split!r}: folder {folder!r} must lie inside the source (no . or .. part)")
        _unique(list(self.splits.values()), "split folders")
        return self

    def folder_of(self, split: str) -> str:
        """The folder of ``split`` inside the source."""
        return self.splits.get(split, split)

    def misfit(self, sources: Mapping[str, str], configs: Mapping[str, list[str]], default_config: str) -> str | None:
        """What does not fit the corpus's ``sources`` (name → kind) and ``configs`` (name → splits), or None."""
        if self.source is None and len(sources) != 1:
            return f"brat.source must name the BRAT folder among the sources {sorted(sources)}"
        source = self.source or next(iter(sources))
        if sources.get(source) != "directory":
            return f"brat.source {source!r}: expected a source of kind directory among {sorted(sources)}"
        config = self.config or default_config
        if config not in configs:
            return f"brat.config {config!r} names no config (configs: {sorted(configs)})"
        unknown = sorted(set(self.splits) - set(configs[config]))
        return f"brat.splits names splits config {config!r} does not declare: {unknown}" if unknown else None
