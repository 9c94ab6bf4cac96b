"""The one door into a release folder someone gave us: ``validate``, ``view``, ``diff``, ``rehydrate``,
``export``, every ``score`` command and ``release --previous`` open a release here, and nowhere else.

A release is untrusted input once it left the machine that built it. Before a command reads anything of it:

- the folder holds only folders and regular files (no symbolic link, pipe, socket or device anywhere in it);
- ``manifest.json`` is a release manifest (``core/release_manifest.py``: every key declared, every name,
  path, version and count of its form);
- every file the manifest lists is there and every file there is listed, and each is a file a release of its
  variant holds (:data:`LAYOUT`): a data shard ``data/<config>/<split>-NNNNN-of-NNNNN.parquet``, a description
  the package writes (card, figures, croissant.json), the typed JSON files, and nothing else;
- with :attr:`Trust.CHECKED`, every file has the sha256 its manifest lists before anything is read; with
  :attr:`Trust.DEFERRED` (``clincorp diff``, which reads while hashing), the hashes are checked beside the
  caller's reading and :meth:`OpenedRelease.confirm` raises before anything read is reported;
- every parquet file opens, and holds the rows its manifest lists (a damaged file is an error naming it);
- the corpus is an installed one, named by the manifest (never a path, never imported from the release).

:func:`inspect_release` gives every problem found (``clincorp validate``'s files gate lists them);
:func:`open_release` refuses a release with any, naming the first ones.
"""

from __future__ import annotations

import os
import re
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from pathlib import Path
from threading import Thread

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features
from pydantic import BaseModel

from clinical_corpora.builders.contract.base import Builder, make_builder
from clinical_corpora.builders.contract.release_view import SHARD_PATTERN, ReleaseView, parquet_file
from clinical_corpora.builders.plugins import find_corpus, installed_corpus
from clinical_corpora.builders.release.inputs_file import read_inputs_file
from clinical_corpora.builders.release.shard_values import shard_value_problems
from clinical_corpora.core.errors import ClincorpError, SourceError, error_line
from clinical_corpora.core.file_limits import MAX_FILE_BYTES
from clinical_corpora.core.hashing import regular_file_sha256
from clinical_corpora.core.manifest import CorpusManifest, apply_gate_overlay
from clinical_corpora.core.release_manifest import (
    MANIFEST_FILE,
    ReleaseManifest,
    Variant,
    read_manifest,
    release_digest,
)
from clinical_corpora.core.release_records import (
    ANCHORS_FILE,
    FULL_FOLDER,
    FULL_JSON_FILES,
    INPUTS_FILE,
    READER_CHANGES_FILE,
    REANCHORED_FILE,
    REHYDRATE_REJECTS_FILE,
    REJECTS_FILE,
    VALIDATION_FILE,
    ReaderChangeLine,
    ReanchoredLine,
    RehydrateReject,
    RejectLine,
    ValidationRecord,
    read_json_lines,
    read_validation,
)
from clinical_corpora.schemas.features import features_for
from clinical_corpora.schemas.licensed import licensed_tree, text_free_features

SHOWN = 3
"""Problems an error names before pointing to ``clincorp validate``."""
FIGURE = re.compile(r"figures/[a-z0-9]+(?:-[a-z0-9]+)*\.png")
DESCRIBED = ("README.md", "croissant.json")
"""The card and croissant.json: what every release describes itself with (a full one with figures too)."""
RELEASE_FILES = (*DESCRIBED, *FULL_JSON_FILES)
LAYOUT: dict[Variant, tuple[str, ...]] = {
    "full": RELEASE_FILES,
    "text-free": (
        *DESCRIBED,
        VALIDATION_FILE,
        ANCHORS_FILE,
        *(f"{FULL_FOLDER}/{name}" for name in (MANIFEST_FILE, *FULL_JSON_FILES)),
    ),
    "re-anchored": (*RELEASE_FILES, REANCHORED_FILE),
    "partial": (*RELEASE_FILES, REHYDRATE_REJECTS_FILE),
}
"""The files other than data shards a release of each variant may hold (and a full release its figures)."""


