"""``clincorp``: release, build, validate, list, score and export clinical corpora."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CorpusManifest, all_corpora, find_corpus
from clinical_corpora.builders.registry import EXPORTERS, SCORERS


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except ClincorpError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="clincorp", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, handler, default_out, helptext in (
            ("release", _release, "releases", "build, validate and write an immutable release"),
            ("build", _build, "build", "the same without immutability, into a scratch folder")):
        command = commands.add_parser(name, help=helptext)
        command.add_argument("corpora", nargs="*", help="corpus names or folders holding a corpus.yaml")
        command.add_argument("--all", action="store_true", help="every corpus under corpora/")
        command.add_argument("--out", type=Path, default=Path(default_out))
        command.add_argument("--source", action="append", default=[], metavar="NAME=PATH",
                             help="read source NAME from PATH instead of the embedded sample")
        command.add_argument("--on-error", choices=["fail", "quarantine"], default="fail",
                             help="fail on the first bad record, or quarantine bad records in rejects.jsonl")
        command.set_defaults(handler=handler)
    validate = commands.add_parser("validate", help="re-check an existing release folder")
    validate.add_argument("release", type=Path)
    validate.set_defaults(handler=_validate)
    commands.add_parser("list", help="corpora, versions, access and sources").set_defaults(handler=_list)
    score = commands.add_parser("score", help="score predictions against gold (clincorp score NAME -h)")
    score.add_argument("scorer", choices=sorted(SCORERS))
    score.add_argument("arguments", nargs=argparse.REMAINDER)
    score.set_defaults(handler=lambda args: _run_registered(f"clincorp score {args.scorer}",
                                                           SCORERS[args.scorer], args.arguments))
    export = commands.add_parser("export", help="write a release in another format (clincorp export FORMAT -h)")
    export.add_argument("format", choices=sorted(EXPORTERS))
    export.add_argument("arguments", nargs=argparse.REMAINDER)
    export.set_defaults(handler=lambda args: _run_registered(f"clincorp export {args.format}",
                                                            EXPORTERS[args.format], args.arguments))
    return parser


def _run_registered(prog: str, module_name: str, argv: list[str]) -> int:
    """Import a registered command module only when it is used, parse its own arguments, run it."""
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=prog, description=module.__doc__)
    module.configure(parser)
    return int(module.run(parser.parse_args(argv)))


def _selected(args: argparse.Namespace) -> list[CorpusManifest]:
    if args.all == bool(args.corpora):
        raise ClincorpError("name one or more corpora, or --all")
    return all_corpora() if args.all else [find_corpus(name) for name in args.corpora]


def _overrides(pairs: list[str]) -> dict[str, Path]:
    overrides = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise ClincorpError(f"--source takes NAME=PATH, got {pair!r}")
        overrides[name] = Path(path)
    return overrides


def _release(args: argparse.Namespace) -> int:
    return _run(args, "release")


def _build(args: argparse.Namespace) -> int:
    return _run(args, "build")


def _run(args: argparse.Namespace, mode: str) -> int:
    from clinical_corpora.builders.pipeline import run

    corpora = _selected(args)
    if args.source and len(corpora) > 1:
        raise ClincorpError("--source applies to one corpus at a time")
    for manifest in corpora:
        outcome = run(manifest, args.out, _overrides(args.source), args.on_error, mode)  # type: ignore[arg-type]
        counts = outcome.manifest.get("counts", {})
        verb = {"released": "released", "unchanged": "unchanged (identical bytes)", "built": "built"}[outcome.status]
        print(f"{manifest.name} {manifest.version}: {verb} at {outcome.folder} "
              f"(read {counts.get('read')}, written {counts.get('written')}, rejected {counts.get('rejected')})")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from clinical_corpora.builders.release_check import check_release

    results = check_release(args.release)
    for result in results:
        print(result.describe())
        for detail in result.details:
            if not detail.get("success", False):
                print(f"  {detail.get('problem') or detail}")
    return 0 if all(result.success for result in results) else 1


def _list(args: argparse.Namespace) -> int:
    for manifest in all_corpora():
        access = "public" if manifest.access.public else "restricted"
        print(f"{manifest.name} {manifest.version} [{access}: {manifest.access.how.strip()}]")
        for name, spec in manifest.sources.items():
            optional = "" if spec.required else " (optional)"
            default = f"default {spec.path}" if spec.path else "read only when given"
            print(f"  source {name}{optional}: {spec.kind}, {default}\n    {spec.description.strip()}")
    return 0
