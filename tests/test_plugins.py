"""Corpora are plugins: a corpus outside the package registers itself, its scorer and its exporter
through the entry-point group, and ``clincorp`` finds all three with no central edit."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from clinical_corpora.builders import plugins
from clinical_corpora.builders.commands.main import main
from clinical_corpora.core.registry import corpora, exporters, scorers

TINY_SAMPLE = Path(__file__).parent / "tiny_corpus" / "sample"
HEAVY = {"datasets", "pyarrow", "pandas", "great_expectations", "lxml", "justext", "spacy", "scipy", "numpy"}


@pytest.fixture
def tiny_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An installed distribution whose entry point names the tiny corpus's plugin module."""
    dist_info = tmp_path / "site" / "tiny_plugin-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-plugin\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(f"[{plugins.ENTRY_POINT_GROUP}]\ntiny = tests.tiny_corpus.plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    yield
    corpora.unregister("tiny")
    scorers.unregister("tiny-spans")
    exporters.unregister(("tsv", "tiny"))
    sys.modules.pop("tests.tiny_corpus.plugin", None)


def test_a_plugin_corpus_is_listed_released_scored_and_exported(
    tiny_plugin: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    assert "tiny 1.0.0 [public: embedded in the test suite]" in listing and "export formats: tsv" in listing
    assert "tiny-spans (exact-span F1)" in listing and "sdoh 1." in listing

    assert main(["release", "tiny", "--out", str(tmp_path / "releases")]) == 0
    release = tmp_path / "releases" / "tiny" / "tiny-1.0.0+sample"
    assert main(["export", "tsv", str(release), "--out", str(tmp_path / "tsv")]) == 0
    exported = tmp_path / "tsv"
    assert (exported / "spans.tsv").read_text().splitlines()[1:] == (
        TINY_SAMPLE / "spans.tsv"
    ).read_text().splitlines()[1:]

    capsys.readouterr()
    assert main(["score", "tiny-spans", str(TINY_SAMPLE / "spans.tsv"), str(exported / "spans.tsv")]) == 0
    assert capsys.readouterr().out == "span_f1 1.0000\n"
    assert (
        main(["score", "tiny-spans", str(TINY_SAMPLE / "spans.tsv"), str(TINY_SAMPLE / "annotator_b" / "spans.tsv")])
        == 0
    )
    assert capsys.readouterr().out != "span_f1 1.0000\n"


def test_a_format_is_offered_only_for_the_corpus_that_registers_it(
    tiny_plugin: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["release", "tiny", "--out", str(tmp_path)]) == 0
    assert (
        main(["export", "conll2012", str(tmp_path / "tiny" / "tiny-1.0.0+sample"), "--out", str(tmp_path / "x")]) == 1
    )
    assert "no export format 'conll2012' for the tiny corpus: its formats are tsv" in capsys.readouterr().err


def test_a_broken_plugin_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dist_info = tmp_path / "broken-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(f"[{plugins.ENTRY_POINT_GROUP}]\nbroken = no_such_module_here\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["list"]) == 1  # reported, and every other corpus listed
    listed = capsys.readouterr()
    assert "the corpus plugin 'broken' (no_such_module_here) failed to load" in listed.err
    assert "sdoh " in listed.out and "snomed_el " in listed.out
    assert main(["release", "broken", "--out", str(tmp_path / "out")]) == 1  # named when used
    assert "the corpus plugin 'broken' (no_such_module_here) failed to load" in capsys.readouterr().err
    assert main(["validate", str(tmp_path / "nothing")]) == 3  # another command still runs


def test_no_corpus_installed_is_an_error_not_a_silent_success(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(plugins, "entry_points", lambda group: [])
    monkeypatch.setattr(corpora, "_entries", {})
    for argv in (["list"], ["release", "--all"], ["build", "--all"], ["release", "sdoh"]):
        assert main(argv) == 1
        assert "no corpus is installed" in capsys.readouterr().err
    monkeypatch.setattr(corpora, "_entries", {"sdoh": Path("unused")})
    assert main(["release", "nope"]) == 1
    assert "no corpus 'nope'; registered: sdoh" in capsys.readouterr().err


def test_help_and_list_import_no_heavy_library() -> None:
    script = (
        "import sys\nfrom clinical_corpora.builders.commands.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\nmain(['list'])\n"
        "print(sorted({m.split('.')[0] for m in sys.modules}))"
    )
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    imported = set(eval(loaded.splitlines()[-1]))
    assert imported & HEAVY == set()
    assert "clinical_corpora" in imported


def test_a_reader_that_goes_away_ends_the_output_without_a_traceback(tmp_path: Path) -> None:
    script = "from clinical_corpora.builders.commands.main import main\nraise SystemExit(main(['list']))"
    reader = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.close()  # as `clincorp list | head -0` would
    stderr = reader.stderr.read().decode()
    assert reader.wait() == 1
    assert "Traceback" not in stderr


@pytest.mark.parametrize(
    "argv",
    [[], ["release"], ["build"], ["validate"], ["rehydrate"], ["diff"], ["list"], ["export"]]
    + [["score", name] for name in ("sdoh", "snomed", "coref", "clicr")],
)
def test_help_is_plain_text(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    shown = capsys.readouterr().out
    assert "usage: clincorp" in shown
    assert "``" not in shown and not re.search(r":[a-z]+:`", shown), shown
