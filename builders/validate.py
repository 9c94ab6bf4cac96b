"""Re-check an existing release folder: file hashes, manifest.json against the data and the installed
corpus, schema, record models, expectations.

Nothing a release names is imported: the builder and the expectation suite come from the installed corpus
(its corpus.yaml), and manifest.json is a claim checked against the parquet files it describes."""

from __future__ import annotations

import gc
import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ValidationError

from clinical_corpora.builders.contract.base import Builder, load_builder_class, make_builder
from clinical_corpora.builders.contract.release_view import SHARD_PATTERN, ReleaseView
from clinical_corpora.builders.plugins import find_corpus, installed_corpus
from clinical_corpora.builders.release.card.changes import changes_problems
from clinical_corpora.builders.release.card.published import recomputed_values, release_comparison
from clinical_corpora.builders.release.checks import check_suite
from clinical_corpora.builders.release.folder import outside_reason, read_json, release_digest, sha256_file
from clinical_corpora.builders.release.inputs import inputs_problems
from clinical_corpora.builders.text_free.check import text_free_checks
from clinical_corpora.builders.text_free.layout import VARIANT, stored_rows
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.core.manifest import (
    SAMPLE_TAG,
    CorpusManifest,
    Expectation,
    apply_gate_overlay,
    parse_gate_overlay,
)
from clinical_corpora.core.processes import child_process
from clinical_corpora.schemas.features import LabelIdError, features_for, row_decoder, schema_fingerprint
from clinical_corpora.validation.expectations import load_great_expectations
from clinical_corpora.validation.gates import GateResult, agreement_gates, expectations_gate, rejects_gate
from clinical_corpora.validation.published import GATE, Recomputed, published_gate

MAX_LISTED = 20


Step = Callable[[str], None]
RECORDS_APART = 5_000
"""Rows from which the records gate runs in a child process beside great-expectations' import."""
STEPS = 6


def check_release(
    folder: Path, on_step: Step | None = None, corpus: str | Path | None = None, expect_digest: str | None = None
) -> list[GateResult]:
    """Every check of a release (see :func:`release_checks`), as a list."""
    return list(release_checks(folder, on_step, corpus, expect_digest))


def release_checks(
    folder: Path, on_step: Step | None = None, corpus: str | Path | None = None, expect_digest: str | None = None
) -> Iterator[GateResult]:
    """Every check of a release, each verdict as soon as it is known: files, manifest, schema, records, then
    the expectation suite (the only step that loads great-expectations), then the published numbers.
    ``on_step`` hears one line per step
    before it runs. ``corpus`` is the installed corpus's name or the folder of its corpus.yaml; by default
    the corpus manifest.json names, looked up among the installed corpora (never imported from the release).

    With ``expect_digest`` (a sha256 the user got from the release's maker), manifest.json must have that
    digest first: nothing else is checked otherwise. Stops at the file check when files differ from the
    manifest, at the manifest check when the corpus is not installed, and before the suite when the schema
    or a record is invalid (the builder's derived tables assume valid records). A problem in the release's
    data is a failed gate naming the record and field, never an exception.
    """
    announce = on_step or (lambda line: None)
    manifest = _release_manifest(folder)
    if expect_digest is not None:
        announce("manifest.json's sha256 against the expected digest")
        pinned = _digest_gate(folder, expect_digest)
        yield pinned
        if not pinned.success:
            return
    announce(f"step 1/{STEPS}: files against the sha256 hashes in manifest.json")
    files = _guarded("files", "hashes as in manifest.json", lambda: _files_gate(folder, manifest))
    yield files
    if not files.success:
        return
    if manifest.get("variant") == VARIANT:
        yield from text_free_checks(folder, manifest, announce, corpus)
        return
    announce(f"step 2/{STEPS}: manifest.json against the data and the installed corpus")
    installed: list[CorpusManifest] = []
    consistent = _guarded(
        "manifest",
        MANIFEST_EXPECTED,
        lambda: _manifest_gate(folder, manifest, corpus, installed),
    )
    yield consistent
    if not installed:
        return
    yield from _data_checks(folder, manifest, installed[0], announce)


