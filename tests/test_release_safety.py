"""Release safety: build never replaces a release, killed runs leave nothing behind, concurrent releases,
``--out`` under a file, every record quarantined, stale rejects files, and short excerpts of note text."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.release import pipeline
from clinical_corpora.builders.release.folder import STAGING_TAG
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.sources.brat.standoff import parse_brat
from clinical_corpora.core.errors import GateError, ReleaseError, SourceError, excerpt
from clinical_corpora.core.manifest import load_manifest
from clinical_corpora.schemas.spans import span_mismatch
from tests import forked

REPO = Path(__file__).resolve().parent.parent
VERSION = "tiny-1.0.0+sample"


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def staging_folders(corpus_dir: Path) -> list[Path]:
    return [p for p in corpus_dir.iterdir() if STAGING_TAG in p.name] if corpus_dir.is_dir() else []


# ---- build never touches a release ----------------------------------------------------------------


def test_build_refuses_a_folder_holding_a_release(
    tiny_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    release = run(ReleaseRequest(load_manifest(tiny_corpus), out)).folder
    assert json.loads((release / "manifest.json").read_text())["release"] is True
    before = tree(release)
    (tiny_corpus / "sample" / "annotator_b" / "spans.tsv").write_text("note_id\tstart\tend\tlabel\n")  # fails a gate
    with pytest.raises(ReleaseError, match=r"1.0.0\+sample holds a release: build never replaces it"):
        run(ReleaseRequest(load_manifest(tiny_corpus), out, mode="build"))
    assert main(["build", str(tiny_corpus), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "holds a release" in err and "Traceback" not in err
    assert tree(release) == before and staging_folders(out / "tiny") == []


def test_build_replaces_only_its_own_builds(tiny_corpus: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    built = run(ReleaseRequest(load_manifest(tiny_corpus), scratch, mode="build")).folder
    assert json.loads((built / "manifest.json").read_text())["release"] is False
    assert (
        run(ReleaseRequest(load_manifest(tiny_corpus), scratch, mode="build")).status == "built"
    )  # its own build: replaced
    with pytest.raises(ReleaseError, match="holds a clincorp build, not a release"):
        run(ReleaseRequest(load_manifest(tiny_corpus), scratch))  # nor does release take a build for a release
    foreign = tmp_path / "other" / "tiny" / VERSION
    foreign.mkdir(parents=True)
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(ReleaseError, match="was not written by clincorp build"):
        run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "other", mode="build"))
    assert (foreign / "notes.txt").read_text() == "mine"


# ---- --out under a file ----------------------------------------------------------------------------


def test_out_under_a_file_is_a_clear_error(
    tiny_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(ReleaseError, match=r"a-file is a file, not a folder"):
        run(ReleaseRequest(load_manifest(tiny_corpus), blocker / "releases"))
    for command in ("release", "build"):
        assert main([command, str(tiny_corpus), "--out", str(blocker / "releases")]) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: --out ") and "is a file, not a folder" in err and "Traceback" not in err
    assert blocker.read_text() == "not a folder"


# ---- a killed run ----------------------------------------------------------------------------------


def stalled_release(corpus: Path, out: Path) -> int:
    """A release whose gates and files are written in staging, which then waits there to be killed (run in a
    forked child only: it replaces the pipeline's step in that process)."""
    written = pipeline.write_release_files

    def stall(*args: Any, **kwargs: Any) -> Any:
        gates = written(*args, **kwargs)
        print("staged", flush=True)
        time.sleep(600)
        return gates

    pipeline.write_release_files = stall  # type: ignore[assignment]
    pipeline.run(ReleaseRequest(load_manifest(corpus), out))
    return 0


def test_the_staging_folder_of_a_killed_run_is_removed_by_the_next(tiny_corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    child = forked.start(lambda: stalled_release(tiny_corpus, out))
    try:
        child.wait_for("staged")
        (stale,) = staging_folders(out / "tiny")
        assert stale.name.startswith(f".{VERSION}{STAGING_TAG}{child.pid}@")
        assert any(stale.glob("data/notes/*.parquet")) and (stale / "manifest.json").is_file()
    finally:
        child.kill()
    assert stale.is_dir()  # SIGKILL runs no cleanup
    outcome = run(ReleaseRequest(load_manifest(tiny_corpus), out))
    assert outcome.status == "released"
    assert staging_folders(out / "tiny") == [] and sorted(os.listdir(out / "tiny")) == [VERSION]
    assert tree(outcome.folder) == tree(run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "fresh")).folder)


