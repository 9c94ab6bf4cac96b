"""The contract every registered corpus keeps, checked on the release of its embedded sample.

Parametrised over ``all_corpora()``: a new corpus plugin is covered with no edit here. Its sample
releases with every gate passing, a second release is byte-identical, every declared config loads
with ``datasets`` with the declared splits and the manifest's row counts, ``clincorp validate``
accepts it, and rejects it once a byte, a shard or a record is tampered with.
"""

from __future__ import annotations

import copy
import gc
import hashlib
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import BaseModel, ValidationError

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.base import BuildContext, load_builder_class
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.plugins import all_corpora, find_corpus
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.release.workers import Sink, build_in_process, document_groups, encoding_of
from clinical_corpora.builders.validate.run import check_release
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.schemas.features import LabelIdError, features_for, row_decoder
from tests.conftest import SampleRelease

CORPORA = [manifest.name for manifest in all_corpora()]


@pytest.fixture(params=CORPORA)
def corpus(request: pytest.FixtureRequest) -> CorpusManifest:
    return find_corpus(request.param)


@pytest.fixture
def release(corpus: CorpusManifest, sample_release: SampleRelease) -> Path:
    """The session's release of the corpus's sample (shared: read only)."""
    return sample_release(corpus.name).folder


@pytest.fixture
def tampered(release: Path, tmp_path: Path) -> Path:
    """A copy of the release that a test may damage."""
    return Path(shutil.copytree(release, tmp_path / "release"))


def tree(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()
    }


def test_sample_releases_with_every_gate_passing(corpus: CorpusManifest, sample_release: SampleRelease) -> None:
    outcome = sample_release(corpus.name)
    assert outcome.status == "released"
    assert outcome.folder.parts[-2:] == (corpus.name, f"{corpus.name}-{corpus.sample_version}")
    assert [gate.gate for gate in outcome.gates if not gate.success] == []
    assert outcome.manifest.counts.rejected == 0 and outcome.manifest.counts.written > 0
    expectations = next(gate for gate in outcome.gates if gate.gate == "expectations")
    assert len(expectations.details) == len(corpus.gates.expectations) > 0


def test_release_is_byte_identical_whatever_the_workers(corpus: CorpusManifest, release: Path, tmp_path: Path) -> None:
    """The sample release was built in one process (a sample has fewer documents than a worker takes)."""
    again = run(ReleaseRequest(corpus, tmp_path, workers=2)).folder
    first, second = tree(release), tree(again)
    assert sorted(second) == sorted(first)
    assert [name for name in first if first[name] != second[name]] == []


def test_every_builder_gives_two_workers_several_groups(corpus: CorpusManifest) -> None:
    """Every corpus lists its documents as shards and splits its sample into several jobs, so two workers
    really run them."""
    builder = load_builder_class(corpus.builder)()
    ctx = BuildContext(corpus, resolve_sources(corpus, {}))
    assert len(document_groups(builder.shards(ctx), workers=2)) > 1


def test_building_leaves_no_reference_cycle_to_collect(corpus: CorpusManifest) -> None:
    """Building makes no reference cycle, so the collector clincorp tunes to run rarely
    (``core/processes.tune_collector``) has nothing to find: every row is freed when dropped."""
    builder = load_builder_class(corpus.builder)()
    features = {config: features_for(builder.CONFIGS[config]) for config in corpus.configs}
    encoding = encoding_of(features)  # once per build (``datasets`` leaves a few cycles), not per row
    ctx = BuildContext(corpus, resolve_sources(corpus, {}), "quarantine")
    batches: list[pa.RecordBatch] = []
    batches_of: Sink = lambda config, split, batch: batches.append(batch)  # noqa: E731
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.freeze()  # what exists before the build is not the build's
    try:
        rows = build_in_process(builder, corpus, features, builder.generate(ctx), batches_of, encoding)
        assert sum(1 for _ in rows) > 0 and batches
        assert gc.collect() == 0
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


def declared_rows(release: Path, config: str) -> dict[str, int]:
    """Rows per split of a config, as manifest.json lists its shards."""
    outputs = json.loads((release / "manifest.json").read_text(encoding="utf-8"))["outputs"]
    rows: dict[str, int] = {}
    for output in outputs:
        path = Path(output["file"])
        if path.parts[:2] == ("data", config):
            split = ReleaseView.split_of(path)
            rows[split] = rows.get(split, 0) + output["rows"]
    return rows


