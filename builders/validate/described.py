"""A release's descriptions drawn again: its published numbers recomputed, and its card (front matter
included), figures and croissant.json drawn from its data, manifest and validation.json, byte for byte the
files it holds. Nothing can be planted in them: a file that differs by a byte fails, and so does a figure the
card does not draw."""

from __future__ import annotations

from clinical_corpora.builders.release.card.describe import FullRelease, describe_full, published
from clinical_corpora.builders.release.opened import OpenedRelease
from clinical_corpora.builders.text_free.card import describe_text_free
from clinical_corpora.builders.validate.gate import problems_gate
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.validation.gates import GateResult
from clinical_corpora.validation.published import GATE

DESCRIPTIONS = "card, figures and croissant.json as the package draws them from the data"
BASELINES_DIFFER = "validation.json: its baselines' scores are not those the baselines give on the release's rows"


def full_release(opened: OpenedRelease, corpus: CorpusManifest) -> FullRelease:
    """What a full release's descriptions are drawn from: its statistics and baselines computed again from its
    rows."""
    statistics = opened.builder.statistics(opened.view)
    baselines = opened.builder.baselines(opened.view) or None
    validation = opened.validation.model_copy(update={"baselines": baselines})
    return FullRelease(corpus, opened.builder, opened.manifest, validation, opened.view, statistics)


def published_gate(release: FullRelease) -> GateResult:
    """The ``published`` gate recomputed; failed when validation.json records another verdict."""
    gate = published(release)[1]
    recorded = next((g for g in release.validation.gates if g.gate == GATE), None)
    if recorded != gate.record():
        problem = "validation.json records another comparison with the published numbers than the data gives"
        return problems_gate(GATE, [problem], gate.expected)
    return gate


def descriptions_gate(opened: OpenedRelease, drawn: dict[str, bytes], problems: list[str] | None = None) -> GateResult:
    """The release's descriptions against ``drawn``: each the same bytes, and no figure it does not draw (after
    the ``problems`` already found)."""
    problems = list(problems or [])
    for name, data in drawn.items():
        path = opened.listed(name)
        if path is None:
            problems.append(f"{name}: missing (the package draws it for this release)")
        elif path.read_bytes() != data:
            problems.append(f"{name}: differs from what the package draws from the release's data and records")
    held = {entry.file for entry in opened.manifest.outputs if entry.file.startswith("figures/")}
    problems += [f"{name}: a figure the card does not draw" for name in sorted(held - set(drawn))]
    return problems_gate("descriptions", problems, DESCRIPTIONS, f"{len(drawn)} files drawn, {len(problems)} differ")


def full_descriptions(release: FullRelease, opened: OpenedRelease) -> GateResult:
    recorded = opened.validation.baselines
    problems = [] if recorded == release.validation.baselines else [BASELINES_DIFFER]
    return descriptions_gate(opened, describe_full(release), problems)


def text_free_descriptions(opened: OpenedRelease, corpus: CorpusManifest) -> GateResult:
    drawn = describe_text_free(corpus, opened.builder, opened.manifest, opened.full_manifest, opened.view)
    return descriptions_gate(opened, drawn)
