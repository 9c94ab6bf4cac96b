"""``clincorp score NAME …``: a scorer a corpus registered (``clincorp score NAME -h`` shows its arguments); a
release given as its gold is opened through the door."""

from __future__ import annotations

import argparse

from clinical_corpora.builders.commands import arguments
from clinical_corpora.builders.plugins import load_plugins
from clinical_corpora.core.registry import scorers


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scorer", help="a scorer registered by a corpus (clincorp list shows them)")
    parser.add_argument("arguments", nargs=argparse.REMAINDER)


def run(args: argparse.Namespace) -> int:
    from clinical_corpora.builders.commands.corpus_commands import run_command

    load_plugins()
    parser = argparse.ArgumentParser(prog=f"clincorp score {args.scorer}")
    return run_command(scorers.get(args.scorer), parser, args.arguments)


COMMANDS = (
    arguments.Subcommand(
        "score",
        "score predictions against gold (clincorp score NAME -h)",
        arguments.plain_text(__doc__ or ""),
        configure,
        run,
    ),
)
