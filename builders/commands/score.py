"""``clincorp score NAME …``: a scorer a corpus registered (``clincorp score NAME -h`` shows its arguments); a
release given as its gold is opened through the door.

``--record FILE --system NAME`` (anywhere after NAME) also writes a result record binding the scores to the
gold release's digest. ``clincorp score --check-record FILE RELEASE`` checks a record against a release: it
passes when the record was made on that release, or, for a text-free release, on the full release whose
manifest it keeps in ``full/manifest.json`` (a rehydrated release is byte for byte that release, so both
accept each other's records). ``clincorp score --eval-results RECORD … --dataset-id OWNER/NAME --out DIR`` writes
each record as the Hugging Face Hub's evaluation-results YAML, ``DIR/.eval_results/<record>.yaml``, for a model
repository (the release's digest kept in each entry's ``notes``)."""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version as package_version
from pathlib import Path

from clinical_corpora.builders.commands import arguments
from clinical_corpora.builders.contract.scored import Scored
from clinical_corpora.builders.plugins import load_plugins
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.registry import scorers
from clinical_corpora.core.results import HUB_DATASET_ID, ResultRecord, eval_results_entries, read_record


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scorer", nargs="?", help="a scorer registered by a corpus (clincorp list shows them)")
    parser.add_argument("arguments", nargs=argparse.REMAINDER)
    parser.add_argument(
        "--check-record", nargs=2, type=Path, metavar=("FILE", "RELEASE"), help="check a result record's release"
    )
    parser.add_argument(
        "--eval-results",
        nargs="+",
        type=Path,
        metavar="RECORD",
        help="write result records as the Hub's evaluation-results YAML, DIR/.eval_results/<record>.yaml "
        "(with --dataset-id and --out)",
    )
    parser.add_argument("--dataset-id", help="with --eval-results: the release's dataset id on the Hub, OWNER/NAME")
    parser.add_argument("--out", type=Path, help="with --eval-results: the model repository folder to write into")


