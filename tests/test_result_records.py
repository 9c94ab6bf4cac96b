"""``clincorp score … --record FILE --system NAME`` and ``clincorp score --check-record FILE RELEASE``: scores bound
to the digest of the release they were computed on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from clinical_corpora.builders.commands.main import main
from clinical_corpora.core.release_manifest import release_digest
from clinical_corpora.core.results import read_record
from tests.conftest import SampleVariant


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture(scope="module")
def clicr_record(sample_variant: SampleVariant, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """maxfreq-entity's record on the clicr sample's test split."""
    folder = tmp_path_factory.mktemp("clicr-record")
    release = str(sample_variant("clicr", "full"))
    assert main(["baseline", "clicr", release, "--split", "test", "--out", str(folder)]) == 0
    record = folder / "record.json"
    argv = [release, str(folder / "test.json"), "--out", str(folder / "scores.json"), "--record", str(record)]
    assert main(["score", "clicr", *argv, "--system", "maxfreq-entity"]) == 0
    return record


def test_record_holds_the_digest_and_every_metric(sample_variant: SampleVariant, clicr_record: Path) -> None:
    release = sample_variant("clicr", "full")
    record = read_record(clicr_record)
    scores = json.loads((clicr_record.parent / "scores.json").read_text())
    assert record.digest == release_digest(release)
    assert (record.corpus, record.variant, record.config, record.split) == ("clicr", "full", "clicr", "test")
    assert record.version == json.loads((release / "manifest.json").read_text())["version"]
    assert (record.scorer, record.system) == ("clicr", "maxfreq-entity")
    assert record.metrics == pytest.approx(scores) and record.metrics["exact_match"] == pytest.approx(20.0)


def test_record_accepted_on_its_release_its_text_free_variant_and_rehydration(
    sample_variant: SampleVariant, clicr_record: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for variant in ("full", "text-free", "rehydrated"):
        status, out, _ = run(
            capsys, "score", "--check-record", str(clicr_record), str(sample_variant("clicr", variant))
        )
        assert status == 0, variant
        assert "maxfreq-entity" in out and read_record(clicr_record).digest in out
    assert (
        "full/manifest.json"
        in run(capsys, "score", "--check-record", str(clicr_record), str(sample_variant("clicr", "text-free")))[1]
    )


def test_record_refused_on_another_release(
    sample_variant: SampleVariant, clicr_record: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = sample_variant("rad_coref", "full")
    status, _, err = run(capsys, "score", "--check-record", str(clicr_record), str(other))
    assert status == 1 and "Traceback" not in err
    assert f"made on release digest {read_record(clicr_record).digest}" in err
    assert release_digest(other) in err and "do not describe this release's data" in err


def test_coref_record_on_a_baseline_response(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_variant("rad_coref", "full")
    assert run(capsys, "baseline", "rad_coref", str(release), "--out", str(tmp_path))[0] == 0
    response, record = str(tmp_path / "train.conll"), tmp_path / "record.json"
    argv = ("score", "coref", str(release), response, "--split", "train", "--json")
    status, out, _ = run(capsys, *argv, "--record", str(record), "--system", "string-match")
    assert status == 0
    scores, recorded = json.loads(out), read_record(record)
    assert recorded.config == "rad_coref" and recorded.split == "train" and recorded.scorer == "coref"
    assert recorded.metrics["muc.f1"] == pytest.approx(scores["muc"]["f1"])
    assert recorded.metrics["conll_f1"] == pytest.approx(scores["conll_f1"])


def test_record_errors_say_what_is_missing(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "key.json"
    key.write_text(json.dumps({"d": [["a", "b"]]}))
    status, _, err = run(capsys, "score", "coref", str(key), str(key), "--record", str(tmp_path / "r.json"))
    assert status == 1 and "--record needs --system NAME" in err
    argv = ("score", "coref", str(key), str(key), "--record", str(tmp_path / "r.json"), "--system", "s")
    status, _, err = run(capsys, *argv)
    assert status == 1 and "give scorer coref a release folder as its gold" in err
    assert not (tmp_path / "r.json").exists()
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"digest": "abc"}))
    status, _, err = run(capsys, "score", "--check-record", str(broken), str(sample_variant("clicr", "full")))
    assert status == 1 and f"{broken}" in err and "not a result record" in err


def test_records_export_as_the_hubs_evaluation_results_keeping_the_digest(
    clicr_record: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "model-repo"
    argv = ["score", "--eval-results", str(clicr_record), "--dataset-id", "my-org/clicr", "--out", str(out)]
    status, printed, _ = run(capsys, *argv)
    written = out / ".eval_results" / "record.yaml"
    assert status == 0 and printed.strip() == str(written)
    record, entries = read_record(clicr_record), yaml.safe_load(written.read_text(encoding="utf-8"))
    assert {entry["dataset"]["task_id"]: entry["value"] for entry in entries} == {
        f"clicr/test/{metric}": value for metric, value in record.metrics.items()
    }
    for entry in entries:  # the Hub's fields only; what it has no field for is in the notes
        assert set(entry) == {"dataset", "value", "date", "notes"} and entry["dataset"]["id"] == "my-org/clicr"
        assert entry["date"] == record.made and f"sha256:{record.digest}" in entry["notes"]
        assert all(part in entry["notes"] for part in ("maxfreq-entity", record.version, "full", record.scorer_version))
    status, _, err = run(capsys, *argv[:3], "--dataset-id", "not an id", "--out", str(out))
    assert status != 0 and "expected a Hub dataset id" in err and "Traceback" not in err
