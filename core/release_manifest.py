"""A release's ``manifest.json``, typed: what a release folder holds and says of itself, written and read here
only (as Hugging Face's ``DatasetInfo`` and TFDS's ``DatasetInfo`` are, each in one place).

A full release's manifest names its corpus, version, builder and inputs, counts its records (and, by kind, the
lines its readers read otherwise than written, :class:`ReaderChanges`) and lists every
other file of the folder with its sha256 (:class:`OutputFile`); its digest (the sha256 of the manifest's own
bytes, :func:`release_digest`) therefore pins every byte of the release. A text-free release adds its
licensed fields and source documents; a rehydration that is not byte for byte the maintainer's release
(re-anchored, or partial) says so in ``variant`` and ``rehydration``.

A manifest read here is untrusted input: :class:`ReleaseManifest` forbids every key it does not declare, and
every name, path and number in it is checked for its form (a path is relative, inside the folder, POSIX; a
version is a release version; a count is not negative) before anything else looks at it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal, Self, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from clinical_corpora.core.changes import ReleaseChanges
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.hashing import sha256_file
from clinical_corpora.core.locators import LOCATOR
from clinical_corpora.core.manifest import (
    CORPUS_NAME,
    RELEASE_VERSION,
    SAMPLE_TAG,
    SEMVER,
    GateOverlay,
    PhiAllowedField,
)
from clinical_corpora.core.reader_changes import FIRST_EXAMPLES, ReaderChange, changes_by_kind

Model = TypeVar("Model", bound=BaseModel)
MANIFEST_FILE = "manifest.json"
SHA256 = r"^[0-9a-f]{64}$"
NAME = r"^[a-z][a-z0-9_]*$"
"""A source, config or option name."""
MAX_PATH = 255
MAX_TEXT = 500
"""The longest free text a manifest holds (a gate's observed value, an option's text)."""

Sha256 = Annotated[str, Field(pattern=SHA256)]
Name = Annotated[str, Field(pattern=NAME, max_length=64)]
Count = Annotated[int, Field(ge=0, strict=True)]
"""A count: a JSON integer, never ``true`` nor ``1.0``."""
Variant = Literal["full", "text-free", "re-anchored", "partial"]


class Strict(BaseModel):
    """A record of a release file: every key declared; an optional field that is None is not written."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants")

    def json_text(self) -> str:
        """The record as its file holds it: indented JSON, fields in declaration order, None values left out."""
        return json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"

    @model_serializer(mode="wrap")
    def _without_unset_options(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        for name, field in type(self).model_fields.items():
            if (
                isinstance(data, dict)
                and not field.is_required()
                and field.default is None
                and data.get(name, 0) is None
            ):
                del data[name]
        return data


def release_path_problem(name: str) -> str | None:
    """Why ``name`` cannot be a file of a release folder (absolute, ``..``, backslashes, empty parts), or None."""
    posix = PurePosixPath(name)
    if not name or posix.is_absolute() or Path(name).is_absolute() or "\\" in name or "\x00" in name:
        return "an absolute or non-POSIX path"
    if any(part in ("", ".", "..") for part in name.split("/")):
        return "a path through '.' or '..' or with an empty part"
    return None


def _inside_release(name: str) -> str:
    problem = release_path_problem(name)
    if problem is not None:
        raise ValueError(f"{name!r} is {problem}: a release lists only files inside its folder")
    return name


ReleasePath = Annotated[str, Field(min_length=1, max_length=MAX_PATH), AfterValidator(_inside_release)]
"""The path of a file inside a release folder, relative and with no ``..`` (:func:`release_path_problem`)."""


class OutputFile(Strict):
    """A file of the release (other than manifest.json) with its sha256; a parquet file with its rows."""

    file: ReleasePath
    sha256: Sha256
    rows: Count | None = None

    @model_validator(mode="after")
    def _rows_of_parquet_only(self) -> Self:
        if (self.rows is not None) != self.file.endswith(".parquet"):
            raise ValueError(f"{self.file}: rows are given for parquet files, and only for them")
        return self


class InputSummary(Strict):
    """One source's input files, summarised (``inputs.jsonl`` lists each)."""

    sample: bool
    files: Count
    bytes: Count
    sha256: Sha256


class Counts(Strict):
    """Records read, written (rows of every config), rejected, and annotations rejected."""

    read: Count
    written: Count
    rejected: Count
    rejected_annotations: Count


class ReaderChanges(Strict):
    """The lines of one kind the readers read otherwise than written: how many, and the first few
    (``reader-changes.jsonl`` lists each)."""

    count: Count
    first: list[Annotated[str, Field(max_length=MAX_TEXT)]] = Field(max_length=FIRST_EXAMPLES)


def reader_changes_summary(changes: list[ReaderChange]) -> dict[str, ReaderChanges] | None:
    """The readers' changes counted by kind, with the first few of each (None when there is none)."""
    return {
        kind: ReaderChanges(count=len(made), first=[cut_text(str(change)) for change in made[:FIRST_EXAMPLES]])
        for kind, made in changes_by_kind(changes).items()
    } or None


def cut_text(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Overrides(Strict):
    max_rejects: Count


class GateOverlayRecord(Strict):
    """A ``--gates FILE`` a release was built with: its file name and sha256, the overlay as read, and the
    changes it made to corpus.yaml's gates (``clincorp validate`` recomputes them from the overlay)."""

    file: str = Field(pattern=r"^[\w.-]{1,128}$")
    sha256: Sha256
    overlay: GateOverlay
    changes: list[Annotated[str, Field(max_length=MAX_TEXT)]]


class LeakObserved(Strict):
    """What the leak gate observed."""

    longest_shared_run: Count
    measured_from: Count
    limit: Count
    document: str | None = Field(default=None, pattern=f"^{LOCATOR}$")
    offset: Count | None = None


Observed = Annotated[str, Field(max_length=MAX_TEXT)] | int | float | LeakObserved | None
"""A gate's observed value: a count, a measure, a line of text, the leak gate's runs, or none."""
Status = Literal["pass", "fail", "skipped", "warning"]
GateName = Annotated[str, Field(pattern=r"^[a-z_]+(?:\.[a-z0-9_]+)?$", max_length=64)]


class GateVerdict(Strict):
    """A gate as manifest.json records it."""

    gate: GateName
    status: Status
    observed: Observed = None


class Rehydration(Strict):
    """What a rehydration that is not the maintainer's release did: the licensed strings per class (exact,
    relocated, replaced, lost, in records left out), the records left out, and whose release it restores."""

    mode: Literal["re-anchored", "partial"]
    strings: dict[Literal["exact", "relocated", "replaced", "lost", "left_out"], Count] = Field(default_factory=dict)
    records_left_out: Count
    left_out: dict[Name, Count] = Field(default_factory=dict, description="records left out, per config")
    documents_re_anchored: Count = 0
    documents_unusable: Count = 0
    maintainer_manifest_sha256: Sha256
    text_free_package_version: str = Field(pattern=r"^[0-9][0-9A-Za-z.+!-]{0,63}$")
    report: Literal["re-anchored.jsonl", "rehydrate-rejects.jsonl"]


class PhiReviewed(Strict):
    """A PHI finding a maintainer reviewed and let through (``clincorp release --phi-allow FILE``): its place,
    category and short hash as the PHI report gives them, and why; never its text."""

    file: ReleasePath
    field: str = Field(max_length=MAX_PATH)
    category: str = Field(pattern=r"^[a-z_]{1,32}$")
    hash: str = Field(pattern=r"^[0-9a-f]{12}$")
    reason: str = Field(min_length=1, max_length=MAX_TEXT)


class PhiAllowances(Strict):
    """What the PHI gate of a release let through: the corpus's allowed fields (corpus.yaml ``gates:
    phi_allowed``) and the reviewed findings it met, each with its reason."""

    allowed_fields: list[PhiAllowedField] = Field(default_factory=list)
    reviewed: list[PhiReviewed] = Field(default_factory=list)


OptionValue = bool | int | float | Annotated[str, Field(max_length=MAX_TEXT)]


class ReleaseManifest(Strict):
    """The contents of a release's manifest.json. Fields are in the order they are written; those that are
    None are left out (a full release has no ``variant``)."""

    corpus: str = Field(pattern=CORPUS_NAME, max_length=64)
    version: str = Field(pattern=RELEASE_VERSION, max_length=64)
    variant: Literal["text-free", "re-anchored", "partial"] | None = None
    release: bool = Field(description="false in a clincorp build folder (the only kind build replaces)")
    builder: str = Field(pattern=r"^[\w.]+:\w+$", max_length=200)
    builder_version: str = Field(pattern=SEMVER, max_length=64)
    package_version: str = Field(pattern=r"^[0-9][0-9A-Za-z.+!-]{0,63}$")
    sample: bool
    inputs: dict[Name, InputSummary] | None = None
    overrides: Overrides | None = None
    gate_overlay: GateOverlayRecord | None = None
    options: dict[Name, OptionValue] | None = None
    changes: ReleaseChanges | None = None
    counts: Counts | None = None
    reader_changes: dict[Name, ReaderChanges] | None = None
    schema_fingerprint: Sha256
    full_schema_fingerprint: Sha256 | None = None
    licensed_fields: dict[Name, list[Annotated[str, Field(max_length=MAX_PATH)]]] | None = None
    documents: dict[Name, Count] | None = None
    outputs: list[OutputFile] = Field(min_length=1)
    gates: list[GateVerdict]
    phi: PhiAllowances | None = None
    rehydration: Rehydration | None = None

    @property
    def kind(self) -> Variant:
        """``full`` (no variant written), ``text-free``, ``re-anchored`` or ``partial``."""
        return self.variant or "full"

    @property
    def text_free(self) -> bool:
        return self.variant == "text-free"

    def shard_hashes(self) -> dict[str, str]:
        """Each data shard the manifest lists, with its sha256."""
        return {entry.file: entry.sha256 for entry in self.outputs if entry.file.startswith("data/")}

    def output(self, name: str) -> OutputFile | None:
        return next((entry for entry in self.outputs if entry.file == name), None)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.version.endswith(SAMPLE_TAG) != self.sample:
            raise ValueError(f"version {self.version!r} and sample {self.sample} disagree")
        names = [entry.file for entry in self.outputs]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated or MANIFEST_FILE in names:
            raise ValueError(f"outputs list {(repeated or [MANIFEST_FILE])[0]!r} twice or list the manifest itself")
        text_free = (self.full_schema_fingerprint, self.licensed_fields, self.documents)
        if self.text_free != all(value is not None for value in text_free):
            raise ValueError(
                "a text-free release (and only one) has full_schema_fingerprint, licensed_fields, documents"
            )
        if self.text_free == (self.counts is not None and self.inputs is not None):
            raise ValueError("a full release (and only one) has counts and inputs")
        rehydrated = self.variant in ("re-anchored", "partial")
        mode = self.rehydration.mode if self.rehydration is not None else None
        if rehydrated != (mode is not None) or (rehydrated and mode != self.variant):
            raise ValueError("a re-anchored or partial rehydration (and only one) has a rehydration of its kind")
        return self


def option_text(value: object) -> str:
    """An option's value as ``--option`` takes it (``true``, ``2018``, ``0.25``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def write_manifest(folder: Path, manifest: ReleaseManifest) -> None:
    """Write ``folder/manifest.json`` (last: it holds the sha256 of every other file)."""
    (folder / MANIFEST_FILE).write_text(manifest.json_text(), encoding="utf-8")


def read_manifest(folder: Path, label: str | None = None) -> ReleaseManifest:
    """``folder/manifest.json`` read and checked; a ClincorpError naming it (``label``, else its path) and the
    first problem when it is missing, not a regular file, not JSON, or not a release manifest."""
    path = folder / MANIFEST_FILE
    where = label or str(path)
    if path.is_symlink() or not path.is_file():
        what = "a symbolic link" if path.is_symlink() else "missing or not a regular file"
        raise ClincorpError(f"{folder} is not a release: its {MANIFEST_FILE} is {what}")
    return read_typed_file(path, ReleaseManifest, where, "a release manifest")


def read_typed_file(path: Path, model: type[Model], where: str, what: str) -> Model:
    """A JSON file as ``model``; a ClincorpError naming ``where`` when it cannot be read or is not ``what``."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ClincorpError(f"{where}: cannot be read ({error.strerror or error})") from None
    return read_typed(data, model, where, what)


def read_typed(data: bytes | str, model: type[Model], where: str, what: str) -> Model:
    """JSON ``data`` as ``model``; a ClincorpError naming ``where``, ``what`` it should be and the first problem
    otherwise (nested too deeply included)."""
    try:
        repeated = _repeated_key(data)
        if repeated is not None:
            raise ClincorpError(f"{where}: not {what}: key {repeated!r} given twice in one object")
        return model.model_validate_json(data)
    except ValidationError as error:
        raise ClincorpError(f"{where}: not {what}: {first_problem(error)}") from None
    except RecursionError:
        raise ClincorpError(f"{where}: not {what} (nested too deeply)") from None


def _repeated_key(data: bytes | str) -> str | None:
    """The first key given twice in one object of the JSON ``data`` (which two readers could read as two
    different records), or None; None too when ``data`` is no JSON (pydantic then says where it breaks)."""
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        record = dict(items)
        if len(record) < len(items):
            repeated.extend(key for key, count in Counter(key for key, _ in items).items() if count > 1)
        return record

    try:
        json.loads(data, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return None
    return repeated[0] if repeated else None


def release_digest(folder: Path) -> str:
    """A release's digest: the sha256 of its manifest.json, which holds the sha256 of every other file
    (``clincorp release`` prints it; ``clincorp validate --expect-digest`` pins a release by it)."""
    return sha256_file(folder / MANIFEST_FILE, regular_only=True)


def first_problem(error: ValidationError) -> str:
    """The first problem pydantic found, with where (``outputs[2].file: ...``), and how many more."""
    first = error.errors()[0]
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"]).lstrip(".")
    more = f" (and {error.error_count() - 1} more problems)" if error.error_count() > 1 else ""
    message = first["msg"].removeprefix("Value error, ")
    return f"{where + ': ' if where else ''}{message}{more}"