def _record_options(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """``--record`` and ``--system`` taken out of a scorer's arguments, and the rest."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--record", type=Path)
    parser.add_argument("--system")
    return parser.parse_known_args(argv)


@dataclass(frozen=True)
class ScoreArgs:
    """What ``clincorp score NAME …`` is asked (the Python API takes the same object): the scorer, its own
    arguments as on the command line, and ``--record FILE --system NAME``."""

    scorer: str
    arguments: tuple[str, ...] = ()
    record: Path | None = None
    system: str | None = None


@dataclass(frozen=True)
class ScoreRun:
    """A scorer's run: its exit status, the scores it reported (None when it reports none), and the result record
    written with ``record``."""

    status: int
    scored: Scored | None
    record: ResultRecord | None = None


def run(args: argparse.Namespace) -> int:
    load_plugins()
    if args.check_record is not None:
        print(check_record(*args.check_record))
        return 0
    if args.eval_results is not None:
        for written in export_eval_results(args.eval_results, args.dataset_id, args.out):
            print(written)
        return 0
    if args.scorer is None:
        raise ClincorpError("clincorp score takes a scorer NAME (clincorp list shows them) or --check-record")
    own, rest = _record_options(args.arguments)
    scored = score(ScoreArgs(args.scorer, tuple(rest), own.record, own.system))
    if scored.record is not None:
        print(f"result record: {own.record}", file=sys.stderr)  # stdout stays the scorer's (--json)
    return scored.status


def score(asked: ScoreArgs) -> ScoreRun:
    """Run a registered scorer on its arguments (it prints its report); with ``record``, write the result record
    binding its scores to the gold release's digest."""
    from clinical_corpora.builders.commands.corpus_commands import run_parsed
    from clinical_corpora.builders.contract.scored import scored_of

    load_plugins()
    if asked.record is not None and not asked.system:
        raise ClincorpError("--record needs --system NAME: the name of the system whose predictions are scored")
    parser = argparse.ArgumentParser(prog=f"clincorp score {asked.scorer}")
    status, scored_args = run_parsed(scorers.get(asked.scorer), parser, list(asked.arguments))
    if asked.record is None or asked.system is None or status != 0:
        return ScoreRun(status, scored_of(scored_args))
    record = make_record(asked.scorer, asked.system, scored_args)
    record.write(asked.record)
    return ScoreRun(status, scored_of(scored_args), record)


def make_record(scorer: str, system: str, scored_args: argparse.Namespace) -> ResultRecord:
    """The record of a scorer's run: its reported metrics on the release given as its gold."""
    from clinical_corpora.builders.contract.release_view import GivenRelease
    from clinical_corpora.builders.contract.scored import scored_of

    releases = [value for value in vars(scored_args).values() if isinstance(value, GivenRelease)]
    scored = scored_of(scored_args)
    if not releases or scored is None:
        raise ClincorpError(
            f"--record binds scores to a release: give scorer {scorer} a release folder as its gold "
            "(a record of scores on a plain file would be bound to nothing)"
        )
    release = releases[0]
    return ResultRecord(
        digest=release.digest,
        corpus=release.corpus,
        version=release.version,
        variant=release.variant,
        config=scored.config or release.config,
        split=getattr(scored_args, "split", None),
        scorer=scorer,
        scorer_version=package_version("clinical-corpora"),
        system=system,
        metrics=scored.metrics,
        made=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def check_record(record_file: Path, folder: Path) -> str:
    """What the record is and which release it was made on, when it was made on ``folder`` (or on the full
    release a text-free one keeps); an error otherwise."""
    from clinical_corpora.builders.release.opened import open_release

    record = read_record(record_file)
    opened = open_release(folder)
    accepted = {opened.digest: "this release"}
    if opened.text_free:
        accepted[opened.full_digest] = "the full release this text-free one keeps (full/manifest.json)"
    if record.digest not in accepted:
        raise ClincorpError(
            f"{record_file}: the record was made on release digest {record.digest} ({record.corpus} "
            f"{record.version}, {record.variant}), not on {folder} (digest {opened.digest}"
            + (f", its full release {opened.full_digest}" if opened.text_free else "")
            + "): its scores do not describe this release's data"
        )
    return (
        f"{record_file}: {record.system} on {record.corpus} {record.version} ({record.scorer}, "
        f"split {record.split or 'all'}) was made on {accepted[record.digest]}, digest {record.digest}"
    )


def export_eval_results(records: list[Path], dataset_id: str | None, out: Path | None) -> list[Path]:
    """Each result record written as ``out/.eval_results/<record's file stem>.yaml``: the files written."""
    import yaml

    if dataset_id is None or out is None:
        raise ClincorpError("--eval-results needs --dataset-id OWNER/NAME (the release on the Hub) and --out DIR")
    if not re.fullmatch(HUB_DATASET_ID, dataset_id):
        raise ClincorpError(f"--dataset-id {dataset_id!r}: expected a Hub dataset id, OWNER/NAME")
    stems = [path.stem for path in records]
    repeated = sorted({stem for stem in stems if stems.count(stem) > 1})
    if repeated:
        raise ClincorpError(f"--eval-results: two records would both be written as .eval_results/{repeated[0]}.yaml")
    entries = {path: eval_results_entries(read_record(path), dataset_id) for path in records}
    written = []
    for path, listed in entries.items():
        target = out / ".eval_results" / f"{path.stem}.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(yaml.safe_dump(listed, sort_keys=False, allow_unicode=True), encoding="utf-8")
        written.append(target)
    return written


COMMANDS = (
    arguments.Subcommand(
        "score",
        "score predictions against gold (clincorp score NAME -h); --record / --check-record bind results to a release",
        arguments.plain_text(__doc__ or ""),
        configure,
        run,
    ),
)
