"""The dataset card (README.md) of a release: HF YAML front matter and a Markdown body."""

from __future__ import annotations

from typing import Any

from datasets import Features
from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.splits import SplitDict, SplitInfo
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCardData

from clinical_corpora.builders.base import CardSection, Table
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.validation.gates import GateResult


def render_card(
    manifest: CorpusManifest,
    features: dict[str, Features],
    row_counts: dict[str, dict[str, int]],
    sections: list[CardSection],
    gates: list[GateResult],
    provenance: dict[str, Any],
) -> str:
    """The whole README.md."""
    return f"---\n{_front_matter(manifest, features, row_counts)}\n---\n\n" + "\n".join(
        _section_markdown(section)
        for section in [
            *_intro(manifest, row_counts),
            *sections,
            _gates_section(gates),
            _provenance_section(manifest, provenance),
            _citation_section(manifest),
        ]
    )


def _front_matter(
    manifest: CorpusManifest, features: dict[str, Features], row_counts: dict[str, dict[str, int]]
) -> str:
    data = DatasetCardData(
        pretty_name=manifest.pretty_name,
        license=manifest.license,
        task_categories=manifest.task_categories or None,
        tags=manifest.tags or None,
    )
    MetadataConfigs(
        {
            config: {
                "data_files": [{"split": split, "path": f"data/{config}/{split}-*.parquet"} for split in spec.splits]
            }
            for config, spec in manifest.configs.items()
        }
    ).to_dataset_card_data(data)
    infos = DatasetInfosDict()
    for config, config_features in features.items():
        splits = SplitDict()
        for split, rows in row_counts[config].items():
            splits.add(SplitInfo(name=split, num_examples=rows))
        infos[config] = DatasetInfo(features=config_features, splits=splits)
    infos.to_dataset_card_data(data)
    return data.to_yaml()


def _intro(manifest: CorpusManifest, row_counts: dict[str, dict[str, int]]) -> list[CardSection]:
    first = next(iter(manifest.configs))
    loading = (
        f"```python\nfrom datasets import load_dataset\n\n"
        f'dataset = load_dataset("path/to/{manifest.name}/{manifest.version}", "{first}")\n```'
    )
    access = f"Access: {'public' if manifest.access.public else 'restricted'}; {manifest.access.how}"
    rows = [[config, split, count] for config, splits in row_counts.items() for split, count in splits.items()]
    return [
        CardSection(
            f"{manifest.pretty_name} ({manifest.name} {manifest.version})",
            f"{manifest.description.strip()}\n\n{access}\n\nHomepage: {manifest.homepage}",
        ),
        CardSection("Configs", "\n".join(f"- `{name}`: {spec.description}" for name, spec in manifest.configs.items())),
        CardSection("How to load", loading),
        CardSection("Rows per split", table=Table(["config", "split", "rows"], rows)),
    ]


def _gates_section(gates: list[GateResult]) -> CardSection:
    rows: list[list[object]] = [[g.gate, "pass" if g.success else "FAIL", g.observed, g.expected] for g in gates]
    for gate in gates:
        for detail in gate.details:
            observed = detail["observed"].get("observed_value", detail["observed"].get("unexpected_count", ""))
            rows.append(
                [
                    f"{detail['table']}: {detail['expectation']} {_kwargs_text(detail['kwargs'])}",
                    "pass" if detail["success"] else "FAIL",
                    observed,
                    "",
                ]
            )
    return CardSection(
        "Validation",
        "Every gate this release passed, with the value it observed.",
        Table(["gate", "result", "observed", "expected"], rows),
    )


def _kwargs_text(kwargs: dict[str, Any]) -> str:
    return ", ".join(f"{key}={value}" for key, value in kwargs.items())


def _provenance_section(manifest: CorpusManifest, provenance: dict[str, Any]) -> CardSection:
    by_source: dict[str, list[dict[str, Any]]] = {}
    for item in provenance["inputs"]:
        by_source.setdefault(item["source"], []).append(item)
    rows: list[list[object]] = [
        [
            source,
            items[0]["file"] if len(items) == 1 else f"{len(items)} files",
            sum(item["bytes"] for item in items),
            items[0]["sha256"] if len(items) == 1 else "per file in manifest.json",
        ]
        for source, items in by_source.items()
    ]
    text = (
        f"Built by `{manifest.builder}` version {provenance['builder_version']} with clinical-corpora "
        f"{provenance['package_version']}. Records read {provenance['counts']['read']}, written "
        f"{provenance['counts']['written']}, rejected {provenance['counts']['rejected']}."
    )
    return CardSection("Provenance", text, Table(["source", "files", "bytes", "sha256"], rows))


def _citation_section(manifest: CorpusManifest) -> CardSection:
    return CardSection("Citation", f"```bibtex\n{manifest.citation.strip()}\n```")


def _section_markdown(section: CardSection) -> str:
    parts = [f"## {section.title}\n"]
    if section.text:
        parts.append(section.text.strip() + "\n")
    if section.table is not None:
        parts.append(markdown_table(section.table))
    return "\n".join(parts)


def markdown_table(table: Table) -> str:
    """A GitHub-flavoured Markdown table (pipes in cells escaped)."""

    def cell(value: object) -> str:
        text = f"{value:.4f}" if isinstance(value, float) else str(value)
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(map(cell, table.columns)) + " |", "|" + "|".join("---" for _ in table.columns) + "|"]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in table.rows]
    return "\n".join(lines) + "\n"
