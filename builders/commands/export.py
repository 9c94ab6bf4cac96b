"""``clincorp export FORMAT RELEASE --out DIR``: a release, opened through the door, written in a community
format its corpus registered."""

from __future__ import annotations

import argparse
from pathlib import Path

from clinical_corpora.builders.commands import arguments
from clinical_corpora.builders.commands.arguments import folder
from clinical_corpora.builders.plugins import load_plugins
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.registry import exporters


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("format", help="an export format registered by the release's corpus (clincorp list)")
    parser.add_argument("release", type=Path, help="a release folder (holding manifest.json and data/)")
    parser.add_argument("arguments", nargs=argparse.REMAINDER, help="--out DIR and the format's own options")


def run(args: argparse.Namespace) -> int:
    from clinical_corpora.builders.commands.corpus_commands import given, run_command

    load_plugins()
    release = given(args.release)
    formats = sorted(name for name, owner in exporters.keys() if owner == release.corpus)
    if (args.format, release.corpus) not in exporters.keys():
        raise ClincorpError(
            f"no export format {args.format!r} for the {release.corpus} corpus: its formats are "
            f"{', '.join(formats) or 'none'}"
        )
    parser = argparse.ArgumentParser(prog=f"clincorp export {args.format} {args.release}")
    parser.add_argument("--out", type=folder, required=True, help="the folder to write into")
    parser.set_defaults(release=release)
    return run_command(exporters.get((args.format, release.corpus)), parser, args.arguments)


COMMANDS = (
    arguments.Subcommand(
        "export",
        "write a release in another format (clincorp export FORMAT RELEASE -h)",
        arguments.plain_text(__doc__ or ""),
        configure,
        run,
    ),
)