class Trust(Enum):
    """How much of a release is checked before the caller reads it."""

    CHECKED = "every file against its sha256 before anything is read"
    DEFERRED = "what needs no file read now; the files' sha256 beside the caller's reading, until confirm()"


@dataclass
class Inspection:
    """What :func:`inspect_release` found: the manifest (None when it is not one) and every problem."""

    folder: Path
    manifest: ReleaseManifest | None
    problems: list[str] = field(default_factory=list)


def inspect_release(folder: Path, contents: bool = True) -> Inspection:
    """Every problem of ``folder`` as a release (see the module docstring); without ``contents`` only what needs
    no file read but manifest.json's (the files' sha256, parquet footers and typed JSON are checked with it). A
    ClincorpError only when the folder is not a release at all (no manifest.json)."""
    if not folder.is_dir():
        raise ClincorpError(
            f"{folder} is not a release folder: {'no such folder' if not folder.exists() else 'a file'}"
        )
    files, problems = _walk(folder)
    if MANIFEST_FILE not in files and not (folder / MANIFEST_FILE).is_symlink():
        raise ClincorpError(f"{folder} is not a release: it has no {MANIFEST_FILE}")
    try:
        if (folder / MANIFEST_FILE).lstat().st_size > MAX_FILE_BYTES:
            raise ClincorpError(f"{MANIFEST_FILE}: more than {MAX_FILE_BYTES:,} bytes, not a release manifest")
        manifest = read_manifest(folder, MANIFEST_FILE)
    except ClincorpError as error:
        return Inspection(folder, None, [*problems, str(error)])
    inspection = Inspection(folder, manifest, problems)
    inspection.problems += _listing_problems(manifest, files)
    oversized = _oversized(folder, manifest, files)
    inspection.problems += oversized
    if not contents:  # nothing but manifest.json is read before its files' sha256 are confirmed
        return inspection
    files -= {problem.partition(":")[0] for problem in oversized}  # never hashed nor read
    differing = differing_files(folder, manifest, files)
    inspection.problems += [_differs(name) for name in differing]
    readable = files - set(differing)  # a file that differs is not read
    inspection.problems += _parquet_problems(folder, manifest, readable)
    if not inspection.problems:
        inspection.problems += typed_problems(folder, manifest)
    return inspection


def _walk(folder: Path) -> tuple[set[str], list[str]]:
    """The regular files under ``folder`` (relative names) and what else is there (links, pipes...), never
    following a link nor opening anything."""
    files: set[str] = set()
    problems: list[str] = []
    pending = [(folder, "")]
    while pending:
        directory, prefix = pending.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError as error:
            problems.append(f"{prefix or '.'}: cannot be listed ({error.strerror or error})")
            continue
        for entry in entries:
            name = f"{prefix}{entry.name}"
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode):
                problems.append(f"{name}: a symbolic link (a release holds only regular files and folders)")
            elif stat.S_ISDIR(mode):
                pending.append((Path(entry.path), f"{name}/"))
            elif stat.S_ISREG(mode):
                files.add(name)
            else:
                problems.append(f"{name}: not a regular file (a pipe, socket or device)")
    return files, problems


def _listing_problems(manifest: ReleaseManifest, files: set[str]) -> list[str]:
    listed = {entry.file for entry in manifest.outputs}
    present = files - {MANIFEST_FILE}
    problems = [f"{name}: listed in manifest.json but missing" for name in sorted(listed - present)]
    problems += [f"{name}: not listed in manifest.json" for name in sorted(present - listed)]
    problems += [
        f"{name}: not a file a {manifest.kind} release holds (data shards, its card and figures, croissant.json, "
        "and the JSON files its manifest types)"
        for name in sorted(listed)
        if not _belongs(name, manifest.kind)
    ]
    return problems


def _oversized(folder: Path, manifest: ReleaseManifest, files: set[str]) -> list[str]:
    """Each listed file other than a parquet file (read whole: a card, a figure, a JSON file) over
    :data:`MAX_FILE_BYTES`, found by its size alone (nothing is hashed or read)."""
    sizes = {
        entry.file: (folder / entry.file).lstat().st_size
        for entry in manifest.outputs
        if entry.file in files and entry.rows is None
    }
    return [
        f"{name}: {size:,} bytes, more than any such file of a release holds (at most {MAX_FILE_BYTES:,})"
        for name, size in sorted(sizes.items())
        if size > MAX_FILE_BYTES
    ]


