"""``clincorp build <corpus>…``: a release into a scratch folder (``build/``) that a later build replaces, kept
for inspection even when a gate fails."""

from __future__ import annotations

import argparse

from clinical_corpora.builders.commands import release

NAME = "build"
HELP = "the same as release without immutability, into a scratch folder"


def configure(parser: argparse.ArgumentParser) -> None:
    release.configure(parser, default_out="build", mode="build")


def run(args: argparse.Namespace) -> int:
    return release.run(args, mode="build")
