"""croissant.json: every sample release (full and text-free) carries one that mlcroissant validates without an
error or a warning, whose record sets read the rows ``datasets.load_dataset`` loads, whose fields mirror the
Features at every depth, and which lists the parquet files and the licensed sources with their sha256."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import mlcroissant as mlc
import pytest
from datasets import ClassLabel, List, load_dataset

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.card.croissant import (
    CROISSANT_FILE,
    SPLIT_FIELD,
    CroissantRelease,
    croissant_document,
)
from clinical_corpora.core.release_manifest import read_manifest


def _dataset(folder: Path) -> mlc.Dataset:
    return mlc.Dataset(jsonld=folder / CROISSANT_FILE)


@pytest.mark.parametrize("variant", [0, 1], ids=["full", "text-free"])
def test_mlcroissant_validates_with_no_error_and_no_warning(releases: tuple[Path, Path], variant: int) -> None:
    issues = _dataset(releases[variant]).metadata.ctx.issues
    assert (issues.errors, issues.warnings) == (set(), set())


@pytest.mark.parametrize("variant", [0, 1], ids=["full", "text-free"])
def test_croissant_json_is_a_listed_output_and_lists_every_parquet_file_and_source(
    releases: tuple[Path, Path], variant: int
) -> None:
    folder = releases[variant]
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    outputs = {entry["file"]: entry["sha256"] for entry in manifest["outputs"]}
    assert CROISSANT_FILE in outputs
    document = json.loads((folder / CROISSANT_FILE).read_text(encoding="utf-8"))
    objects = {entry["@id"]: entry for entry in document["distribution"] if entry["@type"] == "cr:FileObject"}
    parquet = {name: sha for name, sha in outputs.items() if name.startswith("data/") and name.endswith(".parquet")}
    assert {name: objects[name]["sha256"] for name in parquet} == parquet
    inputs = manifest.get("inputs") or json.loads((folder / "full" / "manifest.json").read_text())["inputs"]
    sources = {name.removeprefix("source/"): entry for name, entry in objects.items() if name.startswith("source/")}
    assert {name: entry["sha256"] for name, entry in sources.items()} == {n: e["sha256"] for n, e in inputs.items()}
    assert not any("://" in entry["contentUrl"] for entry in sources.values())  # never a download URL


def test_a_sample_release_says_it_is_synthetic_and_a_real_one_does_not(releases: tuple[Path, Path]) -> None:
    full = releases[0]
    manifest = read_manifest(full)
    corpus = find_corpus(manifest.corpus)
    view = ReleaseView(full)
    release = CroissantRelease(
        corpus,
        manifest.version,
        {config: view.features(config) for config in corpus.configs},
        {
            config: [split for split in spec.splits if _rows(view, config, split)]
            for config, spec in corpus.configs.items()
        },
        manifest.inputs or {},
        manifest.shard_hashes(),
    )
    sample = croissant_document(full, release)
    real_inputs = {name: entry.model_copy(update={"sample": False}) for name, entry in (manifest.inputs or {}).items()}
    real = croissant_document(full, dataclasses.replace(release, inputs=real_inputs))
    assert sample["rai:dataCollectionType"] == "Synthetic data"
    assert sample["rai:dataCollection"].startswith("Synthetic data") and "synthetic" in sample["keywords"]
    assert real["rai:dataCollectionType"] == "Secondary data analysis"
    assert "invented" not in real["rai:dataCollection"] and "synthetic" not in real["keywords"]
    for key in ("rai:dataAnnotationProtocol", "rai:personalSensitiveInformation", "rai:dataBiases"):
        assert real[key] and sample[key]
    assert json.loads((full / CROISSANT_FILE).read_text(encoding="utf-8")) == sample


def _rows(view: ReleaseView, config: str, split: str) -> int:
    return sum(view.rows_in(shard) for shard in view.shards(config, split))


@pytest.mark.parametrize("variant", [0, 1], ids=["full", "text-free"])
def test_nested_features_are_sub_fields_at_every_depth(releases: tuple[Path, Path], variant: int) -> None:
    folder = releases[variant]
    view = ReleaseView(folder)
    document = json.loads((folder / CROISSANT_FILE).read_text(encoding="utf-8"))
    for record_set in document["recordSet"]:
        features = view.features(record_set["@id"])
        declared = [field for field in record_set["field"] if field["name"] != SPLIT_FIELD]
        assert _shape_of_fields(declared) == _shape_of_features(dict(features))


def _shape_of_fields(fields: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        field["name"]: (
            field.get("arrayShape", ""),
            _shape_of_fields(field["subField"]) if "subField" in field else field["dataType"],
        )
        for field in fields
    }


def _shape_of_features(features: dict[str, Any]) -> dict[str, Any]:
    shapes = {}
    for name, feature in features.items():
        depth = 0
        while isinstance(feature, List):
            feature, depth = feature.feature, depth + 1
        if isinstance(feature, dict):
            inner: Any = _shape_of_features(feature)
        elif isinstance(feature, ClassLabel):
            inner = "sc:Integer"
        else:
            inner = {"string": "sc:Text", "bool": "sc:Boolean"}.get(feature.dtype, f"cr:{feature.dtype.capitalize()}")
        shapes[name] = (",".join(["-1"] * depth), inner)
    return shapes


@pytest.mark.parametrize("variant", [0, 1], ids=["full", "text-free"])
def test_the_record_reader_yields_the_rows_load_dataset_loads(
    releases: tuple[Path, Path], variant: int, tmp_path: Path
) -> None:
    """Every row of every config and split, on every field mlcroissant 1.1 can read: a column of values or of
    lists of values, and a struct or list of structs of those (its reader keeps one jsonPath match and fills
    one level of sub-fields, so it cannot follow a list inside a list; the test above checks how those fields
    are declared)."""
    folder = tmp_path / "release"
    shutil.copytree(releases[variant], folder)
    readable = json.loads((folder / CROISSANT_FILE).read_text(encoding="utf-8"))
    compared = 0
    for record_set in readable["recordSet"]:
        record_set["field"] = [field for field in record_set["field"] if _readable(field)]
        compared += len(record_set["field"])
    (folder / "readable.json").write_text(json.dumps(readable), encoding="utf-8")  # beside the data it names
    dataset = mlc.Dataset(jsonld=folder / "readable.json")
    for record_set in readable["recordSet"]:
        config = record_set["@id"]
        fields = [field for field in record_set["field"] if field["name"] != SPLIT_FIELD]
        loaded = load_dataset(str(folder), config, cache_dir=str(tmp_path / "cache"))
        read: dict[str, list[dict[str, Any]]] = {}
        for record in dataset.records(config):
            row = {key: _plain(value) for key, value in record.items()}
            read.setdefault(row.pop(f"{config}/{SPLIT_FIELD}"), []).append(row)
        assert set(read) == {split for split in loaded if loaded[split].num_rows}
        for split, rows in read.items():
            expected = [
                {field["@id"]: _expected(field, row[field["name"]]) for field in fields} for row in loaded[split]
            ]
            assert rows == expected, (config, split)
    assert compared > len(readable["recordSet"])  # more than the split fields


def _readable(field: dict[str, Any]) -> bool:
    """Whether mlcroissant 1.1 reads the field as it is declared: no list inside a list, one level of sub-fields."""
    if "subField" not in field:
        return "," not in field.get("arrayShape", "")
    return "," not in field.get("arrayShape", "") and all(
        "subField" not in sub and not (field.get("isArray") and sub.get("isArray")) for sub in field["subField"]
    )


def _expected(field: dict[str, Any], value: Any) -> Any:
    """A loaded value as mlcroissant shapes it: sub-fields keyed by their ids, a list of structs as a list."""
    if "subField" not in field:
        return value
    if field.get("isArray"):
        return [{sub["@id"]: item[sub["name"]] for sub in field["subField"]} for item in value]
    return None if value is None else {sub["@id"]: value[sub["name"]] for sub in field["subField"]}


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value
