"""Builder options: typed fields with defaults, set from the command line's text, recorded when changed."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from clinical_corpora.builders.contract.base import Builder, BuilderOptions
from clinical_corpora.core.errors import ClincorpError


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
        ({"trim": "true"}, "unknown builder option 'trim'; this corpus's options: name, split_seed, test_fraction"),
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