def _data_checks(
    folder: Path, manifest: dict[str, Any], corpus: CorpusManifest, announce: Callable[[str], None]
) -> Iterator[GateResult]:
    """Steps 3 to 5: the schema, every record, and (when both hold) the expectation suite."""
    try:
        builder = make_builder(corpus.builder, manifest.get("options"))
    except ClincorpError:  # the manifest gate named the options it cannot build with
        return
    view = ReleaseView(folder)
    announce(f"step 3/{STEPS}: schema of every parquet file against the record models")
    schema = _guarded(
        "schema",
        "features as the record models",
        lambda: _schema_gate(view, builder.CONFIGS, manifest.get("schema_fingerprint", "")),
    )
    yield schema
    announce(f"step 4/{STEPS}: every record against its record model")
    records = _guarded("records", "every record valid under its model", _records_checker(view, builder.CONFIGS))
    yield records
    if not (schema.success and records.success):
        return
    announce(f"step 5/{STEPS}: the installed corpus's expectation suite (loading great-expectations)")
    yield _guarded("expectations", "all pass", lambda: _expectations_gate(folder, manifest, corpus, builder, view))
    announce(f"step 6/{STEPS}: the data against the numbers its paper publishes (corpus.yaml, published:)")
    yield _guarded(GATE, "published numbers recomputed", lambda: _published_gate(folder, manifest, corpus, builder))


def _published_gate(folder: Path, manifest: dict[str, Any], corpus: CorpusManifest, builder: Builder) -> GateResult:
    """The installed corpus's published numbers against the statistics recomputed from the data (and the
    agreement measures validation.json records); a sample release is not compared."""
    sample = manifest.get("sample") is not False or str(manifest.get("version", "")).endswith(SAMPLE_TAG)
    if sample or not corpus.published:
        return release_comparison(corpus, Recomputed({}), (), sample=True)[1] if sample else published_gate([])
    measures = read_json(folder / "validation.json").get("agreement")
    recorded = {
        name: value
        for name, value in (measures.items() if isinstance(measures, dict) else ())
        if isinstance(name, str) and isinstance(value, int | float) and not isinstance(value, bool)
    }
    inputs = manifest.get("inputs")
    given = [name for name in inputs if isinstance(name, str)] if isinstance(inputs, dict) else []
    recomputed = recomputed_values(builder.statistics(ReleaseView(folder)), recorded)
    return release_comparison(corpus, recomputed, given, sample=False)[1]


MANIFEST_EXPECTED = "manifest.json consistent with the data and the installed corpus"


def release_files_gate(folder: Path, contents: bool = True) -> tuple[dict[str, Any], GateResult]:
    """Step 1 alone, for commands that read a release someone gave them (``clincorp diff``): manifest.json
    read as a release manifest, and every file against the sha256 it lists (nothing unlisted, nothing outside).
    With ``contents=False``, only what needs no file read (every output listed, present, regular and inside);
    :func:`release_hashes_gate` checks their contents."""
    manifest = _release_manifest(folder)
    return manifest, _guarded("files", "hashes as in manifest.json", lambda: _files_gate(folder, manifest, contents))


def release_hashes_gate(folder: Path, manifest: dict[str, Any]) -> GateResult:
    """Every output against its sha256, once ``release_files_gate(folder, contents=False)`` passed: what a
    command reading the release's data needs (``clincorp diff``). inputs.jsonl is hashed too, but not checked
    against manifest.json's inputs: that is ``validate``'s, and the diff reads nothing of it."""

    def check() -> GateResult:
        listed = _listed_outputs(folder, manifest)[1]
        problems = [problem for name, expected in listed.items() if (problem := _hash_problem(folder, name, expected))]
        return _problems_gate("files", problems, "hashes as in manifest.json")

    return _guarded("files", "hashes as in manifest.json", check)


def _digest_gate(folder: Path, expected: str) -> GateResult:
    wanted = expected.strip().lower().removeprefix("sha256:")
    actual = release_digest(folder)
    problems = (
        [] if actual == wanted else [f"manifest.json has sha256 {actual}, expected {wanted}: not the pinned release"]
    )
    return _problems_gate("digest", problems, f"sha256 {wanted}", observed=f"sha256 {actual}")


