"""The dataset card of a text-free release: what was removed, what restores it, and the exact commands."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from datasets import Features
from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.splits import SplitDict, SplitInfo
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCardData

from clinical_corpora.builders.contract.base import Builder
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.card.baselines import baselines_of
from clinical_corpora.builders.release.card.changes import changes_sections
from clinical_corpora.builders.release.card.croissant import CROISSANT_FILE, CroissantRelease, croissant_bytes
from clinical_corpora.builders.release.card.hub_metadata import (
    add_dataset_infos,
    config_version,
    hub_metadata,
    licence_metadata,
    splits_note,
)
from clinical_corpora.builders.release.card.markdown import CARD_FILE, plain, section_markdown
from clinical_corpora.builders.release.card.phi import phi_sections
from clinical_corpora.builders.release.folder import release_folder
from clinical_corpora.builders.text_free.layout import TEXT_FREE_SUFFIX
from clinical_corpora.core.card import CardSection, Table
from clinical_corpora.core.changes import ReleaseChanges
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.release_manifest import LeakObserved, ReleaseManifest
from clinical_corpora.core.release_records import FULL_FOLDER, VALIDATION_FILE, read_validation
from clinical_corpora.schemas.features import features_for
from clinical_corpora.schemas.licensed import SOURCE_DOCUMENTS, licensed_tree, text_free_features


@dataclass(frozen=True)
class TextFreeRelease:
    """What a text-free release's card says: its corpus and version, its features and rows per config, the
    licensed fields removed, the source documents by source, its leak gate and the changes it records."""

    manifest: CorpusManifest
    version: str
    features: dict[str, Features]
    rows: dict[str, dict[str, int]]
    licensed: dict[str, list[str]]
    documents: dict[str, int]
    gate: LeakObserved
    changes: ReleaseChanges | None = None
    phi: list[CardSection] = field(default_factory=list)
    """The PHI gate's section (``card/phi.py``)."""
    baselines: list[CardSection] = field(default_factory=list)
    """The full release's baselines table (``card/baselines.py``), from ``full/validation.json``."""

    @property
    def folder_name(self) -> str:
        return f"{release_folder(self.manifest.name, self.version)}{TEXT_FREE_SUFFIX}"


def describe_text_free(
    corpus: CorpusManifest, builder: Builder, manifest: ReleaseManifest, full: ReleaseManifest, view: ReleaseView
) -> dict[str, bytes]:
    """A text-free release's card and croissant.json, from its manifest, the full release's and its rows."""
    models = {config: builder.CONFIGS[config] for config in corpus.configs if config in view.configs()}
    features = {
        config: text_free_features(features_for(model), licensed_tree(model)) for config, model in models.items()
    }
    rows = {config: {split: view.split_rows(config, split) for split in view.splits(config)} for config in models}
    leak = next((gate.observed for gate in manifest.gates if gate.gate == "leak"), None)
    if not isinstance(leak, LeakObserved):
        raise ClincorpError("manifest.json records no leak gate: not a text-free release this package wrote")
    licensed, documents = manifest.licensed_fields or {}, manifest.documents or {}
    full_validation = read_validation(view.folder / FULL_FOLDER, f"{view.folder.name}/{FULL_FOLDER}/{VALIDATION_FILE}")
    baselines = baselines_of(corpus, view, builder.note_sources(view), full, full_validation)
    if baselines is not None:
        measured = " The scores were measured on the full release's rows, before their licensed text was removed."
        baselines = replace(baselines, text=baselines.text + measured)
    release = TextFreeRelease(
        corpus, manifest.version, features, rows, licensed, documents, leak, manifest.changes, phi_sections(manifest),
        [baselines] if baselines else [],
    )  # fmt: skip
    splits = {config: [split for split, count in counts.items() if count] for config, counts in rows.items()}
    croissant = CroissantRelease(
        corpus, manifest.version, features, splits, full.inputs or {}, manifest.shard_hashes(), text_free=True
    )
    card = render_text_free_card(release).encode("utf-8")
    return {CARD_FILE: card, CROISSANT_FILE: croissant_bytes(view.folder, croissant)}


