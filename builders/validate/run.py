"""``clincorp validate``: every check of a release, step by step, each verdict as soon as it is known.

The release is inspected at the door (``release/opened.py``): its files, typed manifest and layout, each file's
sha256. Then, against the installed corpus (never one the release names by path, never imported from it):
its manifest's claims, its schema, every record, and for a full release its expectation suite and published
numbers run again; last, its descriptions (card, figures, croissant.json) are drawn again and compared byte
for byte. A text-free release is checked for its ``full/`` files, its leak gate and its anchors instead of its
suite; a rehydration that is not the maintainer's release (re-anchored, partial) as what it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from clinical_corpora.builders.release.card.changes import changes_problems
from clinical_corpora.builders.release.card.rehydrated import describe_rehydrated
from clinical_corpora.builders.release.opened import OpenedRelease, inspect_release, overlaid, passed
from clinical_corpora.builders.validate import described, identity, phi, records, rows, suite, text_free
from clinical_corpora.builders.validate.gate import guarded, problems_gate
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.release_manifest import ReleaseManifest, Variant, release_digest
from clinical_corpora.validation.gates import GateResult

Step = Callable[[str], None]
MANIFEST_EXPECTED = "manifest.json consistent with the data and the installed corpus"


@dataclass(frozen=True)
class CheckedRelease:
    """What was checked: the corpus, version and variant manifest.json names, and the release's digest (the
    sha256 of manifest.json, which hashes every other file; None when it cannot be read)."""

    corpus: str
    version: str
    variant: Variant
    digest: str | None


def _checked(folder: Path, manifest: ReleaseManifest) -> CheckedRelease:
    try:
        digest: str | None = release_digest(folder)
    except OSError:
        digest = None
    return CheckedRelease(manifest.corpus, manifest.version, manifest.kind, digest)


def check_release(
    folder: Path, on_step: Step | None = None, corpus: str | Path | None = None, expect_digest: str | None = None
) -> list[GateResult]:
    """Every check of a release (see :func:`release_checks`), as a list."""
    return list(release_checks(folder, on_step, corpus, expect_digest))


def release_checks(
    folder: Path,
    on_step: Step | None = None,
    corpus: str | Path | None = None,
    expect_digest: str | None = None,
    on_checked: Callable[[CheckedRelease], None] | None = None,
    phi_report: Path | None = None,
) -> Iterator[GateResult]:
    """Every check of a release, each verdict as soon as it is known; ``on_step`` hears one line per step before
    it runs, ``on_checked`` what is checked once manifest.json is read. With ``expect_digest`` (the sha256 of
    manifest.json the release's maker printed) nothing else is checked unless manifest.json has it. Stops at
    the files when they differ from the manifest, and at the manifest when the corpus is not installed; the PHI
    gate last, its findings (no text) written to ``phi_report`` when given. A ClincorpError only when ``folder``
    is no release at all."""
    announce = _numbered(on_step or (lambda line: None))
    if expect_digest is not None:
        announce("manifest.json's sha256 against the expected digest")
        pinned = _digest_gate(folder, expect_digest)
        yield pinned
        if not pinned.success:
            return
    announce("files: every file listed, of its kind, regular, inside the folder, with its sha256")
    inspection = inspect_release(folder)
    if inspection.manifest is not None and on_checked is not None:
        on_checked(_checked(folder, inspection.manifest))
    yield problems_gate("files", inspection.problems, "files as manifest.json lists them")
    if inspection.problems:
        return
    try:
        opened = passed(inspection, corpus)
    except ClincorpError as error:
        name = inspection.manifest.corpus if inspection.manifest else None
        problem = f"manifest.json names corpus {name!r}, which cannot be checked: {error}"
        yield problems_gate("manifest", [problem], MANIFEST_EXPECTED, f"corpus {name!r} is not installed")
        return
    checks = {"full": _full_checks, "text-free": _text_free_checks}.get(opened.variant, _rehydrated_checks)
    yield from checks(opened, announce)
    announce("phi: every string of every file scanned for protected health information (nothing found is shown)")
    yield guarded("phi", phi.EXPECTED, lambda: _phi_gate(opened, phi_report))


def _phi_gate(opened: OpenedRelease, report: Path | None) -> GateResult:
    return phi.validate_phi(opened, report).gate


def _numbered(announce: Step) -> Step:
    """``announce`` with each step numbered (``step 3: schema ...``)."""
    steps = iter(range(1, 100))
    return lambda line: announce(f"step {next(steps)}: {line}")


def _full_checks(opened: OpenedRelease, announce: Step) -> Iterator[GateResult]:
    corpus, problems = overlaid(opened.manifest, opened.corpus)
    announce("manifest: its claims against the data, validation.json and the installed corpus")
    yield guarded("manifest", MANIFEST_EXPECTED, lambda: _manifest_gate(opened, corpus, problems))
    announce("schema: every parquet file against the record models")
    schema = guarded("schema", "features as the record models", lambda: records.schema_gate(opened))
    yield schema
    announce("records: every record against its record model")
    checked = guarded("records", "every record valid under its model", lambda: records.records_gate(opened))
    yield checked
    if not (schema.success and checked.success):
        return
    announce("expectations: the installed corpus's suite on the data (loading great-expectations)")
    yield guarded("expectations", suite.EXPECTED, lambda: suite.suite_gate(opened, corpus))
    announce("published numbers and descriptions: statistics, card, figures and croissant.json drawn again")
    release = described.full_release(opened, corpus)
    yield guarded("published", "published numbers recomputed", lambda: described.published_gate(release))
    yield guarded("descriptions", described.DESCRIPTIONS, lambda: described.full_descriptions(release, opened))


def _manifest_gate(opened: OpenedRelease, corpus: CorpusManifest, problems: list[str]) -> GateResult:
    manifest = opened.manifest
    problems = [
        *problems,
        *identity.identity_problems(manifest, opened.corpus),
        *rows.shard_problems(manifest, corpus),
        *rows.count_problems(opened, corpus),
        *identity.recorded_gate_problems(manifest, opened.validation, corpus),
        *changes_problems(opened.manifest.changes, opened.view.configs()),
    ]
    return problems_gate("manifest", problems, MANIFEST_EXPECTED)


def _text_free_checks(opened: OpenedRelease, announce: Step) -> Iterator[GateResult]:
    corpus = opened.corpus
    announce("manifest: its claims, full/ and the leak gate it passed, against the installed corpus")
    yield guarded("manifest", MANIFEST_EXPECTED, lambda: _text_free_manifest_gate(opened, corpus))
    announce("schema: every parquet file against the text-free record models")
    yield guarded("schema", "features as the text-free record models", lambda: records.schema_gate(opened))
    announce("records: every record's labels, bounded strings and recipes")
    yield guarded("records", "every record valid under its model", lambda: records.records_gate(opened))
    announce("anchors: one checked anchor per source document")
    yield guarded(
        "anchors",
        "an anchor per document",
        lambda: problems_gate("anchors", text_free.anchors_problems(opened), "an anchor per document"),
    )
    announce("descriptions: card and croissant.json drawn again")
    yield guarded("descriptions", described.DESCRIPTIONS, lambda: described.text_free_descriptions(opened, corpus))


def _text_free_manifest_gate(opened: OpenedRelease, corpus: CorpusManifest) -> GateResult:
    problems = [
        *identity.identity_problems(opened.manifest, corpus),
        *rows.shard_problems(opened.manifest, corpus),
        *text_free.leak_problems(opened),
        *identity.full_identity_problems(opened, corpus),
        *text_free.full_problems(opened),
        *changes_problems(opened.manifest.changes, opened.view.configs()),
    ]
    return problems_gate("manifest", problems, MANIFEST_EXPECTED)


def _rehydrated_checks(opened: OpenedRelease, announce: Step) -> Iterator[GateResult]:
    corpus, problems = overlaid(opened.manifest, opened.corpus)
    announce(f"manifest: a {opened.variant} rehydration's claims against its data and the installed corpus")
    yield guarded("manifest", MANIFEST_EXPECTED, lambda: _rehydrated_manifest_gate(opened, corpus, problems))
    announce("schema: every parquet file against the record models")
    yield guarded("schema", "features as the record models", lambda: records.schema_gate(opened))
    announce("records: every record against its record model")
    yield guarded("records", "every record valid under its model", lambda: records.records_gate(opened))
    announce("descriptions: card and croissant.json drawn again")
    yield guarded("descriptions", described.DESCRIPTIONS, lambda: _rehydrated_descriptions(opened))


def _rehydrated_descriptions(opened: OpenedRelease) -> GateResult:
    drawn = describe_rehydrated(opened.corpus, opened.builder, opened.manifest, opened.view)
    return described.descriptions_gate(opened, drawn)


def _rehydrated_manifest_gate(opened: OpenedRelease, corpus: CorpusManifest, problems: list[str]) -> GateResult:
    manifest = opened.manifest
    validation = opened.validation
    problems = [
        *problems,
        *identity.identity_problems(manifest, opened.corpus),
        *rows.shard_problems(manifest, corpus),
        *rows.count_problems(opened, corpus),
        *(
            ["validation.json is not the maintainer's validation record of this corpus and version"]
            if (validation.corpus, validation.version) != (manifest.corpus, manifest.version)
            else []
        ),
    ]
    return problems_gate("manifest", problems, MANIFEST_EXPECTED)


def _digest_gate(folder: Path, expected: str) -> GateResult:
    wanted = expected.strip().lower().removeprefix("sha256:")
    try:
        actual = release_digest(folder)
    except OSError as error:
        return problems_gate("digest", [f"manifest.json cannot be read ({error})"], f"sha256 {wanted}")
    problems = (
        [] if actual == wanted else [f"manifest.json has sha256 {actual}, expected {wanted}: not the pinned release"]
    )
    return problems_gate("digest", problems, f"sha256 {wanted}", observed=f"sha256 {actual}")
