"""Builder options: typed fields with defaults, set from the command line's text, recorded when changed."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.base import Builder, BuilderOptions
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.core.errors import ClincorpError
from tests.conftest import SampleRelease


@dataclass(frozen=True)
class Options(BuilderOptions):
    trim_whitespace: bool = False
    split_seed: int = 2018
    test_fraction: float = 0.25
    name: str = "gold"


class OptionedBuilder(Builder):
    OPTIONS = Options


def test_text_from_the_command_line_becomes_the_declared_types() -> None:
    options = Options.parse({"trim_whitespace": "TRUE", "split_seed": "7", "test_fraction": "0.5", "name": "x"})
    assert options == Options(trim_whitespace=True, split_seed=7, test_fraction=0.5, name="x")
    assert Options.parse({"test_fraction": 1}).test_fraction == 1.0


def test_only_options_that_differ_from_the_defaults_are_recorded() -> None:
    assert Options().changed() == {}
    assert Options.parse({"split_seed": "2018", "trim_whitespace": "true"}).changed() == {"trim_whitespace": True}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {"trim": "true"},
            "unknown builder option 'trim'; this corpus's options: max_file_bytes, name, split_seed, test_fraction",
        ),
        ({"trim_whitespace": "yes"}, "'trim_whitespace' takes true or false, got 'yes'"),
        ({"split_seed": "1.5"}, "'split_seed' takes a whole number, got '1.5'"),
        ({"split_seed": True}, "'split_seed' takes a whole number, got True"),
        ({"test_fraction": "a quarter"}, "'test_fraction' takes a number, got 'a quarter'"),
        ({"name": 3}, "'name' takes text, got 3"),
    ],
)
def test_a_wrong_option_is_an_error_naming_it_and_what_it_takes(values: dict, message: str) -> None:
    with pytest.raises(ClincorpError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Options.parse(values)


def test_a_builder_gets_its_defaults_or_the_options_given_and_refuses_another_class() -> None:
    assert OptionedBuilder().options == Options()
    assert OptionedBuilder(Options(split_seed=1)).options.split_seed == 1
    with pytest.raises(ClincorpError, match="OptionedBuilder takes Options, not BuilderOptions"):
        OptionedBuilder(BuilderOptions())


def test_an_option_given_on_the_command_line_is_built_recorded_and_validated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["release", "snomed_el", "--option", "trim_whitespace=true", "--text-free", "--out", str(out)]) == 0
    release = out / "snomed_el" / f"snomed_el-{find_corpus('snomed_el').sample_version}"
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["options"] == {"trim_whitespace": True}
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "The builder's options differ from its defaults: --option trim_whitespace=true." in card
    assert "trimmed to the first and last non-space character" in card
    capsys.readouterr()
    assert main(["validate", str(release)]) == 0
    text_free = release.parent / f"{release.name}.text-free"
    assert json.loads((text_free / "manifest.json").read_text(encoding="utf-8"))["options"] == {"trim_whitespace": True}
    assert main(["rehydrate", str(text_free), "--out", str(tmp_path / "restored")]) == 0


def test_a_release_with_default_options_records_none(sample_release: SampleRelease) -> None:
    manifest = sample_release("snomed_el").manifest
    assert "options" not in manifest


def test_a_wrong_option_on_the_command_line_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["release", "snomed_el", "--option", "trim=true", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: unknown builder option 'trim'; this corpus's options: max_file_bytes, split_seed, ")
    assert main(["release", "snomed_el", "--option", "trim_whitespace", "--out", str(tmp_path)]) == 1
    assert "--option takes NAME=VALUE, got 'trim_whitespace'" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_validate_refuses_a_manifest_whose_options_the_builder_does_not_take(
    sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = Path(
        shutil.copytree(
            sample_release("snomed_el").folder, tmp_path / "snomed_el" / sample_release("snomed_el").folder.name
        )
    )
    path = release / "manifest.json"
    path.write_text(
        json.dumps({**json.loads(path.read_text(encoding="utf-8")), "options": {"import": "os"}}), encoding="utf-8"
    )
    assert main(["validate", str(release)]) == 1
    assert "manifest.json options: unknown builder option 'import'" in capsys.readouterr().out