def _release_manifest(folder: Path) -> dict[str, Any]:
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        raise ClincorpError(f"{folder} is not a release: it has no manifest.json")
    manifest = read_json(manifest_path)
    missing = [key for key in ("corpus", "outputs") if not isinstance(manifest, dict) or key not in manifest]
    if missing:
        raise ClincorpError(f"{manifest_path}: not a release manifest, it lacks {', '.join(missing)}")
    return manifest


def _guarded(gate: str, expected: str, check: Callable[[], GateResult]) -> GateResult:
    """``check()``, or a failed gate saying why the check could not run (a damaged release must not
    end in a traceback)."""
    try:
        return check()
    except ClincorpError as error:
        return GateResult(gate, False, f"could not check: {error}", expected)
    except Exception as error:  # noqa: BLE001 - any damage to the release is a verdict, not a crash
        return GateResult(gate, False, f"could not check: {type(error).__name__}: {error}", expected)


def _expectations_gate(
    folder: Path, manifest: dict[str, Any], corpus: CorpusManifest, builder: Builder, view: ReleaseView
) -> GateResult:
    """Run the installed corpus's suite, with the thresholds a recorded ``--gates`` overlay changed (the
    release's copy in validation.json may differ from corpus.yaml only as the overlay's changes say)."""
    suite, problems = _suite(folder, manifest, corpus)
    if problems:
        return GateResult(
            "expectations",
            False,
            f"{len(problems)} problems with validation.json's expectation_suite",
            "the installed corpus's suite",
            [{"problem": p} for p in problems[:MAX_LISTED]],
        )
    return expectations_gate(check_suite(builder, view, suite))


def _suite(folder: Path, manifest: dict[str, Any], corpus: CorpusManifest) -> tuple[list[Expectation], list[str]]:
    """The suite to run (the installed corpus's, with the recorded overlay applied) and how the release's
    copy differs from it."""
    installed = list(corpus.gates.expectations)
    try:
        stored = json.loads((folder / "validation.json").read_text(encoding="utf-8"))["expectation_suite"]
        released = [Expectation.model_validate(e) for e in stored]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValidationError) as error:
        raise ClincorpError(f"validation.json holds no readable expectation_suite ({error})") from error
    if len(released) != len(installed):
        return installed, [
            f"validation.json's expectation_suite has {len(released)} expectations, "
            f"{corpus.name}'s corpus.yaml has {len(installed)}"
        ]
    overlay = (
        "the --gates overlay recorded in manifest.json does not make that change"
        if "gate_overlay" in manifest
        else "no --gates overlay in manifest.json records that change"
    )
    problems = []
    for number, (ours, theirs) in enumerate(zip(installed, released, strict=True), start=1):
        if ours == theirs:
            continue
        where = f"validation.json expectation {number} ({theirs.describe()})"
        removed = sorted(set(ours.kwargs) - set(theirs.kwargs))
        changed = {key: value for key, value in theirs.kwargs.items() if ours.kwargs.get(key) != value}
        before = {key: ours.kwargs.get(key) for key in changed}
        if ours.key != theirs.key or removed:
            problems.append(f"{where}: differs from {corpus.name}'s corpus.yaml ({ours.describe()})")
        else:
            problems.append(f"{where}: {before} -> {changed} differs from {corpus.name}'s corpus.yaml and {overlay}")
    return installed, problems


def _files_gate(folder: Path, manifest: dict, contents: bool = True) -> GateResult:
    problems, listed, refused = _listed_outputs(folder, manifest)
    for name, expected in listed.items():
        path = folder / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif contents and (problem := _hash_problem(folder, name, expected)):
            problems.append(problem)
    root = folder.resolve()
    present = set()
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_symlink() and not path.resolve().is_relative_to(root):
            if name not in refused:
                problems.append(f"{name}: a symbolic link leaving the release folder")
        elif path.is_file():
            present.add(name)
        elif not path.is_dir():  # never opened: opening a pipe would wait for a writer
            problems.append(f"{name}: not a regular file (a pipe, socket or device)")
    problems += [f"{name}: not listed in manifest.json" for name in sorted(present - set(listed) - {"manifest.json"})]
    if contents:
        problems += inputs_problems(folder, manifest)
    return _problems_gate("files", problems, "hashes as in manifest.json")


