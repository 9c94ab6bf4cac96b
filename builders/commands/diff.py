"""``clincorp diff OLD NEW``: what changed between two releases of one corpus, record by record."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clinical_corpora.builders.commands import arguments

if TYPE_CHECKING:
    from clinical_corpora.builders.diff.report import ReleaseDiff


@dataclass(frozen=True)
class DiffArgs:
    """What ``clincorp diff`` is asked (the Python API takes the same object)."""

    old: Path
    new: Path
    examples: int = 3
    json: bool = False


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", type=Path, help="the earlier release folder (full or text-free)")
    parser.add_argument("new", type=Path, help="the later release folder of the same corpus (full or text-free)")
    parser.add_argument(
        "--examples",
        type=_examples,
        default=3,
        metavar="N",
        help="show at most N examples of each kind of change (default 3)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the text report")


def run(args: argparse.Namespace) -> int:
    """Print the report (with --json, its warnings on stderr too); exit status 0 whether or not the releases
    differ (errors are 1)."""
    from clinical_corpora.builders.diff.report import as_json, as_text

    asked = DiffArgs(args.old, args.new, args.examples, args.json)
    found = diff(asked)
    if asked.json:
        print(json.dumps(as_json(found), ensure_ascii=False))
        for warning in found.warnings:
            print(f"clincorp diff: warning: {warning}", file=sys.stderr)
    else:
        sys.stdout.write(as_text(found))
    return 0


def diff(asked: DiffArgs) -> ReleaseDiff:
    """What changed between the two releases, per config, split, record and field (at most ``examples`` of each
    kind); returned once every file read matches its manifest."""
    from clinical_corpora.builders.diff.report import diff_releases, open_release

    return diff_releases(open_release(asked.old), open_release(asked.new), asked.examples)


def _examples(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number of examples, got {text!r}")
    return int(text)


COMMANDS = (
    arguments.Subcommand(
        "diff",
        "what changed between two releases of one corpus, record by record",
        arguments.plain_text(__doc__ or ""),
        configure,
        run,
    ),
)
