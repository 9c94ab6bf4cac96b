"""Raw inputs and scorer inputs as an attacker (or a damaged download) makes them (issue 25): each is a clear error
naming the file and line or record, or a documented acceptance, never a traceback, a memory blow-up or a silent
accept. Oversized files are simulated with a tiny ``--option max_file_bytes`` rather than gigabytes."""

from __future__ import annotations

import json
import os
import shutil
import tracemalloc
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.sources.i2b2.coref import i2b2_documents, read_i2b2_files
from clinical_corpora.builders.sources.mimic.notes import NOTEEVENTS_COLUMNS, iter_noteevents
from clinical_corpora.builders.sources.rf2 import load_snapshot
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.core.file_limits import ARROW_STRING_BYTES
from tests import forked
from tests.conftest import SampleRelease
from tests.test_hostile_releases import text_free  # noqa: F401 - the fixture
from tests.test_rf2 import DISEASE, FINDING
from tests.test_rf2 import _is_a as is_a_row
from tests.test_rf2 import _valid_parts as rf2_parts
from tests.test_rf2 import _write_snapshot as write_snapshot

SAMPLES = Path(__file__).resolve().parents[1] / "corpora"
LIMIT = 40_000
"""A limit above every sample file (the largest, a Knowtator file, is ~36 KB) that a test's file exceeds."""


def run_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``clincorp`` expecting a refusal (exit 1, one error, no traceback); its error output."""
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "\nerror: " in f"\n{err}"
    return err


def copy_sample(corpus: str, source: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(SAMPLES / corpus / "sample" / source, tmp_path / source))


def release_argv(corpus: str, tmp_path: Path, *options: str) -> list[str]:
    return ["release", corpus, "--out", str(tmp_path / "out"), *options]


# 1. one size limit for every file read whole


@pytest.mark.parametrize("suffix", [".ann", ".txt"])
def test_an_oversized_brat_file_is_an_error_naming_it_its_size_and_the_limit(
    suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: a 2 GB .ann → MemoryError at 4.8 GB RSS, a 1 GB one-line .txt → an Arrow abort."""
    shac = copy_sample("sdoh", "shac", tmp_path)
    big = shac / "train" / "mimic" / f"0101{suffix}"
    big.write_text("x" * (LIMIT + 1), encoding="utf-8")  # one line, over the limit
    argv = release_argv("sdoh", tmp_path, "--source", f"shac={shac}", "--option", f"max_file_bytes={LIMIT}")
    err = run_refused(argv, capsys)
    assert f"{big}: the file is {LIMIT + 1:,} bytes, over the {LIMIT:,}-byte limit" in err
    assert "--option max_file_bytes=N" in err
    assert not (tmp_path / "out" / "sdoh").exists()


def test_an_oversized_file_is_quarantined_with_its_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shac = copy_sample("sdoh", "shac", tmp_path)
    (shac / "train" / "mimic" / "0101.ann").write_text("x" * (LIMIT + 1), encoding="utf-8")
    argv = release_argv("sdoh", tmp_path, "--source", f"shac={shac}", "--option", f"max_file_bytes={LIMIT}")
    assert main([*argv, "--on-error", "quarantine", "--max-rejects", "1"]) == 0, capsys.readouterr().err
    rejects = next((tmp_path / "out" / "sdoh").glob("*/rejects.jsonl")).read_text(encoding="utf-8")
    assert "0101.ann" in rejects and f"over the {LIMIT:,}-byte limit" in rejects


def test_an_oversized_knowtator_file_is_an_error_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = copy_sample("odie_anaphora", "gold", tmp_path)
    big = gold / "mayo_cc_01.txt.knowtator.xml"
    big.write_bytes(big.read_bytes() + b"<!--" + b"x" * LIMIT + b"-->")
    argv = release_argv(
        "odie_anaphora",
        tmp_path,
        "--source",
        f"knowtator={gold}",
        "--sample",
        "text",
        "--sample",
        "annotator_a",
        "--sample",
        "annotator_b",
        "--option",
        f"max_file_bytes={LIMIT}",
    )
    err = run_refused(argv, capsys)
    assert f"{big}: the file is {big.stat().st_size:,} bytes, over the {LIMIT:,}-byte limit" in err