def _hash_problem(folder: Path, name: str, expected: str) -> str | None:
    """What is wrong with output ``name``'s bytes against the sha256 manifest.json lists, if anything."""
    return None if sha256_file(folder / name) == expected else f"{name}: sha256 differs from manifest.json"


def _listed_outputs(folder: Path, manifest: dict) -> tuple[list[str], dict[str, str], set[str]]:
    """manifest.json's outputs: the problems with its entries, each output inside the folder with its sha256, and
    the names refused as leaving the folder."""
    problems: list[str] = []
    listed: dict[str, str] = {}
    refused: set[str] = set()
    outputs = manifest["outputs"]
    for number, output in enumerate(outputs if isinstance(outputs, list) else [None], start=1):
        if not (
            isinstance(output, dict) and isinstance(output.get("file"), str) and isinstance(output.get("sha256"), str)
        ):
            problems.append(f"manifest.json outputs entry {number}: expected an object with file and sha256")
            continue
        name = output["file"]
        outside = outside_reason(folder, name)
        if outside:
            problems.append(f"{name}: {outside} (outputs must stay inside the release folder)")
            refused.add(name)
        else:
            listed[name] = output["sha256"]
    return problems, listed, refused


def _problems_gate(gate: str, problems: list[str], expected: str, observed: str | None = None) -> GateResult:
    """A gate that passes when ``problems`` is empty, listing the first :data:`MAX_LISTED` of them."""
    return GateResult(
        gate,
        not problems,
        observed if observed is not None else f"{len(problems)} problems",
        expected,
        [{"problem": p} for p in problems[:MAX_LISTED]],
    )


def _manifest_gate(
    folder: Path, manifest: dict[str, Any], name_or_path: str | Path | None, installed: list[CorpusManifest]
) -> GateResult:
    """manifest.json's claims against the installed corpus, the parquet files and validation.json; appends
    the installed corpus to ``installed`` when it is found."""
    name = manifest.get("corpus")
    try:
        corpus = find_corpus(str(name_or_path)) if name_or_path is not None else installed_corpus(name)
    except ClincorpError as error:
        return GateResult(
            "manifest",
            False,
            f"corpus {name!r} is not installed",
            MANIFEST_EXPECTED,
            [{"problem": f"manifest.json names corpus {name!r}, which cannot be checked: {error}"}],
        )
    overlaid, problems = _overlaid(manifest, corpus)
    installed.append(overlaid)
    problems += _identity_problems(folder, manifest, corpus)
    problems += _rows_problems(folder, manifest, corpus)
    problems += _gates_problems(folder, manifest, overlaid)
    problems += changes_problems(manifest, _card_text(folder), ReleaseView(folder).configs())
    return _problems_gate("manifest", problems, MANIFEST_EXPECTED)


