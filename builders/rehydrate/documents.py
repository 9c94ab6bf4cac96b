"""The text-free release a rehydration restores, opened through the door and checked, and the documents it
restores text from: those its rows name (locator → the sha256 recorded), read from the user's sources (keeping
only those), and the ones that cannot restore it (missing, or another text), named with the records using them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from clinical_corpora.builders.contract.base import BuildContext, Builder, make_builder
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.rehydrate.request import RehydrateRequest
from clinical_corpora.builders.rehydrate.restoring import RehydrateError
from clinical_corpora.builders.release.opened import OpenedRelease, open_release
from clinical_corpora.builders.text_free.card import describe_text_free
from clinical_corpora.core.locators import split_locator, text_sha256
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.text_encoding import EVERY_SOURCE, UTF8
from clinical_corpora.schemas.features import features_for, schema_fingerprint
from clinical_corpora.schemas.licensed import SOURCE_DOCUMENTS

SHOWN = 10


@dataclass(frozen=True)
class SourceDocuments:
    """The documents a text-free release names (locator → recorded sha256), those the sources hold, and those
    that cannot restore it (locator → why)."""

    sources: dict[str, Path | None]
    wanted: dict[str, str]
    documents: dict[str, str]
    bad: dict[str, str]
    encodings: dict[str, str] = field(default_factory=dict)
    """The sources read as text, each with the encoding it was read in."""


def source_documents(
    builder: Builder, ctx: BuildContext, view: ReleaseView, given: Mapping[str, str] | None = None
) -> SourceDocuments:
    """The documents ``view``'s rows name, read from the sources of ``ctx`` (or taken from ``given``)."""
    wanted = view.source_documents(view.configs())
    if given is None:
        documents = builder.read_wanted(ctx, wanted)
    else:
        documents = {locator: given[locator] for locator in wanted if locator in given}
    return SourceDocuments(ctx.sources, wanted, documents, bad_documents(wanted, documents, ctx), dict(ctx.decoded))


def given_sources(corpus: CorpusManifest, overrides: Mapping[str, Path]) -> dict[str, Path | None]:
    """The given sources; with none given, the embedded samples (a sample release's documents)."""
    unknown = sorted(set(overrides) - set(corpus.sources))
    if unknown:
        raise RehydrateError(
            f"{corpus.name} has no source {', '.join(unknown)}; its sources are {', '.join(corpus.sources)}"
        )
    for name, path in overrides.items():
        if not path.exists():
            raise RehydrateError(f"--source {name}={path}: no such file or folder")
    if overrides:
        return {name: overrides.get(name) for name in corpus.sources}
    return {name: corpus.folder / spec.path if spec.path else None for name, spec in corpus.sources.items()}


def bad_documents(wanted: dict[str, str], documents: dict[str, str], ctx: BuildContext) -> dict[str, str]:
    """Locator → why it cannot restore the text: missing from its source, or a different text."""
    bad = {}
    for locator, sha256 in sorted(wanted.items()):
        if locator not in documents:
            source = split_locator(locator)[0]
            bad[locator] = f"not found in source {source} ({ctx.sources.get(source)})"
        elif text_sha256(documents[locator]) != sha256:
            bad[locator] = (
                f"its text ({len(documents[locator])} characters) differs from the one the release was built from "
                f"(sha256 {sha256[:12]}…): another version of the source, or an edited file"
            )
    return bad


def bad_report(builder: Builder, view: ReleaseView, bad: dict[str, str]) -> str:
    """The documents that cannot restore the release, each with the records using it."""
    users = _users(builder, view, bad)
    lines = [f"{len(bad)} source document(s) cannot restore the release:"]
    for locator, reason in list(bad.items())[:SHOWN]:
        by_config: dict[str, list[str]] = defaultdict(list)
        for record in users[locator]:
            config, _, record_id = record.partition("/")
            by_config[config].append(record_id)
        used = "; ".join(
            f"{config} {', '.join(ids[:3])}" + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
            for config, ids in by_config.items()
        )
        lines.append(f"  {locator}: {reason}; used by {used}")
    if len(bad) > SHOWN:
        lines.append(f"  … and {len(bad) - SHOWN} more")
    return "\n".join(lines)