@pytest.mark.parametrize("folder", ["docs", "concepts", "chains", "pairs"])
def test_an_oversized_i2b2_file_is_an_error_naming_it(folder: str, tmp_path: Path) -> None:
    i2b2 = copy_sample("odie_anaphora", "i2b2", tmp_path)
    files = i2b2_documents(i2b2)[0]
    big = files.path(folder)
    assert read_i2b2_files(files, max_bytes=LIMIT).text
    big.write_bytes(big.read_bytes() + b"\n" * LIMIT)
    with pytest.raises(SourceError, match=f"over the {LIMIT:,}-byte limit") as raised:
        read_i2b2_files(files, max_bytes=LIMIT)
    assert raised.value.path == str(big)


@pytest.mark.parametrize("value", ["0", str(ARROW_STRING_BYTES + 1)])
def test_the_limit_stays_within_what_one_arrow_string_holds(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = run_refused(release_argv("sdoh", tmp_path, "--option", f"max_file_bytes={value}"), capsys)
    assert f"expected 1 to {ARROW_STRING_BYTES:,}" in err


# 2. no error path reads a whole oversized field

NOTEEVENTS_HEADER = ",".join(f'"{name}"' for name in NOTEEVENTS_COLUMNS)


def noteevents_row(row_id: int, text: str) -> str:
    return f'{row_id},1,,2101-01-01,,,"Radiology","CHEST (PA & LAT)",,,"{text}"\n'


def test_a_huge_text_field_of_an_unwanted_row_is_located_without_being_read_whole(tmp_path: Path) -> None:
    """Was: a 1 GB TEXT field in an unannotated NOTEEVENTS row → MemoryError on the error path (the file was
    re-read with a 1 GiB field limit to find the bad row). Now the re-read holds at most a block per field."""
    path = tmp_path / "NOTEEVENTS.csv"
    huge = "word " * 800_000  # 4 MB in one field, far over the 64 KiB block
    path.write_text(
        NOTEEVENTS_HEADER
        + "\n"
        + noteevents_row(1, "first\nreport")
        + noteevents_row(2, huge)
        + noteevents_row(3, "x"),
        encoding="utf-8",
    )

    def located() -> SourceError:
        with pytest.raises(SourceError, match="a row is longer than the block of 65536 bytes") as raised:
            list(iter_noteevents(path, row_ids=[3], block_size=65536))
        return raised.value

    located()  # once before measuring: the modules it imports on first use are not what is measured
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        error = located()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert error.line == 4  # the row starts on line 4 (row 1 spans lines 2-3)
    assert peak - before < len(huge), f"the error path held {peak - before:,} bytes for a {len(huge):,}-byte field"
    assert len(str(error)) < 400


def test_an_error_quotes_an_excerpt_of_a_bad_field_not_all_of_it(tmp_path: Path) -> None:
    path = tmp_path / "NOTEEVENTS.csv"
    path.write_text(NOTEEVENTS_HEADER + "\n" + noteevents_row(1, "ok").replace(",1,", f",{'9x' * 5000},", 1))
    with pytest.raises(SourceError, match="column SUBJECT_ID: expected an integer") as raised:
        list(iter_noteevents(path))
    assert len(str(raised.value)) < 200


# 3. a folder named like a document's file


@pytest.mark.parametrize("name", ["0101.ann", "0101.ANN", "0101.txt"])
def test_a_folder_named_like_a_brat_file_is_an_error_naming_it(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: with ``0101.ann/`` (a folder) beside ``0101.txt`` the note was released without its annotations."""
    shac = copy_sample("sdoh", "shac", tmp_path)
    notes = shac / "train" / "mimic"
    (notes / f"0101{name[4:].lower()}").unlink()
    (notes / name).mkdir()
    (notes / name / "stray.txt").write_text("", encoding="utf-8")  # empty or not, the folder is refused
    err = run_refused(release_argv("sdoh", tmp_path, "--source", f"shac={shac}"), capsys)
    assert f"{notes / name}: a folder named like a document's file" in err
    assert not (tmp_path / "out" / "sdoh").exists()


# 4. an is-a self-loop or cycle in SNOMED CT RF2


def test_an_is_a_self_loop_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    """Was: silently accepted. SNOMED CT's is-a hierarchy is acyclic, so a concept is-a itself is a broken file."""
    concepts, descriptions, relationships = rf2_parts()
    relationships.append(is_a_row("99970009021", DISEASE, DISEASE))
    folder = write_snapshot(tmp_path / "rf2", concepts, descriptions, relationships)
    with pytest.raises(SourceError, match=f"from concept {DISEASE} to itself") as raised:
        load_snapshot(folder)
    assert raised.value.path.endswith("sct2_Relationship_Snapshot_INT_20230531.txt")
    assert raised.value.line == len(relationships) + 1


def test_an_is_a_cycle_is_an_error_naming_its_concepts(tmp_path: Path) -> None:
    concepts, descriptions, relationships = rf2_parts()
    relationships.append(is_a_row("99970009021", FINDING, DISEASE))  # disease is-a finding is-a disease
    with pytest.raises(SourceError, match="make a cycle") as raised:
        load_snapshot(write_snapshot(tmp_path / "rf2", concepts, descriptions, relationships))
    assert DISEASE in str(raised.value) and FINDING in str(raised.value)


# 6. a pipe (or any non-regular file) in a release


@pytest.mark.parametrize("name", ["data/sdoh/notes.fifo", "data/sdoh/train-00009-of-00009.parquet"])
def test_validate_refuses_a_pipe_in_a_release_without_opening_it(
    name: str, sample_release: SampleRelease, tmp_path: Path
) -> None:
    """Was: an unlisted pipe was accepted; one named like a shard made validate wait forever on opening it."""
    release = Path(
        shutil.copytree(sample_release("sdoh").folder, tmp_path / "sdoh" / sample_release("sdoh").folder.name)
    )
    os.mkfifo(release / name)
    status, out, err = forked.clincorp("validate", str(release), timeout=120)  # a read blocked on the pipe fails
    assert status == 1, err
    assert f"{name}: not a regular file (a pipe, socket or device)" in out + err


def test_a_pinned_digest_never_reads_a_manifest_that_is_a_pipe(sample_release: SampleRelease, tmp_path: Path) -> None:
    """Was: ``validate --expect-digest`` hashed manifest.json before the door looked at it, and waited forever."""
    release = Path(
        shutil.copytree(sample_release("sdoh").folder, tmp_path / "sdoh" / sample_release("sdoh").folder.name)
    )
    (release / "manifest.json").unlink()
    os.mkfifo(release / "manifest.json")
    status, out, err = forked.clincorp("validate", str(release), "--expect-digest", "sha256:00", timeout=120)
    assert status != 0 and "Traceback" not in err
    assert "manifest.json cannot be read" in out + err


def test_rehydrate_refuses_a_pipe_in_a_text_free_release(text_free: Path, tmp_path: Path) -> None:  # noqa: F811
    config = next((text_free / "data").iterdir())
    os.mkfifo(config / "train-00009-of-00009.parquet")
    status, _, err = forked.clincorp("rehydrate", str(text_free), "--out", str(tmp_path / "restored"), timeout=120)
    assert status == 1 and "Traceback" not in err
    assert "train-00009-of-00009.parquet: not a regular file (a pipe, socket or device)" in err
    assert not (tmp_path / "restored").exists() or not any((tmp_path / "restored").rglob("*.parquet"))


def test_a_release_view_refuses_a_pipe_named_like_a_shard(sample_release: SampleRelease, tmp_path: Path) -> None:
    release = Path(shutil.copytree(sample_release("sdoh").folder, tmp_path / "release"))
    os.mkfifo(release / "data" / "sdoh" / "train-00009-of-00009.parquet")
    with pytest.raises(ClincorpError, match="not a regular file"):
        ReleaseView(release).shards("sdoh")


# 5. an edited counts.read


@pytest.mark.parametrize("corpus", ["sdoh", "clicr"])
def test_validate_checks_counts_read_against_the_released_records(
    corpus: str, sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: an edited counts.read passed validate. Each record read is one row of the builder's RECORD_CONFIG, or
    a rejected record (whose count rejects.jsonl pins)."""
    release = Path(
        shutil.copytree(sample_release(corpus).folder, tmp_path / corpus / sample_release(corpus).folder.name)
    )
    assert main(["validate", str(release)]) == 0
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    read = manifest["counts"]["read"]
    manifest["counts"]["read"] = read + 1
    (release / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    capsys.readouterr()
    assert main(["validate", str(release)]) == 1
    assert f"manifest.json counts.read is {read + 1}, but {read} records were released" in capsys.readouterr().out


# 7. scorer inputs

SPAN_HEADER = "note_id,start,end,concept_id\n"


def test_score_snomed_names_overlapping_predicted_spans_and_scores_them_as_the_challenge(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Was: silently accepted. The challenge's scorer accepts overlapping predictions (its character matrix is
    written row by row, so the later row takes the shared characters) while its guidelines allow none: a
    warning names the lines, and the score is the reference's."""
    gold = tmp_path / "gold.csv"
    gold.write_text(SPAN_HEADER + "n1,0,10,111111\n", encoding="utf-8")
    pred = tmp_path / "pred.csv"
    pred.write_text(SPAN_HEADER + "n1,0,10,111111\nn1,5,15,222222\n", encoding="utf-8")
    out = tmp_path / "scores.json"
    assert main(["score", "snomed", str(gold), str(pred), "--out", str(out), "--replicates", "10"]) == 0
    assert f"{pred}: 1 pair(s) of overlapping spans (note n1: line 2 (0-10) and line 3 (5-15))" in caplog.text
    # 111111 keeps characters 0-5 of its 10: IoU 5/10; 222222 is predicted only: 0
    assert json.loads(out.read_text(encoding="utf-8"))["macro_char_iou"] == pytest.approx(0.25)


def write_chains(path: Path, documents: dict) -> Path:
    path.write_text(json.dumps(documents), encoding="utf-8")
    return path


def test_score_coref_refuses_mention_ids_of_another_type_than_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: integer ids against a key of string ids scored 0 silently (no mention can ever match)."""
    key = write_chains(tmp_path / "key.json", {"p1": [["1", "2"], ["3"]]})
    response = write_chains(tmp_path / "response.json", {"p1": [[1, 2], [3]]})
    err = run_refused(["score", "coref", str(key), str(response)], capsys)
    assert f"{response} [document p1]: mention id 1 is an integer, the key's ids are a string" in err


def test_score_coref_names_a_mention_in_two_response_chains_and_refuses_more_than_ten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """As the CoNLL-2012 reference scorer: a repeated key mention is reported ("Repeated mention in the
    response"), kept in its first chain, and more than 10 repeats are refused."""
    key = write_chains(tmp_path / "key.json", {"p1": [["a", "b"], ["c", "d"]]})
    response = write_chains(tmp_path / "response.json", {"p1": [["a", "b"], ["b", "c", "d"]]})
    assert main(["score", "coref", str(key), str(response), "--json", "--metrics", "muc"]) == 0
    assert f"{response} [document p1]: mention 'b' is in more than one response chain" in caplog.text
    assert json.loads(capsys.readouterr().out)["muc"]["recall"] == pytest.approx(1.0)  # [a, b], [c, d] as scored
    many = {"p1": [[f"m{i}" for i in range(12)], *([f"m{i}"] for i in range(1, 12))]}
    key = write_chains(tmp_path / "key.json", {"p1": [[f"m{i}" for i in range(12)]]})
    err = run_refused(["score", "coref", str(key), str(write_chains(response, many))], capsys)
    assert f"{response}: 11 key mentions are repeated in the response chains (more than 10)" in err


def clicr_data(path: Path, query_ids: list[str]) -> Path:
    qas = [{"id": query_id, "answers": [{"text": "enuresis"}]} for query_id in query_ids]
    path.write_text(json.dumps({"data": [{"document": {"qas": qas}}]}), encoding="utf-8")
    return path


def test_score_clicr_names_unknown_query_ids_and_refuses_when_none_is_known(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """Was: predictions for unknown query ids were ignored silently (a wrong split scored 0). The reference
    evaluate.py ignores them too, so they are named in a warning; none known at all is an error."""
    data = clicr_data(tmp_path / "test.json", ["q1", "q2"])
    predictions = tmp_path / "predictions.json"
    out = tmp_path / "scores.json"
    predictions.write_text(json.dumps({"q1": "enuresis", "dev-7": "x"}), encoding="utf-8")
    assert main(["score", "clicr", str(data), str(predictions), "--out", str(out)]) == 0
    assert f"{predictions}: 1 prediction(s) name no query of the data and are ignored" in caplog.text
    assert "'dev-7'" in caplog.text
    predictions.write_text(json.dumps({"dev-7": "x", "dev-8": "y"}), encoding="utf-8")
    err = run_refused(["score", "clicr", str(data), str(predictions), "--out", str(out)], capsys)
    assert f"{predictions}: no prediction names a query of the data ('dev-7', 'dev-8' are unknown)" in err
