"""``clincorp view <release> --out DIR``: static HTML pages of a release, opened through the door, that open
offline from file://."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from clinical_corpora.builders.commands import arguments


@dataclass(frozen=True)
class ViewArgs:
    release: Path
    out: Path
    sources: dict[str, Path]
    predictions: Path | None
    results: Path | None


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("release", type=Path, help="a release folder (full, rehydrated or text-free)")
    parser.add_argument(
        "--out", type=Path, required=True, help="a new or empty folder (or an earlier view) to write into"
    )
    parser.add_argument(
        "--predictions",
        type=Path,
        help="a system's output in the format the corpus's scorer reads, drawn against the release's gold on each "
        "page: snomed_el a note_id,start,end,concept_id CSV, rad_coref a JSON {patient id: [[mention id, ...]]} "
        "over the released mention ids, clicr a JSON {query id: answer}",
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
    from clinical_corpora.builders.view.reading import open_release
    from clinical_corpora.builders.view.writer import write_view

    asked = ViewArgs(args.release, args.out, arguments.sources(args.source), args.predictions, args.results)
    outcome = write_view(open_release(asked.release, asked.sources, asked.predictions, asked.results), asked.out)
    print(f"{outcome.documents} document pages; open {outcome.index.resolve().as_uri()}")
    return 0


COMMANDS = (
    arguments.Subcommand(
        "view",
        "write static HTML pages of a release that open offline, from file://",
        arguments.plain_text(__doc__ or ""),
        configure,
        run,
    ),
)
