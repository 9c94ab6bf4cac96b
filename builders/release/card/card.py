"""The dataset card (README.md) of a release: HF YAML front matter and a Markdown body."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from datasets import ClassLabel, Features, List
from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.splits import SplitDict, SplitInfo
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCardData
from pydantic import BaseModel

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.card.changes import changes_sections
from clinical_corpora.builders.release.card.hub_metadata import (
    add_dataset_infos,
    config_version,
    hub_metadata,
    licence_metadata,
    splits_note,
)
from clinical_corpora.builders.release.card.markdown import plain, section_markdown
from clinical_corpora.builders.release.card.phi import phi_sections
from clinical_corpora.builders.release.folder import release_folder
from clinical_corpora.core.card import CardSection, Cell, Table
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.release_manifest import LeakObserved, ReleaseManifest, option_text
from clinical_corpora.core.release_records import READER_CHANGES_FILE, ExpectationDetail, GateRecord
from clinical_corpora.schemas.features import LABEL_NAME_SUFFIX, features_for
from clinical_corpora.validation.gates import violation_text


@dataclass(frozen=True)
class SplitSize:
    """A split's size as ``datasets`` records it: Arrow bytes in memory (num_bytes) and parquet bytes on disk."""

    num_bytes: int
    parquet_bytes: int


def corpus_features(corpus: CorpusManifest, models: Mapping[str, type[BaseModel]]) -> dict[str, Features]:
    """The Features of each config the corpus declares, from its builder's record models."""
    return {name: features_for(models[name]) for name in corpus.configs}


def declared_rows(corpus: CorpusManifest, view: ReleaseView) -> dict[str, dict[str, int]]:
    """Rows of each declared config and split (0 for a split without rows)."""
    return {
        config: {split: view.split_rows(config, split) for split in spec.splits}
        for config, spec in corpus.configs.items()
    }


def split_sizes(view: ReleaseView, configs: Iterable[str]) -> dict[str, dict[str, SplitSize]]:
    """The size of every split of ``configs`` in a written release (:meth:`ReleaseView.arrow_bytes` in memory,
    the parquet files' bytes on disk)."""
    sizes: dict[str, dict[str, SplitSize]] = {}
    for config in configs:
        for split in view.splits(config):
            shards = view.shards(config, split)
            arrow = sum(view.arrow_bytes(shard) for shard in shards)
            sizes.setdefault(config, {})[split] = SplitSize(arrow, sum(shard.stat().st_size for shard in shards))
    return sizes


@dataclass(frozen=True)
class CardFacts:
    """What a release's card says: its corpus, version, features and rows per config and split, the builder's
    sections (statistics, agreement), its gates, its provenance (as manifest.json records it) and each split's
    size (:func:`split_sizes`, the front matter's ``num_bytes``)."""

    manifest: CorpusManifest
    version: str
    features: dict[str, Features]
    row_counts: dict[str, dict[str, int]]
    sections: list[CardSection]
    gates: list[GateRecord]
    provenance: ReleaseManifest
    sizes: dict[str, dict[str, SplitSize]] = field(default_factory=dict)


def render_card(card: CardFacts) -> str:
    """The whole README.md; a sample release's card says first that its data is invented."""
    manifest, version, features, row_counts = card.manifest, card.version, card.features, card.row_counts
    sections, gates, provenance = card.sections, card.gates, card.provenance
    matter = front_matter(manifest, version, features, row_counts, card.sizes)
    return f"---\n{matter}\n---\n\n{_sample_banner(provenance)}" + "\n".join(
        section_markdown(section)
        for section in [
            *intro_sections(manifest, row_counts, version),
            *licence_sections(manifest),
            _label_names_section(manifest, features, version),
            *sections,
            *_gates_sections(gates, provenance),
            *phi_sections(provenance),
            *reader_changes_sections(provenance),
            *changes_sections(provenance.changes),
            provenance_section(manifest, provenance),
            citation_section(manifest),
        ]
    )