def _users(builder: Builder, view: ReleaseView, locators: Collection[str]) -> dict[str, list[str]]:
    """Locator → the records (``config/id``) using it, for the locators named."""
    users: dict[str, list[str]] = defaultdict(list)
    for config in view.configs():
        id_field = getattr(builder.CONFIGS[config], "id_field", "id")
        for shard in view.shards(config):
            for batch in view.shard_batches(shard, 10_000, [id_field, SOURCE_DOCUMENTS]):
                for row in batch.to_pylist():
                    for document in row[SOURCE_DOCUMENTS]:
                        if document["locator"] in locators:
                            users[document["locator"]].append(f"{config}/{row[id_field]}")
    return users


def opened_text_free(folder: Path) -> OpenedRelease:
    """A text-free release through the door, its record models those of the installed corpus, its full release's
    manifest that of the same release, and its card and croissant.json those the package draws (nothing planted
    in them)."""
    opened = open_release(folder)
    if not opened.text_free:
        raise RehydrateError(f"{folder} is not a text-free release (made by clincorp release --text-free)")
    full = opened.full_manifest
    differing = [
        field
        for field in ("corpus", "version", "builder", "sample", "options", "changes")
        if getattr(full, field) != getattr(opened.manifest, field)
    ]
    if differing or full.kind != "full":
        raise RehydrateError(
            f"{folder}: full/manifest.json is not the manifest of this release's full release ({', '.join(differing)} "
            "differ): the release is damaged or forged"
        )
    builder = make_builder(opened.corpus, full.options)
    for name, data in describe_text_free(opened.corpus, builder, opened.manifest, full, opened.view).items():
        if (folder / name).read_bytes() != data:
            raise RehydrateError(
                f"{folder / name} differs from what the package draws from the release: text planted after the "
                "build? Not restored (clincorp validate says more)"
            )
    features = {config: features_for(builder.CONFIGS[config]) for config in opened.configs()}
    if schema_fingerprint(features) != full.schema_fingerprint:
        raise RehydrateError(
            f"the installed {opened.corpus.name} record models differ from those that built {folder.name} "
            f"(schema fingerprint); install clinical-corpora {opened.manifest.package_version}"
        )
    return opened


def read_documents(opened: OpenedRelease, request: RehydrateRequest) -> SourceDocuments:
    """The documents the release names, from the request's sources (or its given texts), in the encodings the
    request names; one named for a source whose reader decodes no text in it (RF2 and UMLS files are UTF-8 by
    their formats) is an error, never ignored."""
    builder = make_builder(opened.corpus, opened.full_manifest.options)
    sources = given_sources(opened.corpus, request.sources)
    unknown = sorted(set(request.encodings) - set(opened.corpus.sources) - {EVERY_SOURCE})
    if unknown:
        raise RehydrateError(
            f"--source-encoding names {', '.join(unknown)}: {opened.corpus.name} has no such source; its sources "
            f"are {', '.join(opened.corpus.sources)}"
        )
    ctx = BuildContext(opened.corpus, sources, request.on_error, request.encodings)
    request.stage("reading the documents the release names from the sources")
    found = source_documents(builder, ctx, opened.view, request.documents)
    for name, encoding in found.encodings.items():
        if encoding != UTF8:
            request.stage(f"read source {name} as {encoding}")
    read = {split_locator(locator)[0] for locator in found.wanted}
    ignored = sorted(name for name in set(request.encodings) & read if name not in found.encodings)
    if ignored and request.documents is None:
        raise RehydrateError(
            f"--source-encoding {ignored[0]}={request.encodings[ignored[0]]}: the reader of source {ignored[0]} reads "
            "it in the encoding its format fixes (UTF-8), not in one you name"
        )
    return found
