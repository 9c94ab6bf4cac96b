"""The card and croissant.json of a rehydration that is not the maintainer's release (re-anchored from copies
of the sources that differ, or partial, leaving records out): drawn from its own rows and manifest, so they
describe what it holds, and ``clincorp validate`` draws them again like any release's."""

from __future__ import annotations

from clinical_corpora.builders.contract.base import Builder
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.card.card import (
    citation_section,
    corpus_features,
    declared_rows,
    front_matter,
    intro_sections,
    licence_sections,
    provenance_section,
    split_sizes,
)
from clinical_corpora.builders.release.card.croissant import CROISSANT_FILE, CroissantRelease, croissant_bytes
from clinical_corpora.builders.release.card.markdown import CARD_FILE, section_markdown
from clinical_corpora.core.card import CardSection, Cell, Table
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.release_manifest import ReleaseManifest


def describe_rehydrated(
    corpus: CorpusManifest, builder: Builder, manifest: ReleaseManifest, view: ReleaseView
) -> dict[str, bytes]:
    """README.md and croissant.json of a re-anchored or partial rehydration in ``view``."""
    features, rows = corpus_features(corpus, builder.CONFIGS), declared_rows(corpus, view)
    sections = [
        *intro_sections(corpus, rows, manifest.version),
        rehydrated_section(manifest),
        *licence_sections(corpus),
        provenance_section(corpus, manifest),
        citation_section(corpus),
    ]
    matter = front_matter(corpus, manifest.version, features, rows, split_sizes(view, corpus.configs))
    card = f"---\n{matter}\n---\n\n" + "\n".join(section_markdown(section) for section in sections)
    splits = {config: [split for split, count in counts.items() if count] for config, counts in rows.items()}
    croissant = CroissantRelease(
        corpus, manifest.version, features, splits, manifest.inputs or {}, manifest.shard_hashes()
    )
    return {CARD_FILE: card.encode("utf-8"), CROISSANT_FILE: croissant_bytes(view.folder, croissant)}


def rehydrated_section(manifest: ReleaseManifest) -> CardSection:
    """What the rehydration did, and that it is not the maintainer's release."""
    done = manifest.rehydration
    assert done is not None, "a rehydration records what it did"
    how = (
        "re-anchored with `clincorp rehydrate --re-anchor` from copies of the sources that differ from the ones "
        "the release was built from"
        if done.mode == "re-anchored"
        else "rehydrated with `clincorp rehydrate --on-error quarantine`, leaving out the records whose documents "
        "differ from the ones the release was built from"
    )
    text = (
        f"This folder was {how}. It is not the maintainer's release: its files differ from theirs (the "
        f"maintainer's manifest.json has sha256 `{done.maintainer_manifest_sha256}`), and its counts are those "
        f"of the records it holds. `{done.report}` names every string lost and every record left out, with why. "
        "validation.json is the maintainer's record of their release's gates."
    )
    rows: list[list[Cell]] = [[kind, count] for kind, count in done.strings.items()]
    rows += [["records left out", done.records_left_out]]
    rows += [[f"records left out of {config}", count] for config, count in done.left_out.items()]
    return CardSection(
        f"{done.mode.capitalize()}: not the maintainer's release", text, Table(["licensed strings", "count"], rows)
    )