def _belongs(name: str, variant: Variant) -> bool:
    """Whether a release of ``variant`` may hold a file ``name``."""
    parts = name.split("/")
    if parts[0] == "data":
        return (
            len(parts) == 3
            and re.fullmatch(r"[a-z][a-z0-9_]*", parts[1]) is not None
            and bool(SHARD_PATTERN.match(parts[2]))
        )
    return name in LAYOUT[variant] or (variant != "text-free" and FIGURE.fullmatch(name) is not None)


def differing_files(folder: Path, manifest: ReleaseManifest, present: set[str] | None = None) -> list[str]:
    """Each file ``manifest`` lists (of those ``present``) that is not a regular file with its sha256 (hashed on
    two threads: hashlib leaves Python's lock while it works)."""
    entries = [entry for entry in manifest.outputs if present is None or entry.file in present]
    with ThreadPoolExecutor(max_workers=2) as pool:
        digests = list(pool.map(lambda entry: regular_file_sha256(folder / entry.file), entries))
    return [entry.file for entry, digest in zip(entries, digests, strict=True) if digest != entry.sha256]


def _differs(name: str) -> str:
    return f"{name}: sha256 differs from manifest.json"


def _parquet_problems(folder: Path, manifest: ReleaseManifest, present: set[str]) -> list[str]:
    """Each listed parquet file that does not open, or holds other rows than its manifest lists."""
    problems = []
    for entry in manifest.outputs:
        if entry.rows is None or entry.file not in present:
            continue
        try:
            rows = pq.ParquetFile(folder / entry.file).metadata.num_rows
        except (OSError, pa.ArrowException) as error:
            problems.append(f"{entry.file}: not a readable parquet file ({error_line(error)})")
            continue
        if rows != entry.rows:
            problems.append(f"{entry.file}: manifest.json says {entry.rows} rows, the parquet holds {rows}")
    return problems


TYPED_LINES: dict[str, type[BaseModel]] = {
    REJECTS_FILE: RejectLine,
    f"{FULL_FOLDER}/{REJECTS_FILE}": RejectLine,
    READER_CHANGES_FILE: ReaderChangeLine,
    f"{FULL_FOLDER}/{READER_CHANGES_FILE}": ReaderChangeLine,
    REHYDRATE_REJECTS_FILE: RehydrateReject,
    REANCHORED_FILE: ReanchoredLine,
}
"""The JSON Lines files a release may hold, and what each line is."""


def typed_problems(folder: Path, manifest: ReleaseManifest) -> list[str]:
    """Each JSON file of the release that is not what its name says: validation.json a validation record, a
    text-free release's full/manifest.json and full/validation.json the full release's, every JSON Lines file
    one typed entry a line, inputs.jsonl the input files."""
    problems = []
    for name in _typed_files(manifest):
        try:
            _read_typed(folder, name)
        except ClincorpError as error:
            problems.append(str(error))
    return problems


def _typed_files(manifest: ReleaseManifest) -> list[str]:
    names = [VALIDATION_FILE]
    if manifest.text_free:
        names += [f"{FULL_FOLDER}/{MANIFEST_FILE}", f"{FULL_FOLDER}/{VALIDATION_FILE}"]
    listed = [*TYPED_LINES, INPUTS_FILE, f"{FULL_FOLDER}/{INPUTS_FILE}"]
    return names + [name for name in listed if manifest.output(name) is not None]


def _read_typed(folder: Path, name: str) -> None:
    """Read the JSON file ``name`` of a release as what it is; a ClincorpError naming it otherwise."""
    if name.endswith("manifest.json"):
        read_manifest((folder / name).parent, name)
    elif name.endswith("validation.json"):
        read_validation((folder / name).parent, name)
    elif name in TYPED_LINES:
        read_json_lines(folder / name, TYPED_LINES[name], name)
    else:
        _inputs(folder / name, name)


