"""What every command is (:class:`Subcommand`) and what several take: ``NAME=VALUE`` pairs (``--source``,
``--option``), counts, folders to write into."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from clinical_corpora.core.errors import ClincorpError


@dataclass(frozen=True)
class Subcommand:
    """One ``clincorp`` command: its name, one-line help, longer description, arguments and what it runs."""

    name: str
    help: str
    description: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def plain_text(docstring: str) -> str:
    """A docstring as ``--help`` shows it: reST roles and literals as their plain text (``x`` → x,
    :func:`~a.b` → b)."""
    text = re.sub(r":[a-z]+:`~?(?:[\w.]*\.)?([^`.]+)`", r"\1", docstring)
    return re.sub(r"``([^`]+)``", r"\1", text)


def pairs(option: str, form: str, given: list[str]) -> dict[str, str]:
    """``NAME=VALUE`` arguments by name; an error naming the option and the form it takes."""
    named = {}
    for pair in given:
        name, sep, value = pair.partition("=")
        if not sep or not name or not value:
            raise ClincorpError(f"{option} takes {form}, got {pair!r}")
        named[name] = value
    return named


def sources(given: list[str]) -> dict[str, Path]:
    """``--source NAME=PATH`` arguments by name."""
    return {name: Path(path) for name, path in pairs("--source", "NAME=PATH", given).items()}


def add_sources(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--source", action="append", default=[], metavar="NAME=PATH", help=help)


def count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number of records, got {text!r}")
    return int(text)


def workers(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes of at least 1, got {text!r}")
    return int(text)


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def folder(text: str) -> Path:
    """A folder to write into: it, or its nearest existing parent, must be a folder."""
    path = Path(text)
    existing = next((found for found in (path, *path.parents) if found.exists()), None)
    if existing is not None and not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{existing} is a file, not a folder: give a folder to write into")
    return path