def render_text_free_card(release: TextFreeRelease) -> str:
    """README.md: front matter loading the text-free configs, then what a modeller needs to restore them."""
    manifest, version, features, rows = release.manifest, release.version, release.features, release.rows
    documents, observed, folder_name = release.documents, release.gate, release.folder_name
    first = next(iter(features))
    removed, inputs, split_rows = _tables(release)
    sources = " ".join(f"--source {name}=PATH" for name in documents)
    body = [
        f"## {manifest.pretty_name} ({manifest.name} {version}, text-free)\n",
        "**Text-free release: it holds no licensed text and may be shared.** It has the configs, splits and "
        "rows of the full release, with ids, offsets, labels and chains as they are; every field holding "
        "text of a licensed source was removed and replaced by a recipe that restores it from your own "
        "copy of the sources: a list of segments, each a slice (`document`, `start`, `end`) of one of the "
        f"row's `{SOURCE_DOCUMENTS}` (its locator `<source>:<key>` and the sha256 of its text) or a short "
        "`literal` (`document` -1) no source document holds.\n",
        f"{plain(manifest.description.strip())}\n",
        f"Access to the sources: {plain(manifest.access.how.strip())}\n",
        *(
            [
                "Terms of the full data (the annotations in this release may carry their own; share it only as "
                f"they allow): {plain(' '.join(manifest.sharing.terms.split()))}\n"
            ]
            if manifest.sharing is not None
            else []
        ),
        "## What was removed\n",
        removed.markdown(),
        "## What restores it\n",
        "The documents the text comes from, by source:\n",
        inputs.markdown(),
        "With your copies of those sources and clinical-corpora installed:\n",
        f"```bash\nclincorp rehydrate {folder_name} {sources} --out releases\n```\n",
        f"writes `releases/{manifest.name}/{release_folder(manifest.name, version)}/`, byte for byte the full "
        "release the maintainer built "
        "(every file is checked against the sha256 recorded in `full/manifest.json`); a document whose text "
        "differs from the recorded hash (another version of the source, an edited file) is reported by "
        "locator with the records using it, and the command fails unless `--on-error quarantine`. `--check` "
        "first says, per source, which documents match, differ (and how) or are missing; `--re-anchor` "
        "relocates the spans of documents that differ with the evidence in `anchors.parquet` (hashes of the "
        "normalised text and of 32-character blocks, no text), keeps a span only when every character of it "
        "is confirmed in your copy, names the others, and marks the folder re-anchored: not this release. "
        "Then:\n",
        f'```python\nfrom datasets import load_dataset\n\ndataset = load_dataset("releases/{manifest.name}/'
        f'{release_folder(manifest.name, version)}", "{first}")\n```\n',
        "## Rows per split\n",
        f"{splits_note(rows)}\n",
        split_rows.markdown(),
        *(section_markdown(section) for section in [*release.baselines, *changes_sections(release.changes)]),
        "## Leak gate\n",
        f"No file of this release (parquet values and metadata, JSON, cards) shares a run of more than "
        f"{observed.limit} characters with a source document, runs without a letter and label names aside. "
        f"Longest shared run found: {observed.longest_shared_run} characters (runs shorter than "
        f"{observed.measured_from} are not measured). `{FULL_FOLDER}/` holds the full release's manifest, "
        "validation results, input list and rejects, checked by the same gate; `clincorp rehydrate` draws the "
        "full release's card, figures and croissant.json again from the restored rows.\n",
        *(section_markdown(section) for section in release.phi),
        "## Citation\n",
        f"```bibtex\n{manifest.citation.strip()}\n```\n",
    ]
    return f"---\n{_front_matter(manifest, version, features, rows)}\n---\n\n" + "\n".join(body)


def _tables(release: TextFreeRelease) -> tuple[Table, Table, Table]:
    """The card's tables: the fields replaced by recipes, the source documents by source, the rows by split."""
    removed = Table(
        ["config", "fields replaced by recipes"],
        [[config, ", ".join(f"`{path}`" for path in paths) or "none"] for config, paths in release.licensed.items()],
    )
    inputs = Table(
        ["source", "documents", "what it is and where to get it"],
        [
            [name, count, plain(" ".join(release.manifest.sources[name].description.split()))]
            for name, count in release.documents.items()
        ],
    )
    split_rows = Table(
        ["config", "split", "rows"],
        [[config, split, count] for config, splits in release.rows.items() for split, count in splits.items()],
    )
    return removed, inputs, split_rows


def _front_matter(
    manifest: CorpusManifest, version: str, features: dict[str, Features], rows: dict[str, dict[str, int]]
) -> str:
    data = DatasetCardData(
        pretty_name=f"{manifest.pretty_name} (text-free)",
        license=manifest.license,
        **hub_metadata(manifest, rows),
        tags=[*(manifest.tags or []), "text-free"],
        **licence_metadata(manifest),
    )
    MetadataConfigs(
        {
            config: {
                "data_files": [
                    {"split": split, "path": f"data/{config}/{split}-*.parquet"}
                    for split, count in splits.items()
                    if count  # an empty split is not declared: datasets refuses to load it
                ],
                **({"default": True} if config == next(iter(rows)) else {}),
                **config_version(version),
            }
            for config, splits in rows.items()
        }
    ).to_dataset_card_data(data)
    infos = DatasetInfosDict()
    for config, config_features in features.items():
        split_dict = SplitDict()
        for split, count in rows[config].items():
            if count:
                split_dict.add(SplitInfo(name=split, num_examples=count))
        infos[config] = DatasetInfo(features=config_features, splits=split_dict)
    add_dataset_infos(data, infos, manifest, version, text_free=True)
    return data.to_yaml()
