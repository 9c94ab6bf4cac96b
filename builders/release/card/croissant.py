"""``croissant.json``: a release described in Croissant 1.1 (MLCommons) with its Responsible AI fields.

The JSON-LD names the corpus and version, its licence, citation and Responsible AI statements (``rai:``,
from corpus.yaml's ``responsible_ai`` and ``sharing``; a sample release says its data is invented), every
parquet file (``FileObject`` with sha256), one ``FileSet`` and one ``RecordSet`` per config (its fields
derived from the config's Features as mlcroissant reads them, see schemas/croissant.py, and the split read
from the file name), and the licensed sources the release was built from: a ``FileObject`` per source with
the sha256 manifest.json records for it and no download URL (they are not distributed; the description
says where to get them).

Both the full release and its text-free variant write one; it is a function of what they hold, so it is
byte-identical run to run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datasets import Features

from clinical_corpora.builders.release.card.hub_metadata import INVENTED, release_description
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.release_manifest import InputSummary
from clinical_corpora.schemas.croissant import UNREADABLE, croissant_fields

CROISSANT_FILE = "croissant.json"
CROISSANT_VERSION = "http://mlcommons.org/croissant/1.1"
RAI_VERSION = "http://mlcommons.org/croissant/RAI/1.0"
PARQUET = "application/x-parquet"
SPLIT_FIELD = "datasets_split"
"""The field of every record set holding the row's split as ``datasets`` names it (from its file's name)."""

CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "description": {"@container": "@language"},
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "name": {"@container": "@language"},
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
"""Croissant 1.1's JSON-LD context, as its reference implementation (mlcroissant) writes it."""


@dataclass(frozen=True)
class CroissantRelease:
    """What croissant.json describes: the corpus, the release's version and variant, each config's Features
    and splits, and the per-source input summary manifest.json records (``inputs``)."""

    manifest: CorpusManifest
    version: str
    features: dict[str, Features]
    splits: dict[str, list[str]]
    inputs: dict[str, InputSummary]
    shards: dict[str, str]
    """Each parquet file of the release (its path in the folder) with its sha256."""
    text_free: bool = False


