"""Text-free releases for every registered corpus: full release → text-free → rehydrate from the same inputs
→ byte-identical; the leak gate passes on each and fails on a planted leak; a changed source document is
reported by its locator and the records using it."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import shutil
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.base import BuildContext, load_builder_class
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.plugins import all_corpora, find_corpus
from clinical_corpora.builders.rehydrate.request import RehydrateRequest
from clinical_corpora.builders.rehydrate.run import RehydrateError, rehydrate
from clinical_corpora.builders.release.card.figures import png_bytes
from clinical_corpora.builders.release.card.markdown import FIGURES_FOLDER
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.text_free.layout import LEAK_LIMIT, TEXT_FREE_SUFFIX
from clinical_corpora.builders.text_free.leak_gate import leak_gate
from clinical_corpora.builders.text_free.release import release_text_free
from clinical_corpora.builders.validate.run import check_release
from clinical_corpora.core.card import BarChart
from clinical_corpora.core.errors import ClincorpError, GateError
from clinical_corpora.core.manifest import CorpusManifest, load_manifest
from clinical_corpora.core.release_manifest import release_digest
from clinical_corpora.core.release_records import ANCHORS_FILE, FULL_FOLDER
from clinical_corpora.core.release_records import REHYDRATE_REJECTS_FILE as REJECTS_FILE
from clinical_corpora.schemas.features import features_for
from clinical_corpora.schemas.licensed import SOURCE_DOCUMENTS, licensed_paths, licensed_tree, text_free_features
from tests.conftest import SampleRelease, SampleVariant

CORPORA = [manifest.name for manifest in all_corpora()]


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(params=CORPORA)
def corpus(request: pytest.FixtureRequest) -> CorpusManifest:
    return find_corpus(request.param)


@pytest.fixture
def full(corpus: CorpusManifest, sample_release: SampleRelease, tmp_path: Path) -> Path:
    """A copy of the corpus's sample release (the text-free variant is written beside it)."""
    folder = sample_release(corpus.name).folder
    return Path(shutil.copytree(folder, tmp_path / "releases" / corpus.name / folder.name))


@pytest.fixture
def text_free(corpus: CorpusManifest, full: Path, sample_variant: SampleVariant) -> Path:
    """A copy of the sample's text-free variant, beside ``full`` as ``release --text-free`` writes it."""
    made = sample_variant(corpus.name, "text-free")
    assert made.name == f"{full.name}{TEXT_FREE_SUFFIX}"
    return Path(shutil.copytree(made, full.parent / made.name))


def documents(corpus: CorpusManifest, text_free: Path) -> dict[str, str]:
    """The sample's source documents the text-free release names."""
    builder = load_builder_class(corpus.builder)()
    view = ReleaseView(text_free)
    wanted = {
        document["locator"]
        for config in view.configs()
        for document in view.arrow(config, columns=[SOURCE_DOCUMENTS]).column(0).combine_chunks().flatten().to_pylist()
    }
    return builder.read_wanted(BuildContext(corpus, resolve_sources(corpus, {})), wanted)


def test_rehydration_restores_the_full_release_byte_for_byte(full: Path, text_free: Path, tmp_path: Path) -> None:
    outcome = rehydrate(RehydrateRequest(text_free, tmp_path / "restored"))
    assert outcome.status == "released" and outcome.documents > 0
    restored, original = tree(outcome.folder), tree(full)
    assert sorted(restored) == sorted(original)
    assert [name for name in original if restored[name] != original[name]] == []


