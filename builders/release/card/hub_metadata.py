"""What a card's front matter tells the Hugging Face Hub (search fields: language, size, tasks, annotations,
sources) and ``datasets`` (each config's ``DatasetInfo``: description, citation, homepage, licence, version)."""

from __future__ import annotations

import re
from typing import Any

from datasets.info import DatasetInfosDict
from huggingface_hub import DatasetCardData

from clinical_corpora.core.manifest import SAMPLE_TAG, CorpusManifest

INVENTED = (
    "Synthetic data: this is a sample release, built from inputs the clinical-corpora authors invented in "
    "the raw format of the real sources to test the pipeline. No text or annotation in it comes from a "
    "real patient, case report or annotator, and no result should be reported on it."
)
TEXT_FREE = (
    " Text-free variant: every licensed text field holds a recipe (slices of the row's source "
    "documents, each named by a locator with the sha256 of its text, and short literals) that "
    "`clincorp rehydrate` turns back into the text from the user's own copy of the sources."
)

SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
)
"""The Hub's size buckets (``size_categories``), by the number of rows they hold fewer than."""


def size_category(rows: int) -> str:
    """The Hub bucket of a dataset of ``rows`` rows."""
    return next((bucket for limit, bucket in SIZE_CATEGORIES if rows < limit), "n>1B")


def hub_metadata(manifest: CorpusManifest, row_counts: dict[str, dict[str, int]]) -> dict[str, Any]:
    """DatasetCardData's search fields; the size counts the rows of the corpus's main (default) config."""
    main = row_counts.get(manifest.default_config) or next(iter(row_counts.values()), {})
    return {
        "language": manifest.language,
        "size_categories": [size_category(sum(main.values()))],
        "task_categories": manifest.task_categories or None,
        "task_ids": manifest.task_ids or None,
        "annotations_creators": manifest.annotations_creators or None,
        "source_datasets": manifest.source_datasets or None,
    }


def release_description(manifest: CorpusManifest, sample: bool, text_free: bool) -> str:
    """The corpus's description on one line; a text-free variant says what its recipes are, a sample that it
    is invented."""
    text = " ".join(manifest.description.split()) + (TEXT_FREE if text_free else "")
    return f"{INVENTED} {text}" if sample else text


def licence_text(manifest: CorpusManifest) -> str:
    """The licence by name and link (``other`` alone names none)."""
    if manifest.license_name:
        return f"{manifest.license_name} ({manifest.license_link})" if manifest.license_link else manifest.license_name
    return manifest.license


def licence_metadata(manifest: CorpusManifest) -> dict[str, Any]:
    """The Hub's ``license_name`` and ``license_link``, for a corpus under a licence of its own (``other``)."""
    licence = {"license_name": manifest.license_name, "license_link": manifest.license_link}
    return {key: value for key, value in licence.items() if value}


def datasets_version(version: str) -> str:
    """A release's version as ``datasets`` takes it (``MAJOR.MINOR.PATCH``: ``1.3.1+sample`` is ``1.3.1``)."""
    found = re.match(r"\d+\.\d+\.\d+", version)
    if found is None:
        raise ValueError(f"release version {version!r} does not start with MAJOR.MINOR.PATCH")
    return found.group()


def add_dataset_infos(
    data: DatasetCardData, infos: DatasetInfosDict, manifest: CorpusManifest, version: str, text_free: bool
) -> None:
    """``dataset_info`` in the front matter: each config's features and splits, and the description, citation,
    homepage, licence and version ``datasets.load_dataset`` reads into its ``DatasetInfo`` (the version needs
    the config's ``version`` too: see :func:`config_version`)."""
    infos.to_dataset_card_data(data)
    described = {
        "description": release_description(manifest, version.endswith(SAMPLE_TAG), text_free),
        "citation": manifest.citation.strip(),
        "homepage": manifest.homepage,
        "license": licence_text(manifest),
        "version": datasets_version(version),
    }
    entries = data["dataset_info"]
    for entry in entries if isinstance(entries, list) else [entries]:
        entry.update(described)


def config_version(version: str) -> dict[str, str]:
    """A config's ``version`` in the front matter: ``datasets`` sets ``DatasetInfo.version`` from the config's."""
    return {"version": datasets_version(version)}


def splits_note(row_counts: dict[str, dict[str, int]]) -> str:
    """What the split names mean for a user expecting ``train``/``validation``/``test``."""
    names = list(dict.fromkeys(split for splits in row_counts.values() for split, rows in splits.items() if rows))
    note = "Splits: " + ", ".join(f"`{name}`" for name in names) + ", as the source publication names them."
    if "dev" in names:
        note += (
            ' `dev` is the split other datasets call `validation`: load it with `split="dev"`. The card '
            "declares no `validation` alias: `datasets` would load it as a second split holding the same rows."
        )
    whole = [config for config, splits in row_counts.items() if list(splits) == ["full"]]
    if whole:
        note += f" `full` ({', '.join(f'`{config}`' for config in whole)}): the whole table, in one split."
    return note
