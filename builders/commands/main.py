"""``clincorp``: release, build, validate, rehydrate, view, diff, list, score, export and run baselines on
clinical corpora, and start a new one."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from importlib.metadata import version as package_version
from types import ModuleType
from typing import NoReturn

from clinical_corpora.builders.commands.arguments import Subcommand, plain_text
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.processes import tune_collector

COMMAND_MODULES = (
    "release",
    "rehydrate",
    "validate",
    "diff",
    "listing",
    "baseline",
    "score",
    "export",
    "view",
    "new_corpus",
)
"""The modules of ``clincorp``'s commands in this package, in the order ``--help`` lists them, loaded by name
when the command line is parsed: each lists its commands in ``COMMANDS`` (``release`` holds release and build)
and imports what a command runs only in its ``run``."""


def entry() -> NoReturn:
    """The ``clincorp`` command. Arrow memory comes from the system allocator unless ``ARROW_DEFAULT_MEMORY_POOL``
    says otherwise (read when pyarrow is first imported): Arrow's default, mimalloc, kept ~3x the peak of the
    parquet reads in the threads that made them, so a release's peak RSS grew with its row groups. The garbage
    collector is tuned here, once (:func:`tune_collector`)."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    tune_collector()
    sys.exit(main())


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.run(args))
    except ClincorpError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader of our output went away (``clincorp validate … | head``)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _command_module(name: str) -> ModuleType:
    return importlib.import_module(f"{__package__}.{name}")


def parser() -> argparse.ArgumentParser:
    """The command line: every command of the modules of :data:`COMMAND_MODULES`, each with its arguments."""
    parsed = argparse.ArgumentParser(prog="clincorp", description=plain_text(__doc__ or ""))
    parsed.add_argument("--version", action="version", version=f"clincorp {package_version('clinical-corpora')}")
    commands = parsed.add_subparsers(dest="command", required=True)
    for module in map(_command_module, COMMAND_MODULES):
        subcommand: Subcommand
        for subcommand in module.COMMANDS:
            command = commands.add_parser(subcommand.name, help=subcommand.help, description=subcommand.description)
            subcommand.configure(command)
            command.set_defaults(run=subcommand.run)
    return parsed