def _inputs(path: Path, name: str) -> None:
    try:
        read_inputs_file(path)
    except (OSError, ValueError, pa.ArrowException) as error:
        raise ClincorpError(
            f"{name}: not one JSON object with source, file, sha256 and bytes a line ({error})"
        ) from None


class HashCheck:
    """Every file of a release against its sha256, in a thread of its own, beside the caller's reading."""

    def __init__(self, folder: Path, manifest: ReleaseManifest) -> None:
        self._problems: list[str] = []
        self._thread = Thread(target=self._run, args=(folder, manifest), name="clincorp-file-check", daemon=True)
        self._thread.start()

    def _run(self, folder: Path, manifest: ReleaseManifest) -> None:
        self._problems += [_differs(name) for name in differing_files(folder, manifest)]

    def problems(self) -> list[str]:
        self._thread.join()
        return self._problems


@dataclass
class OpenedRelease:
    """A release folder that passed the door: its typed manifest, its installed corpus, its data."""

    folder: Path
    manifest: ReleaseManifest
    corpus: CorpusManifest
    digest: str
    checking: HashCheck | None = None

    @cached_property
    def view(self) -> ReleaseView:
        return ReleaseView(self.folder)

    @property
    def variant(self) -> Variant:
        return self.manifest.kind

    @property
    def text_free(self) -> bool:
        return self.manifest.text_free

    @property
    def version(self) -> str:
        return self.manifest.version

    @cached_property
    def builder(self) -> Builder:
        """The installed corpus's builder, with the options the release was built with."""
        return make_builder(self.corpus, self.manifest.options)

    @cached_property
    def validation(self) -> ValidationRecord:
        """validation.json, typed."""
        return read_validation(self.folder, f"{self.folder.name}/validation.json")

    @cached_property
    def full_manifest(self) -> ReleaseManifest:
        """A text-free release's ``full/manifest.json``: the full release's manifest, typed."""
        return read_manifest(self.folder / FULL_FOLDER, f"{self.folder.name}/{FULL_FOLDER}/{MANIFEST_FILE}")

    @cached_property
    def full_digest(self) -> str:
        """A text-free release's full release's digest: that of ``full/manifest.json``, a byte copy of its manifest."""
        return release_digest(self.folder / FULL_FOLDER)

    @cached_property
    def full_validation(self) -> ValidationRecord:
        return read_validation(self.folder / FULL_FOLDER, f"{self.folder.name}/{FULL_FOLDER}/{VALIDATION_FILE}")

    def listed(self, name: str) -> Path | None:
        """``folder/name`` when the manifest lists it (an unlisted file is never read)."""
        return self.folder / name if self.manifest.output(name) is not None else None

    def expected_features(self) -> dict[str, Features]:
        """The features each declared config's shards must have: its record model's, or their text-free
        derivation."""
        expected = {}
        for config in self.corpus.configs:
            model = self.builder.CONFIGS[config]
            features = features_for(model)
            expected[config] = text_free_features(features, licensed_tree(model)) if self.text_free else features
        return expected

    def configs(self) -> list[str]:
        """The configs the release holds that its installed corpus declares (others are never read)."""
        return [config for config in self.view.configs() if config in self.corpus.configs]

    def confirm(self) -> None:
        """Once the hashing begun by ``open_release(…, Trust.DEFERRED)`` ends: a ClincorpError naming what differs
        from manifest.json (nothing read from the release may be reported before)."""
        if self.checking is not None:
            _refuse_unless(self.folder, self.checking.problems())


def open_release(folder: Path, trust: Trust = Trust.CHECKED, corpus: str | Path | None = None) -> OpenedRelease:
    """The release in ``folder``, through the door; a ClincorpError naming its first problems otherwise.
    ``corpus`` (``validate --corpus``) is an installed corpus's name or the folder of the user's own
    corpus.yaml; by default the installed corpus the manifest names."""
    inspection = inspect_release(folder, contents=trust is Trust.CHECKED)
    _refuse_unless(folder, inspection.problems)
    opened = passed(inspection, corpus)
    if trust is Trust.DEFERRED:
        opened.checking = HashCheck(folder, opened.manifest)
    problems = schema_problems(opened) or value_problems(opened)
    if problems and opened.checking is not None:  # a file that differs from its sha256 is named as such first
        problems = opened.checking.problems() or problems
    _refuse_unless(folder, problems)
    return opened