def test_text_free_release_holds_no_licensed_text_and_loads(
    corpus: CorpusManifest, full: Path, text_free: Path
) -> None:
    builder = load_builder_class(corpus.builder)()
    view, full_view = ReleaseView(text_free), ReleaseView(full)
    manifest = json.loads((text_free / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["variant"] == "text-free" and manifest["gates"][0]["status"] == "pass"
    assert (text_free / FULL_FOLDER / "manifest.json").read_bytes() == (full / "manifest.json").read_bytes()
    for config in full_view.configs():
        model = builder.CONFIGS[config]
        assert manifest["licensed_fields"][config] == licensed_paths(model)
        derived = text_free_features(features_for(model), licensed_tree(model))
        assert view.features(config) == derived
        loaded = datasets.load_dataset(str(text_free), config)
        rows = {split: len(loaded[split]) for split in loaded}
        held = {split: full_view.split_rows(config, split) for split in full_view.splits(config)}
        assert rows == {split: count for split, count in held.items() if count}  # an empty split does not load
    assert [gate.gate for gate in check_release(text_free) if not gate.success] == []
    assert release_text_free(corpus, full, resolve_sources(corpus, {})).status == "unchanged"


def test_leak_gate_passes_and_fails_on_a_planted_sentence(
    corpus: CorpusManifest, text_free: Path, tmp_path: Path
) -> None:
    texts = documents(corpus, text_free)
    gate = leak_gate(text_free, texts.items())
    assert gate.success and gate.observed["longest_shared_run"] <= LEAK_LIMIT
    locator, text = max(texts.items(), key=lambda item: len(item[1]))
    sentence = text[: LEAK_LIMIT + 10]
    planted = Path(shutil.copytree(text_free, tmp_path / "planted"))
    card = planted / "README.md"
    card.write_text(card.read_text(encoding="utf-8") + f"\nExample: {sentence}\n", encoding="utf-8")
    failed = leak_gate(planted, texts.items())
    assert not failed.success
    assert failed.observed["longest_shared_run"] >= len(sentence.strip())
    assert "README.md" in failed.details[0]["problem"]
    assert sentence not in failed.details[0]["problem"]  # the gate names the document, never quotes it


def test_the_full_card_and_figures_are_drawn_again_by_rehydrate_and_the_leak_gate_reads_what_a_png_draws(
    corpus: CorpusManifest, full: Path, text_free: Path, tmp_path: Path
) -> None:
    """A text-free release keeps none of the full release's descriptions (they are drawn from its rows): only its
    JSON files in full/. The leak gate reads the strings a figure draws, wherever one is."""
    assert sorted(path.name for path in (text_free / FULL_FOLDER).iterdir()) == sorted(
        name for name in ("manifest.json", "validation.json", "inputs.jsonl", "rejects.jsonl") if (full / name).exists()
    )
    figures = sorted(path.relative_to(full).as_posix() for path in (full / FIGURES_FOLDER).iterdir())
    assert figures
    texts = documents(corpus, text_free)
    locator, text = max(texts.items(), key=lambda item: len(item[1]))
    planted = Path(shutil.copytree(text_free, tmp_path / "planted"))
    length = LEAK_LIMIT + 10
    start = next(i for i in range(len(text) - length) if text[i : i + length].isprintable())  # a drawable run
    drawn = BarChart.counts("planted", text[start : start + length], {"a": 1}, "x", "y")
    (planted / "planted.png").write_bytes(png_bytes(drawn))
    gate = leak_gate(planted, texts.items())
    assert not gate.success and "planted.png" in gate.details[0]["problem"]


def test_leak_gate_finds_text_in_parquet_values(corpus: CorpusManifest, text_free: Path, tmp_path: Path) -> None:
    texts = documents(corpus, text_free)
    locator, text = max(texts.items(), key=lambda item: len(item[1]))
    planted = Path(shutil.copytree(text_free, tmp_path / "planted"))
    view = ReleaseView(planted)
    shard = next(shard for shard in view.shards(view.configs()[0]) if view.rows_in(shard))
    table = pq.read_table(shard)
    rows = table.to_pylist()
    rows[-1][SOURCE_DOCUMENTS].append({"locator": text[:50], "sha256": "0" * 64})
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)
    gate = leak_gate(planted, texts.items())
    assert not gate.success and gate.observed["longest_shared_run"] >= 40


def test_anchors_are_listed_hold_no_text_and_are_read_by_the_leak_gate(
    corpus: CorpusManifest, text_free: Path, tmp_path: Path
) -> None:
    """Every text-free release carries anchors.parquet (in its outputs, one row per document, hashes stored as
    bytes), its leak gate passed with them, and a sentence planted in them fails it, naming the file."""
    manifest = json.loads((text_free / "manifest.json").read_text(encoding="utf-8"))
    assert ANCHORS_FILE in {entry["file"] for entry in manifest["outputs"]}
    texts = documents(corpus, text_free)
    anchors = pq.read_table(text_free / ANCHORS_FILE)
    assert sorted(anchors.column("locator").to_pylist()) == sorted(texts)
    assert leak_gate(text_free, texts.items()).success
    rows = anchors.to_pylist()
    sentence = max(texts.values(), key=len)[: LEAK_LIMIT + 10]
    rows[0]["locator"] = sentence
    planted = Path(shutil.copytree(text_free, tmp_path / "planted"))
    pq.write_table(pa.Table.from_pylist(rows, schema=anchors.schema), planted / ANCHORS_FILE)
    failed = leak_gate(planted, texts.items())
    assert not failed.success and ANCHORS_FILE in failed.details[0]["problem"]


def test_an_unmarked_licensed_field_fails_the_gate_and_writes_nothing(
    monkeypatch: pytest.MonkeyPatch, sample_release: SampleRelease, tmp_path: Path
) -> None:
    """rad_coref with report text left unmarked: the text-free variant would carry every report."""
    corpus = find_corpus("rad_coref")
    name = sample_release("rad_coref").folder.name
    release = Path(shutil.copytree(sample_release("rad_coref").folder, tmp_path / "rad_coref" / name))
    from clinical_corpora.builders.text_free import release as module

    def without_report_text(model: type) -> dict:
        tree = licensed_tree(model)
        if "reports" in tree:
            del tree["reports"][0]["text"]
        return tree

    monkeypatch.setattr(module, "licensed_tree", without_report_text)
    with pytest.raises(GateError, match=r"gate leak FAILED.*noteevents:\d+"):
        release_text_free(corpus, release, resolve_sources(corpus, {}))
    assert sorted(path.name for path in release.parent.iterdir()) == [name]


@pytest.mark.parametrize("corpus", ["sdoh"], indirect=True)
def test_a_changed_note_is_reported_by_locator_and_record(
    corpus: CorpusManifest, text_free: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shac = Path(shutil.copytree(corpus.folder / "sample" / "shac", tmp_path / "shac"))
    note = shac / "train" / "mimic" / "0101.txt"
    note.write_text(note.read_text(encoding="utf-8").replace("a", "o", 1), encoding="utf-8")
    out = tmp_path / "restored"
    arguments = ["rehydrate", str(text_free), "--source", f"shac={shac}", "--out", str(out)]
    assert main(arguments) == 1
    error = capsys.readouterr().err
    assert "shac:train/mimic/0101.txt: its text" in error and "used by sdoh train/mimic/0101" in error
    assert not (out / "sdoh").exists() or not any((out / "sdoh").iterdir())
    assert main([*arguments, "--on-error", "quarantine"]) == 0
    assert "PARTIAL, 2 record(s) left out" in capsys.readouterr().out  # the note, in sdoh and sdoh_bigbio_kb
    rejects = [
        json.loads(line)
        for line in (out / "sdoh" / f"sdoh-{corpus.version}+sample" / REJECTS_FILE).read_text().splitlines()
    ]
    assert [reject["documents"] for reject in rejects] == [["shac:train/mimic/0101.txt"]] * 2
    assert [reject["where"] for reject in rejects] == [
        "sdoh/train [train/mimic/0101]",
        "sdoh_bigbio_kb/train [train/mimic/0101]",
    ]
    assert main([*arguments, "--on-error", "quarantine"]) == 0  # a partial folder is replaced
    complete = tmp_path / "complete"
    assert main(["rehydrate", str(text_free), "--out", str(complete)]) == 0
    capsys.readouterr()
    partial = [
        "rehydrate",
        str(text_free),
        "--source",
        f"shac={shac}",
        "--out",
        str(complete),
        "--on-error",
        "quarantine",
    ]
    assert main(partial) == 1
    assert "is not a partial or re-anchored rehydration" in capsys.readouterr().err


@pytest.mark.parametrize("corpus", ["rad_coref"], indirect=True)
def test_another_noteevents_version_is_reported_by_row_id(
    corpus: CorpusManifest, text_free: Path, tmp_path: Path
) -> None:
    """A NOTEEVENTS whose annotated report 1000101 was edited (another MIMIC version, say)."""
    sample = corpus.folder / "sample" / "NOTEEVENTS.csv.gz"
    rows = list(csv.reader(io.StringIO(gzip.decompress(sample.read_bytes()).decode("utf-8"))))
    text_column = rows[0].index("TEXT")
    for row in rows[1:]:
        if row[0] == "1000101":
            row[text_column] = row[text_column].replace(" ", "  ", 1)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    changed = tmp_path / "NOTEEVENTS.csv.gz"
    changed.write_bytes(gzip.compress(buffer.getvalue().encode("utf-8")))
    with pytest.raises(RehydrateError) as error:
        rehydrate(RehydrateRequest(text_free, tmp_path / "out", sources={"noteevents": changed}))
    assert "noteevents:1000101: its text" in str(
        error.value
    ) and "differs from the one the release was built from" in str(error.value)
    assert "rad_coref 91234;" in str(error.value) or "rad_coref 91234\n" in str(error.value)


def test_rehydrate_refuses_a_full_release(full: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rehydrate", str(full), "--out", str(tmp_path)]) == 1
    assert "is not a text-free release" in capsys.readouterr().err


def test_release_several_text_free_writes_every_variant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two corpora in one command (CI releases them all from the wheel)."""
    names = ["odie_anaphora", "sdoh"]
    assert main(["release", *names, "--text-free", "--out", str(tmp_path)]) == 0
    written = sorted(p.parent.parent.name for p in tmp_path.glob(f"*/*{TEXT_FREE_SUFFIX}/manifest.json"))
    assert written == sorted(names)
    out = capsys.readouterr().out
    assert "leak gate: longest shared run" in out
    for folder in tmp_path.glob(f"*/*{TEXT_FREE_SUFFIX}"):  # the digest to pin each shared release by
        assert f"at {folder} (leak gate" in out and f"digest sha256:{release_digest(folder)}" in out


def test_odie_from_its_i2b2_input_round_trips_through_the_i2b2_documents(tmp_path: Path) -> None:
    corpus = find_corpus("odie_anaphora")
    i2b2 = {"i2b2": corpus.folder / "sample" / "i2b2"}
    full = run(ReleaseRequest(corpus, tmp_path / "releases", sources=i2b2)).folder
    text_free = release_text_free(corpus, full, resolve_sources(corpus, i2b2)).folder
    documents = ReleaseView(text_free).arrow("odie_anaphora", columns=[SOURCE_DOCUMENTS]).column(0).to_pylist()
    assert all(document["locator"].startswith("i2b2:docs/") for row in documents for document in row)
    restored = rehydrate(RehydrateRequest(text_free, tmp_path / "restored", sources=i2b2)).folder
    assert tree(restored) == tree(full)


@pytest.mark.parametrize("corpus", ["snomed_el"], indirect=True)
def test_validate_rejects_a_damaged_text_free_release_and_a_failed_leak_gate(text_free: Path, tmp_path: Path) -> None:
    damaged = Path(shutil.copytree(text_free, tmp_path / "damaged"))
    shard = ReleaseView(damaged).shards("snomed_el")[0]
    shard.write_bytes(shard.read_bytes()[:-1] + b"\0")
    assert [gate.gate for gate in check_release(damaged) if not gate.success] == ["files"]
    validation, manifest_path = text_free / "validation.json", text_free / "manifest.json"
    recorded = json.loads(validation.read_text(encoding="utf-8"))
    recorded["gates"][0].update(status="fail", success=False)
    validation.write_text(json.dumps(recorded), encoding="utf-8")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    for output in manifest["outputs"]:
        if output["file"] == "validation.json":
            output["sha256"] = hashlib.sha256(validation.read_bytes()).hexdigest()
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    failed = {gate.gate: gate.details for gate in check_release(text_free) if not gate.success}
    assert list(failed) == ["manifest"]
    assert failed["manifest"][0]["problem"].startswith("the leak gate did not pass")


def test_a_model_keeping_an_unbounded_string_gets_no_text_free_release(tiny_corpus: Path, tmp_path: Path) -> None:
    """The tiny test corpus keeps its note ids and text as plain strings: a text-free release would carry them."""
    corpus = load_manifest(tiny_corpus)
    full = run(ReleaseRequest(corpus, tmp_path / "releases")).folder
    with pytest.raises(ClincorpError) as refused:
        release_text_free(corpus, full, resolve_sources(corpus, {}))
    assert "tiny: no text-free release: its record models keep strings nothing bounds (notes.id: a string" in str(
        refused.value
    )
    assert "notes.text: a string with no bound" in str(refused.value)
    assert sorted(path.name for path in full.parent.iterdir()) == [full.name]
