"""Corpus manifests (``corpora/<name>/corpus.yaml``): what a corpus is, validated by pydantic."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from clinical_corpora.core.brat_declaration import BratDeclaration
from clinical_corpora.core.errors import SourceError

SEMVER = r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$"
MANIFEST_NAME = "corpus.yaml"
SAMPLE_TAG = "+sample"
CORPUS_NAME = r"^[a-z][a-z0-9_]*$"
RELEASE_VERSION = SEMVER.removesuffix("$") + "(?:" + re.escape(SAMPLE_TAG) + ")?$"
"""A release's version (and folder name): the corpus version, ``+sample`` for a sample release."""
"""The build tag of a release made from any invented sample input: ``1.1.0+sample``, never ``1.1.0``."""

YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML was built with it (~11x faster on the corpus manifests), else PyYAML's own:
both load a manifest or gate overlay to the same values (tests/test_gates.py checks every corpus.yaml)."""


def load_yaml(text: str) -> Any:
    """The value of a YAML document, read with :data:`YAML_LOADER`."""
    return yaml.load(text, Loader=YAML_LOADER)


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
    default: bool = Field(
        default=False, description="the config `datasets.load_dataset(release)` loads when none is named"
    )


GatedFieldType = Literal["text", "checkbox", "date_picker", "country"]


class GatedSelect(Strict):
    """A drop-down field of a Hugging Face access-request form."""

    type: Literal["select"]
    options: list[str] = Field(min_length=1)


class Gating(Strict):
    """The Hugging Face access-request form of a repository holding a full release (``extra_gated_*``)."""

    prompt: str = Field(description="extra_gated_prompt: what the requester agrees to (Markdown)")
    fields: dict[str, GatedFieldType | GatedSelect] = Field(
        min_length=1, description="extra_gated_fields: label → text, checkbox, date_picker, country or a select"
    )
    button_content: str | None = Field(default=None, description="extra_gated_button_content")


class Sharing(Strict):
    """Which variant of a release may be passed on, and under which terms."""

    full_release: bool = Field(description="whether a full release (with the licensed text) may be redistributed")
    terms: str = Field(description="the agreements that bind whoever holds the data, and what they forbid")
    personal_information: str = Field(
        description="what personal or sensitive information the text holds (de-identified notes, case details)"
    )


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

    @property
    def key(self) -> tuple[str, str, tuple[str, ...]]:
        """What names an expectation in a gate overlay: its table, expectation and columns."""
        return (self.table, self.expectation, tuple(self.columns))

    def describe(self) -> str:
        columns = f" ({', '.join(self.columns)})" if self.columns else ""
        return f"{self.table}: {self.expectation}{columns}"


class Threshold(Strict):
    """Bounds an agreement measure must stay within; a required gate fails when it cannot run."""

    min: float | None = None
    max: float | None = None
    required: bool = Field(
        default=False, description="fail the release when the gate is skipped (e.g. no annotator data)"
    )


class PhiAllowedField(Strict):
    """A field of a config expected to hold strings the PHI gate would report (a report's date, say), and why
    that is no protected health information; its strings are counted as allowed, not as findings."""

    config: str = Field(pattern=CORPUS_NAME, max_length=64)
    field: str = Field(min_length=1, max_length=255, description="the field path the PHI gate names: notes[].date")
    reason: str = Field(min_length=1, max_length=500)


class Gates(Strict):
    max_rejects: int = Field(default=0, ge=0)
    phi_allowed: list[PhiAllowedField] = Field(default_factory=list)
    expectations: list[Expectation] = Field(default_factory=list)
    agreement: dict[str, Threshold] = Field(default_factory=dict)


DeviationKind = Literal["reading_choice", "erratum", "other_release"]
"""Why a recomputed number may differ from the paper's: a documented reading choice of ours, a known erratum of
the paper, or a different release of the source than the paper's."""


class KnownDeviation(Strict):
    """Why a real release's recomputed value may differ from a published number."""

    kind: DeviationKind
    reason: str = Field(min_length=1, description="what differs and why, for the card and clincorp validate")


class PublishedScope(Strict):
    """Which release of the data a published number describes: in words, and the splits and note sources a
    release must hold (no more, no fewer) for the number to be compared with it."""

    release: str = Field(min_length=1, description="the release in words, as the card prints it")
    splits: list[str] | Literal["any"] = Field(
        description="the splits of the default config the release holds rows in; `any` for a number not of a "
        "split layout (annotator agreement measured on whatever the annotator data holds)"
    )
    note_sources: list[str] | None = Field(
        default=None, description="where its notes come from (SHAC's mimic and uw), for a corpus whose rows say"
    )


class PublishedNotRead(Strict):
    """Numbers a paper publishes about the data that corpus.yaml does not hold, because we could not read them."""

    what: str = Field(min_length=1, description="which numbers (e.g. notes and events per source and split)")
    source: str = Field(min_length=1, description="where they are published: authors, year, journal, table")
    why: str = Field(min_length=1, description="why they are not in corpus.yaml")


class PublishedNumber(Strict):
    """A number the corpus's paper publishes about its data, compared with what a real release recomputes."""

    key: str = Field(
        pattern=r"^\S+( \S+)*$",
        description="the statistic's stable key, as the corpus's statistics name it (agreement.<measure>: agreement)",
    )
    value: float
    source: str = Field(min_length=1, description="where it is published: authors, year, table or section")
    applies_to: PublishedScope = Field(description="which release of the data the number describes")
    tolerance: float = Field(default=0.0, ge=0, description="largest absolute difference that still matches")
    requires_sources: list[str] = Field(
        default_factory=list, description="compared only when these sources were given (e.g. the test annotations)"
    )
    excludes_sources: list[str] = Field(
        default_factory=list, description="not compared when one of these sources was given (another release)"
    )
    deviation: KnownDeviation | None = Field(
        default=None, description="why a real release may deviate; a deviation without one is a warning"
    )


class ResponsibleAI(Strict):
    """What croissant.json says in the Croissant Responsible AI vocabulary (``rai:``), besides what the rest of
    corpus.yaml says (sharing.personal_information, access)."""

    data_collection: str = Field(description="how the texts were collected (rai:dataCollection)")
    annotation_protocol: str = Field(description="who annotated what, and how (rai:dataAnnotationProtocol)")
    biases: str = Field(description="known biases of the texts and annotations (rai:dataBiases)")
    limitations: str = Field(description="what the data does not support (rai:dataLimitations)")
    use_cases: str = Field(description="what the data is meant for, and not (rai:dataUseCases)")


class CorpusManifest(Strict):
    """The contents of a corpus.yaml."""

    name: str = Field(pattern=CORPUS_NAME)
    version: str = Field(pattern=SEMVER)
    pretty_name: str
    description: str
    license: str = Field(description="a Hugging Face licence id, or `other` with license_name and license_link")
    license_name: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9.-]*$")
    license_link: str | None = None
    access: Access
    sharing: Sharing | None = Field(default=None, description="required for restricted corpora")
    gating: Gating | None = None
    citation: str
    data_citations: list[str] = Field(
        default_factory=list, description="BibTeX of the data sources whose licences require a citation"
    )
    homepage: str
    builder: str = Field(pattern=r"^[\w.]+:\w+$", description="module:Class")
    sources: dict[str, SourceSpec]
    configs: dict[str, ConfigSpec] = Field(min_length=1)
    task_categories: list[str] = Field(default_factory=list)
    task_ids: list[str] = Field(default_factory=list, description="the Hub's task ids (within task_categories)")
    annotations_creators: list[str] = Field(
        default_factory=list, description="the Hub's values: expert-generated, machine-generated, found..."
    )
    source_datasets: list[str] = Field(default_factory=lambda: ["original"])
    language: list[str] = Field(default_factory=lambda: ["en"], description="ISO 639 codes of the texts")
    date_published: str | None = Field(
        default=None, pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$", description="when the corpus was first published"
    )
    tags: list[str] = Field(default_factory=list)
    responsible_ai: ResponsibleAI | None = Field(default=None, description="croissant.json's rai: fields")
    brat: BratDeclaration | None = Field(
        default=None, description="the label sets and split folders of a corpus the generic BRAT builder builds"
    )
    gates: Gates = Field(default_factory=Gates)
    published: list[PublishedNumber] = Field(
        default_factory=list, description="the papers' own numbers about the data, compared in every real release"
    )
    published_not_read: list[PublishedNotRead] = Field(
        default_factory=list, description="the papers' numbers about the data we could not read, said on the card"
    )
    folder: Path = Field(default=Path("."), exclude=True)

    @property
    def sample_version(self) -> str:
        """The version (and release folder) of a release built from the embedded, invented samples."""
        return f"{self.version}{SAMPLE_TAG}"

    @property
    def default_config(self) -> str:
        """The config marked ``default``, else the first."""
        return next((name for name, spec in self.configs.items() if spec.default), next(iter(self.configs)))

    @property
    def full_release_shareable(self) -> bool:
        return self.sharing.full_release if self.sharing is not None else self.access.public

    @model_validator(mode="after")
    def _licence_is_complete(self) -> CorpusManifest:
        if self.license == "other" and not (self.license_name and self.license_link):
            raise ValueError("license: other needs license_name and license_link")
        if not self.access.public and self.sharing is None:
            raise ValueError("a restricted corpus (access.public: false) needs a sharing: section")
        defaults = [name for name, spec in self.configs.items() if spec.default]
        if len(defaults) > 1:
            raise ValueError(f"only one config may be the default, not {defaults}")
        return self

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
    def _published_numbers_are_consistent(self) -> CorpusManifest:
        keys = [number.key for number in self.published]
        repeated = sorted({key for key in keys if keys.count(key) > 1})
        if repeated:
            raise ValueError(f"published: keys given twice: {repeated}")
        splits = self.configs[self.default_config].splits
        for number in self.published:
            unknown = set(number.requires_sources + number.excludes_sources) - set(self.sources)
            if unknown:
                raise ValueError(f"published number {number.key!r} names unknown sources {sorted(unknown)}")
            scope = number.applies_to.splits
            if scope != "any" and not set(scope) <= set(splits):
                raise ValueError(
                    f"published number {number.key!r}: applies_to.splits {scope} names splits the default config "
                    f"{self.default_config!r} does not declare (it declares {splits})"
                )
        return self

    @model_validator(mode="after")
    def _brat_declaration_fits(self) -> CorpusManifest:
        if self.brat is not None:
            sources = {name: spec.kind for name, spec in self.sources.items()}
            configs = {name: spec.splits for name, spec in self.configs.items()}
            misfit = self.brat.misfit(sources, configs, self.default_config)
            if misfit is not None:
                raise ValueError(misfit)
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
        raw = load_yaml(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise SourceError(path, f"cannot read the corpus manifest: not UTF-8 text (byte {error.start})") from None
    except (OSError, yaml.YAMLError) as error:
        raise SourceError(path, f"cannot read the corpus manifest: {error}") from error
    try:
        return CorpusManifest.model_validate({**(raw or {}), "folder": path.parent})
    except ValidationError as error:
        raise SourceError(path, f"not a valid corpus manifest:\n{_published_entries(error, raw)}{error}") from error


def _published_entries(error: ValidationError, raw: Any) -> str:
    """One line per ``published:`` entry the error is about, naming it by its key (pydantic names its index)."""
    entries = raw.get("published") if isinstance(raw, dict) else None
    lines = []
    for problem in error.errors():
        location = problem["loc"]
        if len(location) > 1 and location[0] == "published" and isinstance(location[1], int) and entries:
            entry = entries[location[1]] if location[1] < len(entries) else None
            key = entry.get("key") if isinstance(entry, dict) else None
            field = ".".join(map(str, location[2:])) or "entry"
            lines.append(f"published number {key!r} (entry {location[1] + 1}): {field}: {problem['msg']}\n")
    return "".join(dict.fromkeys(lines))


class ThresholdOverlay(Strict):
    """New values for an agreement gate's bounds or required flag (unset fields stay as they are)."""

    min: float | None = None
    max: float | None = None
    required: bool | None = None


class GateOverlay(Strict):
    """A ``--gates FILE``: corpus.yaml's ``gates:`` section changed for one release, without editing it.

    ``max_rejects`` replaces the limit; ``agreement`` entries change the named thresholds; each
    ``expectations`` entry names an expectation of corpus.yaml by table, expectation and columns, and its
    other keys (``mostly``, ``min_value``, ``value_set``...) replace or add that expectation's arguments
    (in every expectation it names, when several share table, expectation and columns).
    """

    max_rejects: int | None = Field(default=None, ge=0)
    agreement: dict[str, ThresholdOverlay] = Field(default_factory=dict)
    expectations: list[Expectation] = Field(default_factory=list)


def load_gate_overlay(path: Path) -> GateOverlay:
    """Read and validate a ``--gates`` file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SourceError(path, f"cannot read the gate overlay: {error}") from error
    return parse_gate_overlay(text, path)


def parse_gate_overlay(text: str, path: Path) -> GateOverlay:
    """Validate the text of a ``--gates`` file (``path`` names it in errors)."""
    try:
        raw = load_yaml(text)
    except yaml.YAMLError as error:
        raise SourceError(path, f"cannot read the gate overlay: {error}") from error
    if isinstance(raw, dict) and set(raw) == {"gates"}:
        raw = raw["gates"]  # a copy of corpus.yaml's section, key included
    try:
        return GateOverlay.model_validate(raw or {})
    except ValidationError as error:
        raise SourceError(
            path, f"not a gate overlay (max_rejects, agreement, expectations as in corpus.yaml's gates:):\n{error}"
        ) from error


def apply_gate_overlay(manifest: CorpusManifest, overlay: GateOverlay, path: Path) -> tuple[CorpusManifest, list[str]]:
    """The manifest with the overlay's gates, and one line per change (``max_rejects: 0 -> 5``).

    Raises SourceError (naming ``path``) when the overlay names a threshold or expectation corpus.yaml lacks.
    """
    gates = manifest.gates.model_copy(deep=True)
    changes: list[str] = []
    if overlay.max_rejects is not None and overlay.max_rejects != gates.max_rejects:
        changes.append(f"max_rejects: {gates.max_rejects} -> {overlay.max_rejects}")
        gates.max_rejects = overlay.max_rejects
    for name, change in overlay.agreement.items():
        if name not in gates.agreement:
            known = ", ".join(sorted(gates.agreement)) or "none"
            raise SourceError(
                path, f"agreement gate {name!r} is not in {manifest.name}'s corpus.yaml (it has: {known})"
            )
        threshold = gates.agreement[name]
        for setting, value in change.model_dump(exclude_unset=True).items():
            if getattr(threshold, setting) != value:
                changes.append(f"agreement.{name} {setting}: {getattr(threshold, setting)} -> {value}")
                setattr(threshold, setting, value)
    for entry, wanted in enumerate(overlay.expectations, start=1):
        matches = [index for index, e in enumerate(gates.expectations) if e.key == wanted.key]
        if not matches:
            raise SourceError(
                path,
                f"expectation {entry} ({wanted.describe()}) matches no expectation of {manifest.name}'s "
                "corpus.yaml: name it by its table, expectation and column(s)",
            )
        for index in matches:
            current = gates.expectations[index]
            kwargs = {**current.kwargs, **wanted.kwargs}
            changed = {key: value for key, value in wanted.kwargs.items() if current.kwargs.get(key) != value}
            if changed:
                before = {key: current.kwargs.get(key) for key in changed}
                changes.append(f"{current.describe()}: {before} -> {changed}")
            gates.expectations[index] = Expectation.model_validate(
                {"table": current.table, "expectation": current.expectation, **kwargs}
            )
    return manifest.model_copy(update={"gates": gates}), changes