def test_the_staging_folder_of_a_running_release_is_left_alone(tiny_corpus: Path, tmp_path: Path) -> None:
    corpus_dir = tmp_path / "out" / "tiny"
    host = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())
    running = corpus_dir / f".{VERSION}{STAGING_TAG}{os.getppid()}@{host}.abc123"  # our parent process runs
    elsewhere = corpus_dir / f".{VERSION}{STAGING_TAG}{2**22 + 1}@another-host.abc123"  # no such pid here
    gone = corpus_dir / f".{VERSION}{STAGING_TAG}{2**22 + 1}@{host}.abc123"
    for folder in (running, elsewhere, gone):
        folder.mkdir(parents=True)
    run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out"))
    assert running.is_dir() and elsewhere.is_dir() and not gone.exists()


# ---- two releases at once --------------------------------------------------------------------------


def racing_release(corpus: Path, out: Path) -> int:
    """``clincorp release`` that publishes only once both racing runs have staged their release (one may have
    published it already), so the second always finds the version folder taken (or gives up after 120 s); run
    in a forked child only: it replaces the pipeline's step in that process."""
    publish = pipeline._publish

    def publish_together(staging: Path, target: Path, gates: Any, corpus_dir: Path) -> Any:
        deadline = time.monotonic() + 120

        def staged() -> int:
            return len([p for p in corpus_dir.iterdir() if STAGING_TAG in p.name]) + target.exists()

        while staged() < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        return publish(staging, target, gates, corpus_dir)

    pipeline._publish = publish_together  # type: ignore[assignment]
    return main(["release", str(corpus), "--out", str(out)])


def race(corpora: tuple[Path, Path], out: Path) -> list[tuple[int, str, str]]:
    """Each run's exit status, stdout and stderr."""
    children = [forked.start(lambda corpus=corpus: racing_release(corpus, out)) for corpus in corpora]
    return [child.wait() for child in children]


def test_two_identical_releases_at_once_both_succeed_with_one_folder(tiny_corpus: Path, tmp_path: Path) -> None:
    first, second = race((tiny_corpus, tiny_corpus), tmp_path / "out")
    assert (first[0], second[0]) == (0, 0), first[2] + second[2]
    verdicts = sorted(line.split(": ")[1].split(" at ")[0] for line in (first[1] + second[1]).splitlines())
    assert verdicts == ["released", "unchanged (identical bytes)"]
    assert sorted(os.listdir(tmp_path / "out" / "tiny")) == [VERSION]


def test_the_loser_of_two_different_releases_gets_one_clear_line(tiny_corpus: Path, tmp_path: Path) -> None:
    other = Path(shutil.copytree(tiny_corpus, tmp_path / "other"))
    notes = other / "sample" / "notes.tsv"
    notes.write_text(notes.read_text().replace("No complaints.", "No complaints today."))
    results = race((tiny_corpus, other), tmp_path / "out")
    assert sorted(status for status, _, _ in results) == [0, 1]
    ((_, _, loser),) = [result for result in results if result[0] == 1]
    errors = [line for line in loser.splitlines() if not line.startswith("tiny: ")]
    assert errors == [
        f"error: {tmp_path / 'out' / 'tiny' / VERSION} already exists with different bytes: it is a "
        "sample release of invented data, so remove it (or release into another --out) to rebuild it"
    ]
    assert staging_folders(tmp_path / "out" / "tiny") == []


# ---- every record quarantined ----------------------------------------------------------------------


