"""Every registered export format round-trips: release → ``clincorp export`` → release again from the exported
files (``--source`` inputs) → the same data, on a corpus ten times the embedded sample's size (the sample's
records as they are, then replicated under new ids).

A format the corpus's builder reads again must give byte-identical parquet (``Exporter.exact``) or, when it
cannot hold some fields (``Exporter.lost``), the same records once those are erased (``Exporter.kept``); and
exporting the second release and releasing that again must then give byte-identical parquet. A format no builder
reads (CoNLL-2012) is read back by its reader and compared with what the release says it holds.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmarks.replicated_release import RENAMERS, replicated
from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.exporters.base import Exporter
from clinical_corpora.builders.plugins import find_corpus, load_plugins
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.core.registry import exporters
from tests.conftest import SampleRelease

load_plugins()
PAIRS = sorted(exporters.keys(), key=lambda pair: (pair[1], pair[0]))
COPIES = 10


def _exporter(format_name: str, corpus: str) -> Exporter:
    implementation = exporters.get((format_name, corpus)).load()
    assert isinstance(implementation, Exporter), f"{format_name} for {corpus} does not implement Exporter"
    return implementation


def _export(format_name: str, release: Path, out: Path) -> Path:
    assert main(["export", format_name, str(release), "--out", str(out)]) == 0
    return out


def _release_again(exporter: Exporter, corpus: str, exported: Path, out: Path) -> Path:
    inputs = exporter.reread(exported)
    assert inputs is not None
    return run(
        ReleaseRequest(
            find_corpus(corpus),
            out,
            sources=dict(inputs.sources),
            on_error="fail",
            mode="release",
            samples=inputs.not_carried,
        )
    ).folder


def _data_bytes(release: Path, configs: list[str]) -> dict[str, bytes]:
    """The parquet files of some configs, by path under ``data/``."""
    data = release / "data"
    return {
        path.relative_to(data).as_posix(): path.read_bytes()
        for config in configs
        for path in sorted((data / config).glob("*.parquet"))
    }


def _kept_rows(exporter: Exporter, release: Path) -> dict[str, list[str]]:
    """Each exported config's rows as the format holds them, in a canonical order."""
    view = ReleaseView(release)
    return {
        config: sorted(json.dumps(exporter.kept(config, row), sort_keys=True) for _, row in view.rows(config))
        for config in exporter.configs
    }


def _assert_round_trip(format_name: str, corpus: str, release: Path, tmp: Path) -> None:
    exporter = _exporter(format_name, corpus)
    exported = _export(format_name, release, tmp / "export")
    if exporter.reread(exported) is None:
        read, expected = exporter.read_back(exported), exporter.expected(ReleaseView(release))
        assert read and read == expected
        return
    again = _release_again(exporter, corpus, exported, tmp / "again")
    assert _kept_rows(exporter, again) == _kept_rows(exporter, release)
    configs = ReleaseView(release).configs()
    if exporter.exact:  # the same bytes again, so exporting them again gives the same files
        assert _data_bytes(again, configs) == _data_bytes(release, configs)
        return
    third = _release_again(exporter, corpus, _export(format_name, again, tmp / "export-again"), tmp / "third")
    assert _data_bytes(third, configs) == _data_bytes(again, configs)


@pytest.mark.parametrize(("format_name", "corpus"), PAIRS, ids=[f"{c}-{f}" for f, c in PAIRS])
def test_round_trip_on_ten_times_the_sample(
    format_name: str, corpus: str, sample_release: SampleRelease, tmp_path: Path
) -> None:
    """The replicated records are exported and released (a real release of a corpus ten times the sample's
    size, its records those replicated); that release then round-trips as the sample's does."""
    assert corpus in RENAMERS, f"add a renamer for {corpus} so its formats round-trip at ten times the sample"
    exporter = _exporter(format_name, corpus)
    sample = sample_release(corpus).folder
    large = replicated(sample, exporter.configs, RENAMERS[corpus], tmp_path / "large", COPIES)
    counts = {config: sum(1 for _ in ReleaseView(large).rows(config)) for config in exporter.configs}
    assert counts == {config: COPIES * sum(1 for _ in ReleaseView(sample).rows(config)) for config in counts}
    if exporter.reread(tmp_path) is not None:
        raw = _export(format_name, large, tmp_path / "raw")
        large = _release_again(exporter, corpus, raw, tmp_path / "large-release")
        assert _kept_rows(exporter, large) == _kept_rows(exporter, tmp_path / "large")
    _assert_round_trip(format_name, corpus, large, tmp_path / "round-trip")


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(("format_name", "corpus"), PAIRS, ids=[f"{c}-{f}" for f, c in PAIRS])
def test_what_is_lost_is_in_the_help_and_the_readme(
    format_name: str, corpus: str, sample_release: SampleRelease, capsys: pytest.CaptureFixture[str]
) -> None:
    exporter = _exporter(format_name, corpus)
    with pytest.raises(SystemExit):
        main(["export", format_name, str(sample_release(corpus).folder), "-h"])
    shown = _words(capsys.readouterr().out)
    readme = _words((find_corpus(corpus).folder / "README.md").read_text(encoding="utf-8"))
    assert f"`clincorp export {format_name} <release> --out DIR`" in readme
    for item in exporter.lost:
        assert _words(item) in shown
        assert _words(item) in readme
    if not exporter.lost:
        assert "Nothing released is lost" in shown


def test_export_refuses_a_folder_with_files_and_a_release_without_the_config(
    sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_release("sdoh").folder
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "stale.ann").write_text("", encoding="utf-8")
    assert main(["export", "brat", str(release), "--out", str(tmp_path / "used")]) == 1
    assert "is not an empty folder" in capsys.readouterr().err
    hollow = tmp_path / "hollow"
    (hollow / "data").mkdir(parents=True)
    shutil.copy(release / "manifest.json", hollow / "manifest.json")
    assert main(["export", "brat", str(hollow), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "not a release this package opens" in err and "listed in manifest.json but missing" in err
    assert not (tmp_path / "out").exists()
