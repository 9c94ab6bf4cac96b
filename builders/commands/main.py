"""``clincorp``: release, build, validate, rehydrate, view, diff, list, score and export clinical corpora."""

from __future__ import annotations

import argparse
import os
import sys
from importlib.metadata import version as package_version
from types import ModuleType
from typing import NoReturn

from clinical_corpora.builders.commands import (
    build,
    diff,
    export,
    listing,
    rehydrate,
    release,
    score,
    validate,
    view,
)
from clinical_corpora.builders.commands.arguments import plain_text
from clinical_corpora.core.errors import ClincorpError

COMMANDS: tuple[ModuleType, ...] = (release, build, rehydrate, validate, diff, listing, score, export, view)
"""Each command's module: its ``NAME``, ``HELP``, ``configure(parser)`` and ``run(args)``."""


def entry() -> NoReturn:
    """The ``clincorp`` command. Arrow memory comes from the system allocator unless ``ARROW_DEFAULT_MEMORY_POOL``
    says otherwise (read when pyarrow is first imported): Arrow's default, mimalloc, kept ~3x the peak of the
    parquet reads in the threads that made them, so a release's peak RSS grew with its row groups."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    sys.exit(main())


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.command_module.run(args))
    except ClincorpError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader of our output went away (``clincorp validate … | head``)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def parser() -> argparse.ArgumentParser:
    """The command line: every command of :data:`COMMANDS`, each with its module's arguments."""
    parsed = argparse.ArgumentParser(prog="clincorp", description=plain_text(__doc__ or ""))
    parsed.add_argument("--version", action="version", version=f"clincorp {package_version('clinical-corpora')}")
    commands = parsed.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        command = commands.add_parser(module.NAME, help=module.HELP)
        command.description = plain_text(module.__doc__ or module.HELP)
        module.configure(command)
        command.set_defaults(command_module=module)
    return parsed
