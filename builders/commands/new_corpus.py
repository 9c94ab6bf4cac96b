"""``clincorp new-corpus NAME --out DIR``: write a corpus plugin that works as it stands (corpus.yaml, record models,
a BRAT builder, three invented notes, pyproject.toml with its entry point, a test); ``pip install -e DIR``, then
``clincorp release NAME --text-free``, ``validate`` and ``view`` run on its sample. With ``--format brat`` the
corpus is declared in corpus.yaml alone (entity types, a relation type, an attribute) and built by the generic
BRAT builder: no record models, no builder."""

from __future__ import annotations

import argparse
import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from clinical_corpora.builders.commands import arguments
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CORPUS_NAME

SkeletonFormat = Literal["python", "brat"]


@dataclass(frozen=True)
class NewCorpusArgs:
    name: str
    out: Path
    form: SkeletonFormat = "python"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="the corpus name, also its Python package: lower case, digits and _")
    parser.add_argument("--out", type=Path, required=True, help="the project folder to write (absent or empty)")
    parser.add_argument(
        "--format",
        dest="form",
        choices=get_args(SkeletonFormat),
        default="python",
        help="python: the corpus's own builder and record models; brat: a BRAT corpus declared in corpus.yaml "
        "alone, built by the generic BRAT builder (default: python)",
    )


def run(args: argparse.Namespace) -> int:
    """Write the skeleton and say what to do next."""
    from clinical_corpora.builders.commands.skeleton import write_skeleton

    asked = NewCorpusArgs(args.name, args.out, args.form)
    if not re.fullmatch(CORPUS_NAME, asked.name) or keyword.iskeyword(asked.name):
        raise ClincorpError(
            f"{asked.name!r} cannot name a corpus: expected a lower-case letter, then lower-case letters, digits "
            "or _ (it is the plugin's Python package too)"
        )
    if asked.out.exists() and (not asked.out.is_dir() or any(asked.out.iterdir())):
        raise ClincorpError(f"{asked.out}: expected an absent or empty folder to write the corpus {asked.name} into")
    written = write_skeleton(asked.name, asked.out, asked.form)
    print(f"{asked.name}: {len(written)} files written in {asked.out}")
    print(f"next: pip install -e {asked.out} && clincorp release {asked.name} --text-free --out releases")
    return 0


COMMANDS = (
    arguments.Subcommand(
        "new-corpus",
        "write a working corpus plugin to start a new corpus from",
        arguments.plain_text(__doc__ or ""),
        configure,
        run,
    ),
)