def _card_text(folder: Path) -> str:
    try:
        return (folder / "README.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _overlaid(manifest: dict[str, Any], corpus: CorpusManifest) -> tuple[CorpusManifest, list[str]]:
    """The installed corpus with the ``--gates`` overlay manifest.json records, and what is wrong with that
    record: the overlay's effect is recomputed from its text, so its listed ``changes`` cannot lie."""
    if "gate_overlay" not in manifest:
        return corpus, []
    overlay = manifest["gate_overlay"]
    text = overlay.get("text") if isinstance(overlay, dict) else None
    if not isinstance(text, str):
        return corpus, ["manifest.json gate_overlay: no text of the --gates file, so its changes cannot be recomputed"]
    problems = []
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != overlay.get("sha256"):
        problems.append("manifest.json gate_overlay: sha256 is not that of its text")
    name = PurePosixPath(str(overlay.get("file", "gates.yaml"))).name
    try:
        overlaid, changes = apply_gate_overlay(corpus, parse_gate_overlay(text, Path(name)), Path(name))
    except SourceError as error:
        return corpus, [*problems, f"manifest.json gate_overlay: {error.message.splitlines()[0]}"]
    if overlay.get("changes") != changes:
        problems.append(
            f"manifest.json gate_overlay changes are {overlay.get('changes')!r}; its text makes {changes!r} of "
            f"{corpus.name}'s corpus.yaml"
        )
    return overlaid, problems


def _identity_problems(folder: Path, manifest: dict[str, Any], corpus: CorpusManifest) -> list[str]:
    problems = []
    version, sample = manifest.get("version"), manifest.get("sample")
    if manifest.get("corpus") != corpus.name:
        problems.append(f"manifest.json corpus is {manifest.get('corpus')!r}, the installed corpus is {corpus.name!r}")
    expected = corpus.sample_version if sample else corpus.version
    if not isinstance(sample, bool):
        problems.append(f"manifest.json sample is {sample!r}, expected true or false")
    elif version != expected:
        kind = "a sample release" if sample else "a release of real inputs"
        problems.append(f"manifest.json version is {version!r}; {kind} of the installed {corpus.name} is {expected!r}")
    inputs = manifest.get("inputs")
    if isinstance(inputs, dict) and isinstance(sample, bool):
        invented = any(isinstance(entry, dict) and entry.get("sample") for entry in inputs.values())
        if invented != sample:
            problems.append(
                f"manifest.json sample is {sample}, but its inputs {'' if invented else 'do not '}include samples"
            )
    if isinstance(version, str) and isinstance(sample, bool) and version.endswith(SAMPLE_TAG) != sample:
        problems.append(f"manifest.json version {version!r} and sample {sample} disagree")
    if manifest.get("builder") != corpus.builder:
        problems.append(
            f"manifest.json names builder {manifest.get('builder')!r}, the installed corpus uses {corpus.builder!r}"
        )
    try:
        make_builder(corpus.builder, manifest.get("options"))
    except ClincorpError as error:
        problems.append(f"manifest.json options: {error}")
    return problems


def _rows_problems(folder: Path, manifest: dict[str, Any], corpus: CorpusManifest) -> list[str]:
    """Per-shard rows against the parquet, the declared configs and splits, and counts.written."""
    problems: list[str] = []
    splits: dict[str, set[str]] = {config: set() for config in corpus.configs}
    total = 0
    listed = {o["file"]: o for o in manifest["outputs"]}
    for name, output in sorted(listed.items()):
        parts = PurePosixPath(name).parts
        if parts[0] != "data":
            if "rows" in output:
                problems.append(f"{name}: manifest.json gives rows for a file that is not a parquet shard")
            continue
        match = SHARD_PATTERN.match(parts[-1])
        if len(parts) != 3 or match is None or parts[1] not in corpus.configs:
            problems.append(
                f"{name}: not a shard data/<config>/<split>-NNNNN-of-NNNNN.parquet of a config of {corpus.name}"
            )
            continue
        splits[parts[1]].add(match["split"])
        actual = ReleaseView.rows_in(folder / name)
        total += actual
        if output.get("rows") != actual:
            problems.append(f"{name}: manifest.json says {output.get('rows')!r} rows, the parquet holds {actual}")
    for config, spec in corpus.configs.items():
        if splits[config] != set(spec.splits):
            problems.append(
                f"config {config}: splits {sorted(splits[config])} in the release, "
                f"{corpus.name}'s corpus.yaml declares {sorted(spec.splits)}"
            )
    counts = manifest.get("counts")
    if not isinstance(counts, dict):
        return [*problems, "manifest.json counts: expected an object with read, written and rejected"]
    if counts.get("written") != total:
        problems.append(
            f"manifest.json counts.written is {counts.get('written')!r}, the parquet files hold {total} rows"
        )
    for key in ("read", "rejected", "rejected_annotations"):
        if not (isinstance(counts.get(key), int) and counts[key] >= 0):
            problems.append(f"manifest.json counts.{key} is {counts.get(key)!r}, expected a count")
    problems += _read_problems(folder, listed, counts, corpus)
    problems += _rejects_problems(folder, counts, set(listed))
    return problems


def _read_problems(folder: Path, listed: dict[str, Any], counts: dict[str, Any], corpus: CorpusManifest) -> list[str]:
    """counts.read against the rows of the builder's ``RECORD_CONFIG`` (one per record read) plus the rejected
    records; not checked for a builder that declares none."""
    config = load_builder_class(corpus.builder).RECORD_CONFIG
    read, rejected = counts.get("read"), counts.get("rejected")
    if config is None or not (isinstance(read, int) and isinstance(rejected, int)):
        return []
    released = sum(
        ReleaseView.rows_in(folder / name) for name in listed if PurePosixPath(name).parts[:2] == ("data", config)
    )
    if read == released + rejected:
        return []
    return [
        f"manifest.json counts.read is {read}, but {released} records were released (config {config}, one row "
        f"per record read) and {rejected} rejected: expected {released + rejected}"
    ]


def _rejects_problems(folder: Path, counts: dict[str, Any], listed: set[str]) -> list[str]:
    """counts.rejected and rejected_annotations against the lines of rejects.jsonl."""
    found = {"record": 0, "annotation": 0}
    if "rejects.jsonl" in listed:
        try:
            with (folder / "rejects.jsonl").open(encoding="utf-8") as lines:
                for line in lines:
                    if line.strip():
                        kind = json.loads(line).get("kind", "record")
                        found[kind] = found.get(kind, 0) + 1
        except (OSError, UnicodeDecodeError, ValueError, AttributeError) as error:
            return [f"rejects.jsonl: not one JSON object per line ({error})"]
    return [
        f"manifest.json counts.{key} is {counts.get(key)!r}, rejects.jsonl holds {found[kind]}"
        for key, kind in (("rejected", "record"), ("rejected_annotations", "annotation"))
        if counts.get(key) != found[kind]
    ]


def _gates_problems(folder: Path, manifest: dict[str, Any], corpus: CorpusManifest) -> list[str]:
    """The gates of manifest.json against validation.json's, no gate that failed, and the rejects and
    agreement verdicts recomputed from the recorded counts and measures with ``corpus``'s thresholds."""
    try:
        validation = json.loads((folder / "validation.json").read_text(encoding="utf-8"))
        recorded = [{"gate": g["gate"], "status": g["status"], "observed": g["observed"]} for g in validation["gates"]]
        expected = {g["gate"]: g["expected"] for g in validation["gates"]}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as error:
        return [f"validation.json: no readable gates ({error})"]
    problems = _verdict_problems(manifest, validation, recorded, expected, corpus)
    if manifest.get("gates") != recorded:
        problems.append("manifest.json gates differ from validation.json's")
    if (validation.get("corpus"), validation.get("version")) != (manifest.get("corpus"), manifest.get("version")):
        problems.append(
            f"validation.json is for {validation.get('corpus')} {validation.get('version')}, "
            f"manifest.json for {manifest.get('corpus')} {manifest.get('version')}"
        )
    problems += [f"gate {g['gate']}: recorded as failed in a release" for g in recorded if g["status"] == "fail"]
    return problems


def _verdict_problems(
    manifest: dict[str, Any],
    validation: dict[str, Any],
    recorded: list[dict[str, Any]],
    expected: dict[str, Any],
    corpus: CorpusManifest,
) -> list[str]:
    """The max_rejects and agreement gates as the thresholds of ``corpus`` (overlay applied, and a recorded
    --max-rejects) judge the recorded rejects and measures, against what validation.json says they were."""
    overrides = manifest.get("overrides")
    limit = overrides.get("max_rejects", corpus.gates.max_rejects) if isinstance(overrides, dict) else None
    limit = corpus.gates.max_rejects if limit is None else limit
    observed = {gate["gate"]: gate["observed"] for gate in recorded}
    rejected = observed.get("max_rejects")  # checked against rejects.jsonl with the counts
    measures = validation.get("agreement")
    try:
        recomputed = [
            *([rejects_gate(rejected, limit)] if isinstance(rejected, int) else []),
            *agreement_gates(measures if isinstance(measures, dict) else None, corpus.gates.agreement),
        ]
    except (TypeError, ValueError) as error:
        return [f"validation.json agreement: not measures by name ({error})"]
    status = {gate["gate"]: gate["status"] for gate in recorded}
    problems = []
    for gate in recomputed:
        if gate.gate not in status:
            problems.append(f"gate {gate.gate}: missing from validation.json")
        elif gate.status == "skipped" and status[gate.gate] == "skipped":
            continue
        elif (status[gate.gate], expected[gate.gate]) != (gate.status, gate.expected):
            problems.append(
                f"gate {gate.gate}: validation.json says {status[gate.gate]} against {expected[gate.gate]!r}; "
                f"{corpus.name}'s thresholds make it {gate.status} against {gate.expected!r} "
                f"(observed {gate.observed!r})"
            )
    return problems


def _schema_gate(view: ReleaseView, configs: dict, fingerprint: str) -> GateResult:
    expected = {name: features_for(model) for name, model in configs.items()}
    problems = []
    if schema_fingerprint(expected) != fingerprint:
        problems.append("the builder's record models no longer match the release's schema fingerprint")
    for name, features in expected.items():
        for shard in view.shards(name):
            if view.shard_features(shard) != features:
                problems.append(f"{shard.name}: embedded features differ from the {name} record model")
        if not view.shards(name):
            problems.append(f"config {name}: no parquet files")
    return _problems_gate("schema", problems, "features as the record models")


def _records_checker(view: ReleaseView, configs: dict) -> Callable[[], GateResult]:
    """The records gate, to be waited for. From :data:`RECORDS_APART` rows on, it runs in a child process while
    this one imports great-expectations for the next step (the two took ~1.2 s and ~1.8 s of CPU on 10k SDOH
    rows, one after the other); below, in this process."""
    rows = sum(view.rows_in(shard) for config in configs for shard in view.shards(config))
    if rows < RECORDS_APART:
        return lambda: _records_gate(view, configs)

    def checked() -> GateResult:
        with child_process("checking every record") as start:
            result = start(_records_gate, view, configs)
            load_great_expectations()
            gate: GateResult = result()
            return gate

    return checked


def _records_gate(view: ReleaseView, configs: dict) -> GateResult:
    """Decode and validate every stored row; each problem names the config, split, record id and field.

    With the collector paused: the rows and records made here are freed by reference counting (they hold no
    cycles), and letting the collector traverse them as they are made cost most of the gate's time."""
    gc.disable()
    try:
        return _records_checked(view, configs)
    finally:
        gc.enable()


def _records_checked(view: ReleaseView, configs: dict) -> GateResult:
    problems, checked = [], 0
    for name, model in configs.items():
        id_field = getattr(model, "id_field", "id")
        decode = row_decoder(view.features(name))
        for shard in view.shards(name):
            split = view.split_of(shard)
            for position, row in enumerate(stored_rows(shard)):
                checked += 1
                where = f"{name}/{split} record {row.get(id_field)!r} ({shard.name} row {position})"
                problem = _record_problem(model, decode, row)
                if problem is not None:
                    problems.append(f"{where}: {problem}")
        if id_field in view.features(name):
            problems += [
                f"{name}/{split}: duplicate id {record_id!r}"
                for split, _, record_id in view.repeated_ids(name, id_field)
            ]
    return _problems_gate(
        "records",
        problems,
        "every record valid under its model",
        observed=f"{checked} records, {len(problems)} invalid",
    )


def _record_problem(model: type[BaseModel], decode: Callable[[Any], Any], row: dict[str, Any]) -> str | None:
    """Why a stored row is not a valid record (``field spans[2].label: ...``), or None."""
    try:
        model.model_validate(decode(row))
    except LabelIdError as error:
        return f"field {error.field}: {error.problem}"
    except ValidationError as error:
        first = error.errors()[0]
        field = _field_path(first["loc"])
        more = f" (and {error.error_count() - 1} more problems)" if error.error_count() > 1 else ""
        value = "" if first["type"] == "value_error" else f", got {_short(first.get('input'))}"
        return f"{f'field {field}: ' if field else ''}{first['msg']}{value}{more}"
    return None


def _field_path(loc: tuple[int | str, ...]) -> str:
    """``('spans', 2, 'label')`` → ``spans[2].label``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path.lstrip(".")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