def front_matter(
    manifest: CorpusManifest,
    version: str,
    features: dict[str, Features],
    row_counts: dict[str, dict[str, int]],
    sizes: dict[str, dict[str, SplitSize]],
) -> str:
    extra: dict[str, Any] = licence_metadata(manifest) | _gating_metadata(manifest)
    data = DatasetCardData(
        pretty_name=manifest.pretty_name,
        license=manifest.license,
        **hub_metadata(manifest, row_counts),
        tags=manifest.tags or None,
        **extra,
    )
    MetadataConfigs(
        {
            config: {
                "data_files": [
                    {"split": split, "path": f"data/{config}/{split}-*.parquet"}
                    for split in spec.splits
                    if row_counts[config].get(split)  # an empty split is not declared: datasets refuses to load it
                ],
                **({"default": True} if config == manifest.default_config else {}),
                **config_version(version),
            }
            for config, spec in manifest.configs.items()
        }
    ).to_dataset_card_data(data)
    infos = DatasetInfosDict()
    for config, config_features in features.items():
        splits = SplitDict()
        config_sizes = sizes.get(config, {})
        for split, rows in row_counts[config].items():
            if not rows:
                continue
            size = config_sizes.get(split)
            splits.add(SplitInfo(name=split, num_examples=rows, num_bytes=size.num_bytes if size else 0))
        infos[config] = DatasetInfo(
            features=config_features,
            splits=splits,
            dataset_size=sum(size.num_bytes for size in config_sizes.values()) or None,
            download_size=sum(size.parquet_bytes for size in config_sizes.values()) or None,
        )
    add_dataset_infos(data, infos, manifest, version, text_free=False)
    return data.to_yaml()


def _gating_metadata(manifest: CorpusManifest) -> dict[str, Any]:
    """The Hub's access-request form (``extra_gated_*``), for a corpus whose full release is restricted."""
    gating = manifest.gating
    if gating is None:
        return {}
    fields = {label: kind if isinstance(kind, str) else kind.model_dump() for label, kind in gating.fields.items()}
    metadata = {"extra_gated_prompt": gating.prompt.strip(), "extra_gated_fields": fields}
    if gating.button_content:
        metadata["extra_gated_button_content"] = gating.button_content
    return metadata


def _sample_banner(provenance: ReleaseManifest) -> str:
    """Empty for a real release; else a first paragraph saying the data is invented, and which inputs."""
    invented = [name for name, entry in (provenance.inputs or {}).items() if entry.sample]
    if not invented:
        return ""
    return (
        "> **Sample release: the data is invented.** It was built from the embedded samples of "
        f"{', '.join(invented)}, which the package authors invented to test the pipeline: it is not the "
        "corpus, and no result should be reported on it. A real release gives every required source with "
        "`--source NAME=PATH`.\n\n"
    )


def intro_sections(manifest: CorpusManifest, row_counts: dict[str, dict[str, int]], version: str) -> list[CardSection]:
    folder = f"path/to/{manifest.name}/{release_folder(manifest.name, version)}"
    others = [name for name in manifest.configs if name != manifest.default_config]
    loading = (
        f"```python\nfrom datasets import load_dataset\n\n"
        f'dataset = load_dataset("{folder}")  # the default config, {manifest.default_config}\n'
        + "".join(f'{name} = load_dataset("{folder}", "{name}")\n' for name in others)
        + "```"
    )
    access = f"Access: {'public' if manifest.access.public else 'restricted'}; {manifest.access.how}"
    rows: list[list[Cell]] = [
        [config, split, count] for config, splits in row_counts.items() for split, count in splits.items()
    ]
    return [
        CardSection(
            f"{manifest.pretty_name} ({manifest.name} {version})",
            f"{plain(manifest.description.strip())}\n\n{plain(access)}\n\nHomepage: {manifest.homepage}",
        ),
        CardSection(
            "Configs", "\n".join(f"- `{name}`: {plain(spec.description)}" for name, spec in manifest.configs.items())
        ),
        CardSection("How to load", loading),
        CardSection("Rows per split", splits_note(row_counts), Table(["config", "split", "rows"], rows)),
    ]


def _label_names_section(manifest: CorpusManifest, features: dict[str, Features], version: str) -> CardSection:
    """How to filter by label name without ``datasets``, with a query on this release's first label field."""
    text = (
        "Outside `datasets` (pandas, polars, duckdb) every ClassLabel field `f` has a string field "
        f"`f{LABEL_NAME_SUFFIX}` beside it holding the label name (written from the same value as the id; "
        "`clincorp validate` checks that the two agree)."
    )
    query = _label_query(features, f"path/to/{manifest.name}/{release_folder(manifest.name, version)}")
    return CardSection("Label names", text + (f" For example, in duckdb:\n\n```sql\n{query}\n```" if query else ""))


def _label_query(features: dict[str, Features], release: str) -> str | None:
    """A duckdb query filtering a config by the first label of its first top-level or list-item ClassLabel."""
    for config, config_features in features.items():
        source = f"read_parquet('{release}/data/{config}/*.parquet')"
        for name, feature in config_features.items():
            if isinstance(feature, ClassLabel):
                return f"SELECT * FROM {source}\nWHERE {name}{LABEL_NAME_SUFFIX} = '{feature.names[0]}'"
            if isinstance(feature, List) and isinstance(feature.feature, dict):
                for inner, label in feature.feature.items():
                    if isinstance(label, ClassLabel):
                        return (
                            f"SELECT item.* FROM (SELECT unnest({name}) AS item FROM {source})\n"
                            f"WHERE item.{inner}{LABEL_NAME_SUFFIX} = '{label.names[0]}'"
                        )
    return None