def test_every_config_loads_with_its_splits_and_row_counts(
    corpus: CorpusManifest, release: Path, tmp_path: Path
) -> None:
    for config, spec in corpus.configs.items():
        expected = declared_rows(release, config)
        assert sorted(expected) == sorted(spec.splits), config
        loaded = datasets.load_dataset(str(release), config, cache_dir=str(tmp_path / "hf"))
        # A declared split without rows (odie_anaphora's test split of a Knowtator input) is not in the card's
        # front matter, since datasets refuses to load an empty split; every other split loads.
        held = {split: rows for split, rows in expected.items() if rows}
        assert {split: rows.num_rows for split, rows in loaded.items()} == held, config


def failing_gates(release: Path) -> dict[str, list[str]]:
    """The gates ``check_release`` fails, with their problems; ``clincorp validate`` must exit 1."""
    assert main(["validate", str(release)]) == 1
    return {
        gate.gate: [str(detail.get("problem", detail)) for detail in gate.details]
        for gate in check_release(release)
        if not gate.success
    }


def test_validate_rejects_an_altered_byte(tampered: Path) -> None:
    shard = ReleaseView(tampered).shards(ReleaseView(tampered).configs()[0])[0]
    content = bytearray(shard.read_bytes())
    content[len(content) // 2] ^= 0xFF
    shard.write_bytes(bytes(content))
    name = shard.relative_to(tampered).as_posix()
    assert failing_gates(tampered) == {"files": [f"{name}: sha256 differs from manifest.json"]}


def test_validate_rejects_a_deleted_shard(tampered: Path) -> None:
    shard = ReleaseView(tampered).shards(ReleaseView(tampered).configs()[-1])[-1]
    shard.unlink()
    assert failing_gates(tampered) == {
        "files": [f"{shard.relative_to(tampered).as_posix()}: listed in manifest.json but missing"]
    }


def test_validate_rejects_an_invalid_record_behind_a_recomputed_hash(tampered: Path) -> None:
    shard = break_first_record(tampered)
    name = shard.relative_to(tampered).as_posix()
    manifest_path = tampered / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    for output in manifest["outputs"]:
        if output["file"] == name:
            output["sha256"] = hashlib.sha256(shard.read_bytes()).hexdigest()
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    failed = failing_gates(tampered)
    assert "files" not in failed and "schema" not in failed
    assert len(failed["records"]) == 1 and f"{shard.parent.name}/{ReleaseView.split_of(shard)}" in failed["records"][0]


def break_first_record(release: Path) -> Path:
    """Rewrite a shard with one edit to its first row that its record model rejects (same parquet schema)."""
    view = ReleaseView(release)
    configs = load_builder_class(json.loads((release / "manifest.json").read_text())["builder"]).CONFIGS
    for config in view.configs():
        decode = row_decoder(view.features(config))
        for shard in view.shards(config):
            table = pq.read_table(shard)
            rows = table.to_pylist()
            if not rows:
                continue
            edited = next((row for row in edits_of(rows[0]) if rejects(configs[config], decode, row)), None)
            if edited is not None:
                pq.write_table(pa.Table.from_pylist([edited, *rows[1:]], schema=table.schema), shard)
                return shard
    raise AssertionError(f"no single edit of a first row makes a record of {release} invalid")


def rejects(model: type[BaseModel], decode: Callable[[Any], Any], row: dict[str, Any]) -> bool:
    """Whether a stored row is no valid record (an out-of-range label id included)."""
    try:
        model.model_validate(decode(copy.deepcopy(row)))
    except (ValidationError, LabelIdError):
        return True
    return False


def edits_of(value: Any) -> Iterator[Any]:
    """Copies of ``value`` with one leaf changed: a string extended, a number made negative, a list emptied."""
    if isinstance(value, dict):
        for key, child in value.items():
            for edited in edits_of(child):
                yield {**value, key: edited}
    elif isinstance(value, list):
        if value:
            yield []
        for index, child in enumerate(value):
            for edited in edits_of(child):
                yield [*value[:index], edited, *value[index + 1 :]]
    elif isinstance(value, str):
        yield value + "~"
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield -1 - value


@pytest.mark.parametrize("label_id", [-1, 99])
def test_validate_names_the_record_and_field_of_an_out_of_range_label(tampered: Path, label_id: int) -> None:
    """Before: -1 decoded as the last label name (validate passed) and 99 ended in an IndexError."""
    view = ReleaseView(tampered)
    for config in view.configs():
        features = view.features(config)
        id_field = getattr(
            load_builder_class(json.loads((tampered / "manifest.json").read_text())["builder"]).CONFIGS[config],
            "id_field",
            "id",
        )
        for shard in view.shards(config):
            table = pq.read_table(shard)
            rows = table.to_pylist()
            field = next((path for row in rows[:1] for path in label_paths(dict(features), row, "")), None)
            if field is None:
                continue
            path, setter = field
            setter(label_id)
            pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)
            recompute_hash(tampered, shard)
            failed = failing_gates(tampered)
            assert "files" not in failed and "schema" not in failed
            [problem] = failed["records"]
            assert (
                f"record {rows[0][id_field]!r}" in problem
                and f"field {path}: label id {label_id} is not one of" in problem
            )
            return
    pytest.skip("no config of this corpus has a class label")