def test_rad_coref_with_every_patient_quarantined_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = REPO / "corpora" / "rad_coref" / "sample"
    text = gzip.decompress((sample / "NOTEEVENTS.csv.gz").read_bytes()).decode()
    assert ',"Radiology",' in text
    noteevents = tmp_path / "NOTEEVENTS.csv.gz"
    noteevents.write_bytes(gzip.compress(text.replace(',"Radiology",', ',"Nursing/other",').encode(), mtime=0))
    out = tmp_path / "out"
    arguments = ["--source", f"noteevents={noteevents}", "--source", f"annotations={sample / 'annotations'}"]
    assert main(["release", "rad_coref", *arguments, "--on-error", "quarantine", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "all 3 records read were rejected, so nothing is left to release" in err and "KeyError" not in err
    (kept,) = (out / "rad_coref").iterdir()  # the annotators' optional folders come from the sample
    assert kept.name == f"rad_coref-{load_manifest(sample.parent).version}+sample.rejects.jsonl" and str(kept) in err
    rejects = [json.loads(line) for line in kept.read_text().splitlines()]
    assert len(rejects) == 3 and all("expected Radiology" in reject["reason"] for reject in rejects)


# ---- stale rejects files ---------------------------------------------------------------------------


def bad_span(corpus: Path) -> None:
    spans = corpus / "sample" / "spans.tsv"
    spans.write_text(spans.read_text() + "n3\t3\t80\tproblem\n")


def test_a_failed_runs_rejects_file_goes_with_the_next_run(tiny_corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    beside = out / "tiny" / f"{VERSION}.rejects.jsonl"
    spans = tiny_corpus / "sample" / "spans.tsv"
    good_spans = spans.read_text()
    bad_span(tiny_corpus)
    with pytest.raises(GateError, match="max_rejects FAILED"):
        run(ReleaseRequest(load_manifest(tiny_corpus), out, on_error="quarantine"))
    assert json.loads(beside.read_text())["where"] == "notes/notes.tsv:4"
    disagreeing = tiny_corpus / "sample" / "annotator_b" / "spans.tsv"
    agreeing = disagreeing.read_text()
    disagreeing.write_text("note_id\tstart\tend\tlabel\n")
    spans.write_text(good_spans)
    with pytest.raises(GateError, match="agreement.span_f1 FAILED") as failure:
        run(ReleaseRequest(load_manifest(tiny_corpus), out))  # fails again, rejecting nothing (n3's bad span is gone)
    assert "rejected records" not in str(failure.value)
    assert not beside.exists()  # the earlier run's rejects would be taken for this run's
    disagreeing.write_text(agreeing)
    bad_span(tiny_corpus)
    with pytest.raises(GateError, match="max_rejects FAILED"):
        run(ReleaseRequest(load_manifest(tiny_corpus), out, on_error="quarantine"))
    assert beside.is_file()
    outcome = run(ReleaseRequest(load_manifest(tiny_corpus), out, on_error="quarantine", max_rejects=1))
    assert outcome.status == "released" and "rejects.jsonl" in os.listdir(outcome.folder)
    assert sorted(os.listdir(out / "tiny")) == [VERSION]  # the failed run's file went with the release


# ---- short excerpts of note text -------------------------------------------------------------------


def test_excerpt_caps_quoted_text_at_twenty_characters() -> None:
    assert excerpt("Lives") == "'Lives'"
    assert excerpt("x" * 20) == repr("x" * 20)
    assert excerpt("Lives alone with her daughter in Boston") == "'Lives alone with he'…"
    assert len(excerpt("a" * 500)) == 19 + 2 + 1


def test_span_mismatch_messages_quote_at_most_a_short_excerpt() -> None:
    note = "Patient lives alone with her daughter and two cats in a third-floor walk-up in Boston."
    message = span_mismatch(note, 8, 50, "lives alone with her son and two cats")
    assert message is not None and message.startswith("span 8-50 has text 'lives alone with he'…")
    assert "daughter" not in message and "son and" not in message


def test_brat_text_mismatch_quotes_at_most_a_short_excerpt(tmp_path: Path) -> None:
    note = "Patient lives alone with her daughter and two cats in a third-floor walk-up in Boston.\n"
    ann = "T1\tProblem 8 50\tlives alone with her son and two cats in a\n"
    with pytest.raises(SourceError) as failure:
        parse_brat(ann, note, tmp_path / "note.ann")
    message = str(failure.value)
    assert message.startswith(f"{tmp_path / 'note.ann'}:1: T1 text 'lives alone with he'… differs from the .txt")
    assert "daughter" not in message and "two cats" not in message
