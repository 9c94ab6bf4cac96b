"""Label names outside ``datasets``: every ClassLabel column of every release has its ``<field>_name``
string beside it, so duckdb, pandas or polars can filter by name."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datasets
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasets import ClassLabel, List

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.plugins import all_corpora
from clinical_corpora.builders.validate.run import check_release
from clinical_corpora.schemas.features import LABEL_NAME_SUFFIX
from tests.conftest import SampleRelease

CORPORA = [manifest.name for manifest in all_corpora()]


def test_duckdb_filters_sdoh_events_by_label_name(sample_release: SampleRelease) -> None:
    """The README's query: Alcohol events and their triggers, straight from the parquet."""
    release = sample_release("sdoh").folder
    found = duckdb.sql(
        f"""
        SELECT id, event.trigger.text AS trigger
        FROM (SELECT id, unnest(events) AS event FROM read_parquet('{release}/data/sdoh/*.parquet'))
        WHERE event.type_name = 'Alcohol'
        """
    ).fetchall()
    expected = [
        (row["id"], event["trigger"]["text"])
        for _, row in ReleaseView(release).rows("sdoh")
        for event in row["events"]
        if event["type"] == "Alcohol"
    ]
    assert sorted(found) == sorted(expected) and len(expected) > 0


def test_duckdb_filters_records_by_a_top_level_label_name(sample_release: SampleRelease) -> None:
    release = sample_release("sdoh").folder
    [(uw_notes,)] = duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{release}/data/sdoh/*.parquet') WHERE source_name = 'uw'"
    ).fetchall()
    assert uw_notes == sum(row["source"] == "uw" for _, row in ReleaseView(release).rows("sdoh")) > 0


def label_pairs(feature: Any, value: Any, path: str) -> Iterator[tuple[str, Any, Any, list[str]]]:
    """(path, stored id(s), stored name(s), label names) of every ClassLabel field in a stored row."""
    if isinstance(feature, dict) and isinstance(value, dict):
        for name, child in feature.items():
            labels = child if isinstance(child, ClassLabel) else getattr(child, "feature", None)
            if isinstance(labels, ClassLabel):
                yield f"{path}.{name}", value[name], value[name + LABEL_NAME_SUFFIX], labels.names
            else:
                yield from label_pairs(child, value.get(name), f"{path}.{name}")
    elif isinstance(feature, List) and isinstance(value, list):
        for index, item in enumerate(value):
            yield from label_pairs(feature.feature, item, f"{path}[{index}]")


def name_of(ids: Any, labels: list[str]) -> Any:
    """The label name(s) of stored id(s), None for None."""
    if isinstance(ids, list):
        return [name_of(i, labels) for i in ids]
    return None if ids is None else labels[ids]


@pytest.mark.parametrize("corpus", CORPORA)
def test_every_label_id_has_its_name_beside_it(corpus: str, sample_release: SampleRelease) -> None:
    view = ReleaseView(sample_release(corpus).folder)
    checked = 0
    for config in view.configs():
        features = dict(view.features(config))
        for shard in view.shards(config):
            for row in pq.read_table(shard).to_pylist():
                for path, ids, names, labels in label_pairs(features, row, ""):
                    assert names == name_of(ids, labels), path
                    checked += 1
    assert checked > 0


def test_label_names_load_with_datasets_as_plain_strings(sample_release: SampleRelease, tmp_path: Any) -> None:
    loaded = datasets.load_dataset(str(sample_release("sdoh").folder), "sdoh", cache_dir=str(tmp_path))
    train = loaded["train"]
    assert train.features["source_name"] == datasets.Value("string")
    assert train["source_name"] == [train.features["source"].int2str(i) for i in train["source"]]


@pytest.mark.parametrize("corpus", CORPORA)
def test_the_cards_duckdb_query_runs_on_the_release(corpus: str, sample_release: SampleRelease) -> None:
    release = sample_release(corpus).folder
    card = (release / "README.md").read_text(encoding="utf-8")
    query = re.search(r"## Label names\n.*?```sql\n(.*?)\n```", card, re.S)
    assert query is not None
    sql = query.group(1).replace(f"path/to/{corpus}/{release.name}", str(release))
    column, label = re.findall(r"(\w+) = '([^']*)'$", sql)[0]
    names = duckdb.sql(sql).fetchdf()[column]
    assert len(names) > 0 and set(names) == {label}


def test_validate_names_a_label_name_that_drifted_from_its_id(sample_release: SampleRelease, tmp_path: Any) -> None:
    sample = sample_release("sdoh").folder
    release = Path(shutil.copytree(sample, tmp_path / "sdoh" / sample.name))  # the folder names validate checks
    [shard, *_] = ReleaseView(release).shards("sdoh", "train")
    table = pq.read_table(shard)
    rows = table.to_pylist()
    event = rows[0]["events"][0]
    wrong = next(name for name in ("Alcohol", "Drug") if name != event["type_name"])
    event["type_name"] = wrong
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    for output in manifest["outputs"]:
        if output["file"] == shard.relative_to(release).as_posix():
            output["sha256"] = hashlib.sha256(shard.read_bytes()).hexdigest()
    (release / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    failed = {gate.gate: gate for gate in check_release(release) if not gate.success}
    assert sorted(failed) == ["records"]
    [problem] = [detail["problem"] for detail in failed["records"].details]
    assert f"record {rows[0]['id']!r}" in problem and f"events[0].type_name: label name {wrong!r}" in problem
