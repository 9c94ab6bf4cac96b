"""croissant.json: every sample release (full and text-free) carries one that mlcroissant validates without an
error or a warning, whose record sets read the rows ``datasets.load_dataset`` loads, whose fields mirror the
Features at every depth, and which lists the parquet files and the licensed sources with their sha256."""

from __future__ import annotations

import dataclasses
import json
import re
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
def test_every_value_of_every_column_is_a_field_or_named_in_a_description(
    releases: tuple[Path, Path], variant: int
) -> None:
    """Each value the Features reach is a declared field (its data type and list depth as the Features say) or
    lies inside a list of records named, with its shape, in its field's or record set's description."""
    folder = releases[variant]
    view = ReleaseView(folder)
    document = json.loads((folder / CROISSANT_FILE).read_text(encoding="utf-8"))
    for record_set in document["recordSet"]:
        declared, named = _declared(record_set)
        for path, shape in _values(dict(view.features(record_set["@id"])), (), 0).items():
            undeclared = [name for name in named if path[: len(name)] == name]
            assert (declared.get(path) == shape) != bool(undeclared), (record_set["@id"], path, shape)


def _declared(record_set: dict[str, Any]) -> tuple[dict[tuple[str, ...], tuple[int, str]], list[tuple[str, ...]]]:
    """The record set's fields by value path with (list depth, data type), and the paths its descriptions name."""
    declared: dict[tuple[str, ...], tuple[int, str]] = {}
    text = record_set["description"]
    for field in record_set["field"]:
        if field["name"] == SPLIT_FIELD:
            continue
        depth = _depth(field)
        for sub in field.get("subField", []):
            declared[(field["name"], *sub["name"].split("."))] = (depth + _depth(sub), sub["dataType"])
        if "subField" in field:
            text += " " + field.get("description", "")
        else:
            declared[(field["name"],)] = (depth, field["dataType"])
    named = re.findall(r"([\w.]+) \((?:list of|\{)", text)
    return declared, [tuple(name.split(".")) for name in named]


def _depth(field: dict[str, Any]) -> int:
    return len(field["arrayShape"].split(",")) if field.get("isArray") else 0


def _values(features: dict[str, Any], prefix: tuple[str, ...], depth: int) -> dict[tuple[str, ...], Any]:
    """Every value the Features reach (through structs and lists): its path, list depth and Croissant type."""
    found: dict[tuple[str, ...], Any] = {}
    for name, feature in features.items():
        levels = depth
        while isinstance(feature, List):
            feature, levels = feature.feature, levels + 1
        if isinstance(feature, dict):
            found |= _values(feature, (*prefix, name), levels)
        elif isinstance(feature, ClassLabel):
            found[(*prefix, name)] = (levels, "sc:Integer")
        else:
            kind = {"string": "sc:Text", "bool": "sc:Boolean"}.get(feature.dtype, f"cr:{feature.dtype.capitalize()}")
            found[(*prefix, name)] = (levels, kind)
    return found


@pytest.mark.parametrize("variant", [0, 1], ids=["full", "text-free"])
def test_the_record_reader_reads_every_field_as_load_dataset_loads_it(
    releases: tuple[Path, Path], variant: int, tmp_path: Path
) -> None:
    """Every row of every config and split, every declared field, through mlcroissant's own record reader: the
    release's croissant.json as it is, nested lists included."""
    assert_record_sets_read_as_loaded(releases[variant], tmp_path / "cache")


def assert_record_sets_read_as_loaded(folder: Path, cache: Path) -> None:
    """mlcroissant's record reader gives every record set of the release at ``folder`` as ``load_dataset`` loads
    its config, field by field."""
    document = json.loads((folder / CROISSANT_FILE).read_text(encoding="utf-8"))
    dataset = _dataset(folder)
    for record_set in document["recordSet"]:
        config = record_set["@id"]
        fields = [field for field in record_set["field"] if field["name"] != SPLIT_FIELD]
        loaded = load_dataset(str(folder), config, cache_dir=str(cache))
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


def _expected(field: dict[str, Any], value: Any) -> Any:
    """A loaded value as the field declares it: sub-fields keyed by their ids, read by their dotted paths."""
    if "subField" not in field:
        return value
    if field.get("isArray"):
        return [{sub["@id"]: _at(item, sub["name"]) for sub in field["subField"]} for item in value]
    return None if value is None else {sub["@id"]: _at(value, sub["name"]) for sub in field["subField"]}


def _at(value: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        value = None if value is None else value[key]
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value
