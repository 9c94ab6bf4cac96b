"""Running a command a corpus registered (a scorer, an exporter): its own arguments parsed, and each argument it
declares may name a release opened through the door (``release/opened.py``) before the command sees it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clinical_corpora.builders.commands.arguments import plain_text
from clinical_corpora.builders.contract.lost_spans import KeptView
from clinical_corpora.builders.contract.release_view import GivenRelease
from clinical_corpora.builders.release import opened as door
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.registry import Command


def run_command(command: Command, parser: argparse.ArgumentParser, argv: list[str]) -> int:
    """Import a registered command only when it is used, parse its own arguments, open the releases they name,
    run it, and say on stderr what it left out of each release (spans a re-anchoring lost)."""
    return run_parsed(command, parser, argv)[0]


def run_parsed(command: Command, parser: argparse.ArgumentParser, argv: list[str]) -> tuple[int, argparse.Namespace]:
    """:func:`run_command`, with the arguments the command ran with (a scorer's reported scores among them)."""
    implementation = command.load()
    parser.description = plain_text(implementation.__doc__ or command.help)
    implementation.configure(parser)
    args = parser.parse_args(argv)
    for name in command.releases:
        value = getattr(args, name, None)
        if isinstance(value, Path) and door.release_location(value) is not None:
            setattr(args, name, given(value))
    status = int(implementation.run(args))
    for release in (value for value in vars(args).values() if isinstance(value, GivenRelease)):
        summary = release.view.lost_summary() if isinstance(release.view, KeptView) else None
        if summary is not None:
            print(summary, file=sys.stderr)
    return status, args


def given(path: Path) -> GivenRelease:
    """A release (or one config of it, ``<release>/data/<config>``) given on the command line, through the
    door; a text-free release holds no text to score or export."""
    location = door.release_location(path)
    if location is None:
        raise ClincorpError(f"{path} is not a release: it has no manifest.json")
    folder, config = location
    opened = door.open_release(folder)
    if opened.text_free:
        raise ClincorpError(
            f"{folder} is a text-free release: it holds no text; restore it first "
            f"(clincorp rehydrate {folder} --source NAME=PATH …) and use the restored release"
        )
    if config is not None and config not in opened.configs():
        raise ClincorpError(f"{path}: config {config} is not one the installed {opened.corpus.name} declares")
    builder = opened.builder
    models = {name: builder.CONFIGS[name] for name in opened.configs()}
    view, limit = KeptView(folder, models), builder.options.max_file_bytes
    return GivenRelease(
        view, opened.corpus.name, opened.variant, config, opened.digest, opened.version, max_file_bytes=limit
    )