def licence_sections(manifest: CorpusManifest) -> list[CardSection]:
    """Licence and sharing: which variant may be passed on; for restricted data, what it holds and what not
    to do with it."""
    licence = (
        f"[{manifest.license_name}]({manifest.license_link})" if manifest.license_name else f"`{manifest.license}`"
    )
    text_free = f"`clincorp release {manifest.name} --text-free`"
    if manifest.full_release_shareable:
        sharing = (
            f"Licence: {licence}. This release may be shared under that licence, and so may its text-free "
            f"variant ({text_free})."
        )
    else:
        sharing = (
            f"Licence: {licence}. **This full release may not be redistributed**: it embeds licensed text. "
            f"What may be shared is its text-free variant ({text_free}: locators, hashes, offsets, ids and "
            "labels, no licensed text), from which each holder of the inputs restores the full release."
        )
    if manifest.sharing is not None:
        sharing += f"\n\n{plain(manifest.sharing.terms.strip())}"
    if manifest.gating is not None:
        sharing += (
            "\n\nOn the Hugging Face Hub, keep the repository private or gated with manual approval: the "
            "front matter's access-request form (extra_gated_prompt, extra_gated_fields) asks each requester "
            "to confirm the agreements above."
        )
    sections = [CardSection("Licence and sharing", sharing)]
    if manifest.sharing is not None and not manifest.sharing.full_release:
        sections.append(
            CardSection(
                "Personal and sensitive information — do not redistribute",
                f"{plain(manifest.sharing.personal_information.strip())}\n\n"
                "Whoever holds this release is bound by the agreements above: do not try to identify any "
                "person or institution in it, do not pass it on (share the text-free variant instead), keep it "
                "on storage only you and others bound by the same agreements can read, and report anything that "
                "could identify a person to the data's provider. Do not upload it to a public place or send its "
                "text to an online service (such as a hosted language model) the agreements do not cover.",
            )
        )
    return sections


def _gates_sections(gates: list[GateRecord], provenance: ReleaseManifest) -> list[CardSection]:
    """The Validation section (failed gates first, then warnings, skipped ones and passed ones; each expectation
    below) and, when an expectation found offending rows, a Violations section listing them."""
    order = {"fail": 0, "warning": 1, "skipped": 2, "pass": 3}
    ranked = sorted(gates, key=lambda gate: order[gate.status])
    rows: list[list[Cell]] = [[g.gate, _result(g.status), _observed(g.observed), g.expected] for g in ranked]
    details = [detail for gate in ranked for detail in gate.details if isinstance(detail, ExpectationDetail)]
    for detail in sorted(details, key=lambda detail: detail.success):
        observed = detail.observed.get("observed_value", detail.observed.get("unexpected_count", ""))
        tolerated = detail.success and detail.violations
        rows.append(
            [
                f"{detail.table}: {detail.expectation} {_kwargs_text(detail.kwargs)}",
                "pass (violations tolerated by mostly)" if tolerated else _result("pass" if detail.success else "fail"),
                observed if isinstance(observed, str | int | float | bool) or observed is None else str(observed),
                "",
            ]
        )
    sections = [
        CardSection(
            "Validation", _gates_summary(ranked, provenance), Table(["gate", "result", "observed", "expected"], rows)
        )
    ]
    violations = _violations_table(details)
    if violations.rows:
        sections.append(
            CardSection(
                "Violations",
                "The rows each expectation found unexpected (at most 20 per expectation; validation.json lists "
                "the same), including those an expectation's `mostly` tolerates.",
                violations,
            )
        )
    return sections


def _result(status: str) -> str:
    return {"pass": "pass", "fail": "FAIL", "skipped": "SKIPPED", "warning": "WARNING"}[status]


def _observed(observed: object) -> Cell:
    """A gate's observed value as the card shows it."""
    if isinstance(observed, LeakObserved):
        return f"longest shared run {observed.longest_shared_run} characters (limit {observed.limit})"
    return observed if isinstance(observed, str | int | float | bool) or observed is None else str(observed)


