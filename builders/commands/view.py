"""``clincorp view <release> --out DIR``: static HTML pages of a release, opened through the door, that open
offline from file://. The pages pass the release's PHI gate (a full release's note text left out) or none is
written."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from clinical_corpora.builders.commands import arguments

if TYPE_CHECKING:
    from clinical_corpora.builders.view.writer import Outcome


@dataclass(frozen=True)
class ViewArgs:
    """What ``clincorp view`` is asked (the Python API takes the same object)."""

    release: Path
    out: Path
    sources: dict[str, Path] = field(default_factory=dict)
    predictions: Path | None = None
    results: Path | None = None


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("release", type=Path, help="a release folder (full, rehydrated or text-free)")
    parser.add_argument(
        "--out", type=Path, required=True, help="a new or empty folder (or an earlier view) to write into"
    )
    parser.add_argument(
        "--predictions",
        type=Path,
        help="a system's output in the format the corpus's scorer reads (what clincorp baseline writes), drawn "
        "against the release's gold on each page: snomed_el a note_id,start,end,concept_id CSV, rad_coref a JSON "
        "{patient id: [[mention id, ...]]} over the released mention ids, clicr a JSON {query id: answer}, sdoh a "
        "BRAT folder at the release's {split}/{source}/<doc>.ann paths, odie_anaphora a CoNLL-2012 response over "
        "the release's conll2012 export",
    )
    parser.add_argument(
        "--results",
        type=Path,
        help="a folder of result records (clincorp score --record) made on this release, listed beside the baselines",
    )
    arguments.add_sources(
        parser,
        "the sources of the annotators' files, for an overlay of two annotators (clincorp list names them); "
        "none given: a sample release's embedded samples, no overlay for a real release",
    )


def run(args: argparse.Namespace) -> int:
    outcome = view(ViewArgs(args.release, args.out, arguments.sources(args.source), args.predictions, args.results))
    print(f"{outcome.documents} document pages; open {outcome.index.resolve().as_uri()}")
    return 0


def view(asked: ViewArgs) -> Outcome:
    """The release's pages written into ``out``: how many documents, and the index page to open."""
    from clinical_corpora.builders.view.reading import open_release
    from clinical_corpora.builders.view.writer import write_view

    return write_view(open_release(asked.release, asked.sources, asked.predictions, asked.results), asked.out)


COMMANDS = (
    arguments.Subcommand(
        "view",
        "write static HTML pages of a release that open offline, from file://",
        arguments.plain_text(__doc__ or ""),
        configure,
        run,
    ),
)