def passed(inspection: Inspection, corpus: str | Path | None = None) -> OpenedRelease:
    """The release an inspection found no problem in (``clincorp validate`` inspects, then reads); its corpus
    found as :func:`open_release` finds it."""
    manifest, folder = inspection.manifest, inspection.folder
    if manifest is None or inspection.problems:
        raise ClincorpError(f"{folder}: the release has problems: {'; '.join(inspection.problems[:SHOWN])}")
    installed = (
        find_corpus(str(corpus)) if corpus is not None else installed_corpus(manifest.corpus, folder / MANIFEST_FILE)
    )
    return OpenedRelease(folder, manifest, installed, release_digest(folder))


def schema_problems(opened: OpenedRelease) -> list[str]:
    """Each data shard of a declared config whose schema (its Arrow types and embedded features, read from its
    footer) is not its record model's: no command reads a row of a shard of another shape."""
    problems = []
    for config, features in opened.expected_features().items():
        for shard in opened.view.shards(config):
            name = shard.relative_to(opened.folder).as_posix()
            try:
                stored = parquet_file(shard).schema_arrow
            except ClincorpError as error:
                problems.append(str(error))
                continue
            differing = _differing_field(stored, features.arrow_schema)
            if differing is None and opened.view.shard_features(shard) != features:
                differing = "its embedded features"
            if differing is not None:
                problems.append(f"{name}: its schema is not the {config} record model's (field {differing} differs)")
    return problems


def value_problems(opened: OpenedRelease) -> list[str]:
    """Each data shard of a declared config holding a label id outside its set, or a null its record model
    forbids (a re-anchored rehydration writes null for each string it lost)."""
    nulls_allowed = opened.variant == "re-anchored"
    problems = []
    for config, features in opened.expected_features().items():
        model = opened.builder.CONFIGS[config]
        for shard in opened.view.shards(config):
            name = shard.relative_to(opened.folder).as_posix()
            problems += shard_value_problems(shard, name, None if nulls_allowed else model, features)
    return problems


def _differing_field(stored: pa.Schema, expected: pa.Schema) -> str | None:
    """The first field of ``expected`` that ``stored`` lacks or types otherwise, or a field it adds, or None."""
    for expected_field in expected:
        index = stored.get_field_index(expected_field.name)
        if index < 0 or not stored.field(index).type.equals(expected_field.type):
            return repr(expected_field.name)
    extra = [name for name in stored.names if name not in expected.names]
    return repr(extra[0]) if extra else None


def _refuse_unless(folder: Path, problems: list[str]) -> None:
    if problems:
        more = f" and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
        raise ClincorpError(
            f"{folder}: not a release this package opens ({'; '.join(problems[:SHOWN])}{more}); "
            "clincorp validate lists every problem"
        )


def release_location(path: Path) -> tuple[Path, str | None] | None:
    """``(release folder, config)`` when ``path`` is a release folder (config None) or one config of it
    (``<release>/data/<config>``); None for anything else (a scorer's gold may be a plain file or folder)."""
    if (path / MANIFEST_FILE).exists() or (path / MANIFEST_FILE).is_symlink():
        return path, None
    if path.parent.name == "data" and (path.parent.parent / MANIFEST_FILE).exists() and path.is_dir():
        return path.parent.parent, path.name
    return None


def overlaid(manifest: ReleaseManifest, corpus: CorpusManifest) -> tuple[CorpusManifest, list[str]]:
    """The installed corpus with the ``--gates`` overlay the manifest records, and what is wrong with that record
    (its changes are recomputed from the overlay itself)."""
    record = manifest.gate_overlay
    if record is None:
        return corpus, []
    try:
        changed, changes = apply_gate_overlay(corpus, record.overlay, Path(record.file))
    except SourceError as error:
        return corpus, [f"manifest.json gate_overlay: {error.message.splitlines()[0]}"]
    if record.changes != changes:
        return changed, [
            f"manifest.json gate_overlay changes are {record.changes!r}; its overlay makes {changes!r} of "
            f"{corpus.name}'s corpus.yaml"
        ]
    return changed, []