def croissant_bytes(folder: Path, release: CroissantRelease) -> bytes:
    """``croissant.json`` describing the release in ``folder`` (its parquet files written)."""
    return (json.dumps(croissant_document(folder, release), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def croissant_document(folder: Path, release: CroissantRelease) -> dict[str, Any]:
    """The JSON-LD of the release in ``folder``."""
    manifest = release.manifest
    sample = any(entry.sample for entry in release.inputs.values())
    variant = " (text-free)" if release.text_free else ""
    keywords = [*manifest.tags, *(["text-free"] if release.text_free else []), "synthetic" if sample else "real"]
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "name": f"{manifest.name}{'-text-free' if release.text_free else ''}",
        "alternateName": f"{manifest.pretty_name}{variant}",
        "description": release_description(manifest, sample, release.text_free),
        "conformsTo": [CROISSANT_VERSION, RAI_VERSION],
        "version": release.version,
        **({"datePublished": manifest.date_published} if manifest.date_published else {}),
        "url": manifest.homepage,
        "license": manifest.license_link or manifest.license,
        "citeAs": manifest.citation.strip(),
        "inLanguage": manifest.language,
        "keywords": keywords,
        "isAccessibleForFree": manifest.access.public,
        **_responsible_ai(manifest, sample, release.text_free),
        "distribution": [*_source_objects(manifest, release.inputs), *_parquet_objects(folder, release)],
        "recordSet": [_record_set(config, release) for config in release.features],
    }


def _responsible_ai(manifest: CorpusManifest, sample: bool, text_free: bool) -> dict[str, Any]:
    """The ``rai:`` properties; an invented sample says so in each statement it changes."""
    rai = manifest.responsible_ai
    personal = " ".join(manifest.sharing.personal_information.split()) if manifest.sharing else None
    if text_free:
        personal = (
            "No licensed text: ids, offsets, labels and recipes only (a leak gate refused any file sharing a "
            "run of more than 30 characters with a source document). "
            + (f"The restored text holds: {personal}" if personal else "")
        ).strip()
    statements: dict[str, str | None] = {
        "rai:dataCollection": rai.data_collection if rai else None,
        "rai:dataAnnotationProtocol": rai.annotation_protocol if rai else None,
        "rai:personalSensitiveInformation": personal,
        "rai:dataBiases": rai.biases if rai else None,
        "rai:dataLimitations": rai.limitations if rai else None,
        "rai:dataUseCases": rai.use_cases if rai else None,
    }
    if sample:
        statements["rai:dataCollection"] = f"{INVENTED} The real corpus: {statements['rai:dataCollection'] or ''}"
        statements["rai:personalSensitiveInformation"] = (
            "None in this sample: it is invented and describes no real person. "
            f"The real corpus: {statements['rai:personalSensitiveInformation'] or ''}"
        )
    found = {key: " ".join(value.split()) for key, value in statements.items() if value}
    found["rai:dataCollectionType"] = "Synthetic data" if sample else "Secondary data analysis"
    return dict(sorted(found.items()))


def _source_objects(manifest: CorpusManifest, inputs: dict[str, InputSummary]) -> list[dict[str, Any]]:
    """A FileObject per licensed source: its sha256 as manifest.json records it, no download URL."""
    objects = []
    for name, entry in inputs.items():
        spec = manifest.sources.get(name)
        where = " ".join(spec.description.split()) if spec else ""
        kind = "invented sample" if entry.sample else "real input"
        objects.append(
            {
                "@type": "cr:FileObject",
                "@id": f"source/{name}",
                "name": name,
                "description": (
                    f"Licensed source {name} ({kind}; {entry.files} files, {entry.bytes} bytes), "
                    f"not distributed with this release and not downloadable from it: {where} "
                    "contentUrl is the name given to clincorp (--source NAME=PATH); sha256 is that of the "
                    "source's file list as sha256sum prints it (one '<sha256>  <path>' line per file, sorted "
                    "by path; inputs.jsonl lists the files)."
                ),
                "contentUrl": name,
                "contentSize": f"{entry.bytes} B",
                "encodingFormat": "text/plain",
                "sha256": entry.sha256,
            }
        )
    return objects


def _parquet_objects(folder: Path, release: CroissantRelease) -> list[dict[str, Any]]:
    """Every parquet file (FileObject with sha256) and, per config, the FileSet its record set reads."""
    objects: list[dict[str, Any]] = []
    for config in release.features:
        for name in sorted(shard for shard in release.shards if shard.startswith(f"data/{config}/")):
            path = folder / name
            objects.append(
                {
                    "@type": "cr:FileObject",
                    "@id": name,
                    "name": path.name,
                    "contentUrl": name,
                    "contentSize": f"{path.stat().st_size} B",
                    "encodingFormat": PARQUET,
                    "sha256": release.shards[name],
                }
            )
        objects.append(
            {
                "@type": "cr:FileSet",
                "@id": _file_set(config),
                "name": _file_set(config),
                "description": f"The parquet files of config {config}, one or more per split.",
                "encodingFormat": PARQUET,
                "includes": f"data/{config}/*.parquet",
            }
        )
    return objects


def _file_set(config: str) -> str:
    return f"parquet-{config}"


def _record_set(config: str, release: CroissantRelease) -> dict[str, Any]:
    """A config's rows: a field per column, and the split each row's file belongs to."""
    spec = release.manifest.configs.get(config)
    features = release.features[config]
    if SPLIT_FIELD in features:
        raise ValueError(f"config {config}: a column is named {SPLIT_FIELD}, which croissant.json uses for splits")
    splits = "|".join(re.escape(split) for split in release.splits[config])
    split_field = {
        "@type": "cr:Field",
        "@id": f"{config}/{SPLIT_FIELD}",
        "name": SPLIT_FIELD,
        "description": "The split of the row, as datasets.load_dataset names it (read from its file's name).",
        "dataType": "sc:Text",
        "source": {
            "fileSet": {"@id": _file_set(config)},
            "extract": {"fileProperty": "filename"},
            "transform": {"regex": f"^({splits})-\\d{{5}}-of-\\d{{5}}\\.parquet$"},
        },
    }
    columns = croissant_fields(features, config, _file_set(config))
    description = " ".join(spec.description.split()) if spec else config
    if columns.undeclared:
        description += f" Columns not declared as fields ({UNREADABLE}): {'; '.join(columns.undeclared)}."
    return {
        "@type": "cr:RecordSet",
        "@id": config,
        "name": config,
        "description": description,
        "field": [split_field, *columns.fields],
    }
