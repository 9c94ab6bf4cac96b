"""``clincorp baseline CORPUS RELEASE [--name NAME] [--seed N] [--split SPLIT] [--word-vectors FILE] --out DIR``.

Runs a baseline a corpus registered (``clincorp list`` names them) on a release holding text (a full release, or
one rehydrated), opened through the door, and writes its predictions in the format ``clincorp score`` reads for
that corpus."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from clinical_corpora.builders.commands import arguments
from clinical_corpora.builders.plugins import load_plugins
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.registry import baselines


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("corpus", help="an installed corpus with baselines")
    parser.add_argument("release", type=Path, help="a release folder of that corpus (full or rehydrated)")
    parser.add_argument("--name", help="the baseline (default: the corpus's first; clincorp list names them)")
    parser.add_argument("--seed", type=int, default=0, help="a random baseline's seed (default: 0)")
    parser.add_argument("--split", help="predict this split only (default: every split, a file each)")
    parser.add_argument("--out", type=Path, required=True, help="the folder to write the predictions into")
    parser.add_argument(
        "--word-vectors", type=Path, help="word vectors, word2vec text format, for an embedding baseline (sim-entity)"
    )


def baseline_name(corpus: str, name: str | None) -> str:
    """``name``, or the corpus's first baseline; an error naming the corpus's baselines when there is none such."""
    names = [key[1] for key in baselines.keys() if key[0] == corpus]
    if not names:
        raise ClincorpError(f"no baseline is registered for corpus {corpus!r}")
    if name is None:
        return names[0]
    if name not in names:
        raise ClincorpError(f"corpus {corpus} has no baseline {name!r}; its baselines are {', '.join(names)}")
    return name


@dataclass(frozen=True)
class BaselineArgs:
    """What ``clincorp baseline`` is asked (the Python API takes the same object)."""

    corpus: str
    release: Path
    out: Path
    name: str | None = None
    seed: int = 0
    split: str | None = None
    word_vectors: Path | None = None


@dataclass(frozen=True)
class BaselineRun:
    """A baseline run: its name, and a line per predictions file written."""

    name: str
    written: list[str]


def run(args: argparse.Namespace) -> int:
    asked = BaselineArgs(args.corpus, args.release, args.out, args.name, args.seed, args.split, args.word_vectors)
    for line in baseline(asked).written:
        print(line)
    return 0


def baseline(asked: BaselineArgs) -> BaselineRun:
    """Run the corpus's baseline (``name``, or its first) on the release, writing its predictions into ``out``."""
    from clinical_corpora.builders.commands.corpus_commands import given
    from clinical_corpora.builders.contract.baseline import Baseline, BaselineRequest

    load_plugins()
    name = baseline_name(asked.corpus, asked.name)
    release = given(asked.release)
    if release.corpus != asked.corpus:
        raise ClincorpError(f"{asked.release} is a {release.corpus} release, not a {asked.corpus} one")
    system = cast(Baseline, baselines.get((asked.corpus, name)).load_target())
    request = BaselineRequest(release, name, asked.seed, asked.split, asked.out, asked.word_vectors)
    return BaselineRun(name, list(system(request)))


COMMANDS = (
    arguments.Subcommand(
        "baseline",
        "run a paper's non-neural baseline on a release, writing predictions clincorp score reads",
        arguments.plain_text(__doc__ or ""),
        configure,
        run,
    ),
)