def label_paths(feature: Any, value: Any, path: str) -> Iterator[tuple[str, Callable[[int], None]]]:
    """(field path, setter) of every non-null ClassLabel value in a stored row."""
    if isinstance(feature, dict) and isinstance(value, dict):
        for name, child in feature.items():
            if isinstance(child, datasets.ClassLabel) and value.get(name) is not None:
                yield f"{path}.{name}".lstrip("."), lambda new, holder=value, key=name: holder.__setitem__(key, new)
            else:
                yield from label_paths(child, value.get(name), f"{path}.{name}")
    elif isinstance(feature, datasets.List) and isinstance(value, list):
        for index, item in enumerate(value):
            inner = feature.feature
            if isinstance(inner, datasets.ClassLabel) and item is not None:
                yield f"{path}[{index}]".lstrip("."), lambda new, holder=value, at=index: holder.__setitem__(at, new)
            else:
                yield from label_paths(inner, item, f"{path}[{index}]")


def recompute_hash(release: Path, shard: Path) -> None:
    manifest_path = release / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    for output in manifest["outputs"]:
        if output["file"] == shard.relative_to(release).as_posix():
            output["sha256"] = hashlib.sha256(shard.read_bytes()).hexdigest()
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")


@pytest.fixture
def forged(corpus: CorpusManifest, release: Path, tmp_path: Path) -> Path:
    """A copy of the release under the same corpus and version folder names, for forging manifest.json."""
    return Path(shutil.copytree(release, tmp_path / corpus.name / release.name))


@pytest.mark.parametrize("corpus", [find_corpus("sdoh")], ids=["sdoh"])  # the door is the same for every corpus
def test_validate_rejects_a_split_deleted_with_its_manifest_entry(corpus: CorpusManifest, forged: Path) -> None:
    """The forger removes a split's shards, their outputs entries and their rows from counts.written (other
    gates may fail too: a corpus's expectations may need the split, a config its only split)."""
    config, spec = max(corpus.configs.items(), key=lambda item: len(item[1].splits))
    split = spec.splits[-1]
    gone = [shard.relative_to(forged).as_posix() for shard in ReleaseView(forged).shards(config, split)]
    manifest_path = forged / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    removed = sum(output["rows"] for output in manifest["outputs"] if output["file"] in gone)
    manifest["outputs"] = [output for output in manifest["outputs"] if output["file"] not in gone]
    manifest["counts"]["written"] -= removed
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    for name in gone:
        (forged / name).unlink()
    kept = sorted(set(spec.splits) - {split})
    first, *others = failing_gates(forged)["manifest"]
    assert first == (
        f"config {config}: splits {kept} in the release, {corpus.name}'s corpus.yaml declares {sorted(spec.splits)}"
    )
    assert all(problem.startswith("manifest.json counts.read is ") for problem in others)  # its records are gone


@pytest.mark.parametrize("corpus", [find_corpus("sdoh")], ids=["sdoh"])  # the door is the same for every corpus
def test_validate_rejects_edited_rows_at_the_door_and_an_emptied_suite(corpus: CorpusManifest, forged: Path) -> None:
    manifest_path = forged / "manifest.json"
    original = manifest_path.read_text(encoding="utf-8")
    manifest = json.loads(original)
    shard = next(output for output in manifest["outputs"] if "rows" in output)
    actual, shard["rows"] = shard["rows"], shard["rows"] + 1
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    assert failing_gates(forged) == {
        "files": [f"{shard['file']}: manifest.json says {actual + 1} rows, the parquet holds {actual}"]
    }
    manifest = json.loads(original)
    validation = json.loads((forged / "validation.json").read_text(encoding="utf-8"))
    validation["expectation_suite"] = []
    (forged / "validation.json").write_text(json.dumps(validation), encoding="utf-8")
    for output in manifest["outputs"]:
        if output["file"] == "validation.json":
            output["sha256"] = hashlib.sha256((forged / "validation.json").read_bytes()).hexdigest()
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    expected = len(corpus.gates.expectations)
    assert failing_gates(forged)["expectations"] == [
        f"validation.json's expectation_suite has 0 expectations, {corpus.name}'s corpus.yaml has {expected}"
    ]