def _gates_summary(gates: list[GateRecord], provenance: ReleaseManifest) -> str:
    failed = [gate.gate for gate in gates if gate.status == "fail"]
    skipped = [f"{gate.gate} ({gate.reason})" for gate in gates if gate.status == "skipped"]
    if failed:
        text = f"This build FAILED {len(failed)} gate(s), listed first: {', '.join(failed)}. It is not a release."
    elif skipped:
        text = "Every gate that ran passed, with the value it observed."
    else:
        text = "Every gate of this release passed, with the value it observed."
    if skipped:
        text += f" Skipped (not run, so neither passed nor failed): {'; '.join(skipped)}."
    warned = [f"{gate.gate} ({gate.warning})" for gate in gates if gate.status == "warning"]
    if warned:
        text += f" Passed with a WARNING (not a failure): {'; '.join(warned)}."
    overlay = provenance.gate_overlay
    if overlay:
        changes = "; ".join(overlay.changes) or "no value changed"
        text += (
            f"\n\nThe gates were changed for this release by `{overlay.file}` (clincorp --gates, sha256 "
            f"{overlay.sha256}): {changes}."
        )
    return text


def _violations_table(details: list[ExpectationDetail]) -> Table:
    rows: list[list[Cell]] = []
    for detail in details:
        name = f"{detail.table}: {detail.expectation}"
        total = detail.observed.get("unexpected_count", len(detail.violations))
        for violation in detail.violations:
            shown = violation.model_dump(exclude_none=True)
            rows.append(
                [name, "pass (tolerated)" if detail.success else "FAIL", _observed(total), violation_text(shown)]
            )
    return Table(["expectation", "result", "unexpected rows", "offending row"], rows)


LISTED_VALUES = 8
"""An expectation argument holding more values than this is summarised in the card (validation.json lists it)."""


def _kwargs_text(kwargs: dict[str, Any]) -> str:
    return ", ".join(f"{key}={_argument_text(value)}" for key, value in kwargs.items())


def _argument_text(value: object) -> str:
    """An expectation's argument; a long list as its first values and a link to validation.json."""
    if isinstance(value, list | tuple) and len(value) > LISTED_VALUES:
        shown = ", ".join(map(repr, value[:3]))
        return f"[{shown}, … {len(value):,} values in all, see [validation.json](validation.json)]"
    return str(value)


def reader_changes_sections(provenance: ReleaseManifest) -> list[CardSection]:
    """What the readers read otherwise than written, by kind with the first lines of each (none: no section)."""
    changes = provenance.reader_changes or {}
    if not changes:
        return []
    total = sum(entry.count for entry in changes.values())
    text = (
        f"The readers read {total} line(s) of the input otherwise than written (released as read, not rejected); "
        f"[{READER_CHANGES_FILE}]({READER_CHANGES_FILE}) lists each with its file and line."
    )
    rows: list[list[Cell]] = [[kind, entry.count, "; ".join(entry.first)] for kind, entry in changes.items()]
    return [CardSection("What the readers changed", text, Table(["kind", "lines", "first lines"], rows))]


def provenance_section(manifest: CorpusManifest, provenance: ReleaseManifest) -> CardSection:
    rows: list[list[Cell]] = [
        [source, "invented sample" if entry.sample else "real", entry.files, entry.bytes, entry.sha256]
        for source, entry in (provenance.inputs or {}).items()
    ]
    counts = provenance.counts
    assert counts is not None, "a full release counts its records"
    text = (
        f"Built by `{manifest.builder}` version {provenance.builder_version} with clinical-corpora "
        f"{provenance.package_version}. Records read {counts.read}, written {counts.written}, rejected "
        f"{counts.rejected}. Each source's sha256 is that of its files' `sha256  file` lines, listed one file a "
        "line in inputs.jsonl."
    )
    if provenance.options:
        given = ", ".join(f"--option {name}={option_text(value)}" for name, value in provenance.options.items())
        text += f" The builder's options differ from its defaults: {given}."
    overridden = provenance.overrides.max_rejects if provenance.overrides is not None else None
    if overridden is not None:
        text += (
            f" The max_rejects gate was overridden for this run with --max-rejects {overridden} "
            f"(corpus.yaml: {manifest.gates.max_rejects})."
        )
    return CardSection("Provenance", text, Table(["source", "input", "files", "bytes", "sha256"], rows))


def citation_section(manifest: CorpusManifest) -> CardSection:
    text = f"```bibtex\n{manifest.citation.strip()}\n```"
    if manifest.data_citations:
        entries = "\n\n".join(entry.strip() for entry in manifest.data_citations)
        text += f"\n\nThe data's providers ask to be cited too:\n\n```bibtex\n{entries}\n```"
    return CardSection("Citation", text)
