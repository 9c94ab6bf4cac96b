"""``clincorp``: release, build, validate, list, score and export clinical corpora."""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import sys
from importlib.metadata import version as package_version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn

from clinical_corpora.builders.plugins import all_corpora, find_corpus, load_plugins
from clinical_corpora.builders.text_free.rehydrate_commands import (
    add_reanchor_arguments,
    check_sources,
    reanchored_summary,
)
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.registry import Command, exporters, scorers

if TYPE_CHECKING:
    from clinical_corpora.builders.release.pipeline import Outcome
    from clinical_corpora.builders.release.request import ChangesSince
    from clinical_corpora.validation.gates import GateResult


def entry() -> NoReturn:
    """The ``clincorp`` command: :func:`main`, then exit without the collector's last passes over every
    loaded object (the work is done and written; ~0.15 s at each exit).

    Arrow memory comes from the system allocator unless ``ARROW_DEFAULT_MEMORY_POOL`` says otherwise (read
    when pyarrow is first imported, which this module does not do): Arrow's default, mimalloc, kept ~3x the
    peak of the parquet reads in the threads that made them, so a release's peak RSS grew with its row
    groups (~170 MB more against ~30 MB reading a release of 50k SDOH notes)."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    status = main()
    gc.freeze()
    sys.exit(status)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except ClincorpError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader of our output went away (``clincorp validate … | head``)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def plain_text(docstring: str) -> str:
    """A docstring as ``--help`` shows it: reST roles and literals as their plain text (``x`` → x,
    :func:`~a.b` → b)."""
    text = re.sub(r":[a-z]+:`~?(?:[\w.]*\.)?([^`.]+)`", r"\1", docstring)
    return re.sub(r"``([^`]+)``", r"\1", text)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="clincorp", description=plain_text(__doc__ or ""))
    parser.add_argument("--version", action="version", version=f"clincorp {package_version('clinical-corpora')}")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_release(commands, "release", "releases", "build, validate and write an immutable release")
    _add_release(commands, "build", "build", "the same without immutability, into a scratch folder")
    _add_rehydrate(commands)
    _add_validate(commands)
    _add_diff(commands)
    commands.add_parser("list", help="corpora, versions, access and sources").set_defaults(handler=_list)
    score = commands.add_parser("score", help="score predictions against gold (clincorp score NAME -h)")
    score.add_argument("scorer", help="a scorer registered by a corpus (clincorp list shows them)")
    score.add_argument("arguments", nargs=argparse.REMAINDER)
    score.set_defaults(handler=_score)
    export = commands.add_parser("export", help="write a release in another format (clincorp export FORMAT RELEASE -h)")
    export.add_argument("format", help="an export format registered by the release's corpus (clincorp list)")
    export.add_argument("release", type=Path, help="a release folder (holding manifest.json and data/)")
    export.add_argument("arguments", nargs=argparse.REMAINDER, help="--out DIR and the format's own options")
    export.set_defaults(handler=_export)
    _add_view(commands)
    return parser


def _add_view(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    view = commands.add_parser("view", help="write static HTML pages of a release that open offline, from file://")
    view.add_argument("release", type=Path, help="a release folder (full, rehydrated or text-free)")
    view.add_argument(
        "--out", type=Path, required=True, help="a new or empty folder (or an earlier view) to write into"
    )
    view.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="the sources of the annotators' files, for an overlay of two annotators (clincorp list names them); "
        "none given: a sample release's embedded samples, no overlay for a real release",
    )
    view.set_defaults(handler=_view)


def _view(args: argparse.Namespace) -> int:
    from clinical_corpora.builders.view.reading import open_release
    from clinical_corpora.builders.view.writer import write_view

    outcome = write_view(open_release(args.release, _overrides(args.source)), args.out)
    print(f"{outcome.documents} document pages; open {outcome.index.resolve().as_uri()}")
    return 0


def _add_release(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], name: str, default_out: str, helptext: str
) -> None:
    command = commands.add_parser(name, help=helptext)
    command.add_argument("corpora", nargs="*", help="corpus names or folders holding a corpus.yaml")
    command.add_argument("--all", action="store_true", help="every installed corpus")
    command.add_argument("--out", type=Path, default=Path(default_out))
    _add_inputs(command)
    command.add_argument(
        "--max-rejects",
        type=_count,
        metavar="N",
        help="let this run quarantine up to N records (overrides corpus.yaml; recorded in the manifest and card)",
    )
    command.add_argument(
        "--gates",
        type=Path,
        metavar="FILE",
        help="a YAML overlay of corpus.yaml's gates: section (max_rejects, agreement thresholds and required "
        "flags, expectation arguments such as mostly, matched by table, expectation and column) for this "
        "run only; recorded in the manifest and card",
    )
    command.add_argument(
        "--on-error",
        choices=["fail", "quarantine"],
        default="fail",
        help="fail on the first bad record, or quarantine bad records in rejects.jsonl",
    )
    command.add_argument(
        "--workers",
        type=_workers,
        metavar="N",
        help="build the corpus's document shards in N processes (default: a process per 64 documents, at most "
        "every core; never more than the cores or the shards); the release's bytes are the same whatever N",
    )
    command.add_argument(
        "--previous",
        type=Path,
        metavar="OLD",
        help="record in the card and manifest what changed since the release OLD of the same corpus (a release "
        "folder, full or text-free): records added, removed and changed, per config, split and field",
    )
    if name == "release":
        command.add_argument(
            "--text-free",
            action="store_true",
            help="also write the text-free variant beside the release (<corpus>-<version>.text-free: no licensed text, "
            "checked by the leak gate; anyone may share it and restore the release with clincorp rehydrate)",
        )
    command.set_defaults(handler=_release if name == "release" else _build)


def _add_inputs(command: argparse.ArgumentParser) -> None:
    """--source, --sample and --option: what a release is built from and how."""
    command.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="read source NAME from PATH instead of the embedded sample",
    )
    command.add_argument(
        "--sample",
        action="append",
        default=[],
        metavar="NAME",
        help="beside --source inputs, read required source NAME from its invented sample (a sample release)",
    )
    command.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set the builder's option NAME for this run (the corpus's README names its options; recorded in "
        "the manifest and card)",
    )


def _add_rehydrate(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rehydrate = commands.add_parser(
        "rehydrate", help="rebuild a full release from a text-free one and your own copies of its sources"
    )
    rehydrate.add_argument("release", type=Path, help="a text-free release folder (<corpus>-<version>.text-free)")
    rehydrate.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="your copy of source NAME (clincorp list names them); none given: the embedded samples",
    )
    rehydrate.add_argument(
        "--out", type=Path, default=Path("releases"), help="writes <out>/<corpus>/<corpus>-<version>/"
    )
    rehydrate.add_argument(
        "--on-error",
        choices=["fail", "quarantine"],
        default="fail",
        help="fail when a document differs from its recorded hash, or leave its records out (a partial release)",
    )
    add_reanchor_arguments(rehydrate)
    rehydrate.set_defaults(handler=_rehydrate)


def _add_validate(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    validate = commands.add_parser("validate", help="re-check an existing release folder")
    validate.add_argument("release", type=Path)
    validate.add_argument(
        "--corpus",
        metavar="NAME_OR_PATH",
        help="check against this installed corpus or corpus.yaml folder (default: the installed corpus the "
        "release's manifest.json names; nothing is imported from the release)",
    )
    validate.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (the release, its verdict, and each gate with its status, observed and expected "
        "values and where it failed) instead of lines; the exit status is the same: 0 valid, 1 invalid, "
        "2 wrong arguments, 3 could not check",
    )
    validate.add_argument(
        "--expect-digest",
        metavar="HEX",
        help="fail unless manifest.json has this sha256 (the digest clincorp release printed for the release "
        "you mean to check; manifest.json hashes every other file)",
    )
    validate.set_defaults(handler=_validate)


def _add_diff(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from clinical_corpora.builders.diff import command

    diff = commands.add_parser("diff", help="what changed between two releases of one corpus, record by record")
    diff.description = plain_text(command.__doc__ or "")
    command.configure(diff)
    diff.set_defaults(handler=command.run)


def _score(args: argparse.Namespace) -> int:
    load_plugins()
    parser = argparse.ArgumentParser(prog=f"clincorp score {args.scorer}")
    return _run_command(scorers.get(args.scorer), parser, args.arguments)


def _export(args: argparse.Namespace) -> int:
    from clinical_corpora.builders.release.folder import read_json
    from clinical_corpora.builders.text_free.layout import VARIANT

    load_plugins()
    manifest_path = args.release / "manifest.json"
    if not manifest_path.is_file():
        raise ClincorpError(f"{args.release} is not a release: it has no manifest.json")
    manifest = read_json(manifest_path)
    if manifest.get("variant") == VARIANT:
        raise ClincorpError(
            f"{args.release} is a text-free release: it holds no text to export; restore it first "
            f"(clincorp rehydrate {args.release} --source NAME=PATH …) and export the restored release"
        )
    corpus = str(manifest.get("corpus"))
    formats = sorted(name for name, owner in exporters.keys() if owner == corpus)
    if (args.format, corpus) not in exporters.keys():
        raise ClincorpError(
            f"no export format {args.format!r} for the {corpus} corpus: its formats are {', '.join(formats) or 'none'}"
        )
    parser = argparse.ArgumentParser(prog=f"clincorp export {args.format} {args.release}")
    parser.add_argument("--out", type=_folder, required=True, help="the folder to write into")
    parser.set_defaults(release=args.release)
    return _run_command(exporters.get((args.format, corpus)), parser, args.arguments)


def _folder(text: str) -> Path:
    """A folder to write into: it, or its nearest existing parent, must be a folder."""
    path = Path(text)
    existing = next((folder for folder in (path, *path.parents) if folder.exists()), None)
    if existing is not None and not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{existing} is a file, not a folder: give a folder to write into")
    return path


def _run_command(command: Command, parser: argparse.ArgumentParser, argv: list[str]) -> int:
    """Import a registered command only when it is used, parse its own arguments, run it."""
    implementation = command.load()
    parser.description = plain_text(implementation.__doc__ or command.help)
    implementation.configure(parser)
    return int(implementation.run(parser.parse_args(argv)))


def _selected(args: argparse.Namespace) -> list[CorpusManifest]:
    if args.all == bool(args.corpora):
        raise ClincorpError("name one or more corpora, or --all")
    return all_corpora() if args.all else [find_corpus(name) for name in args.corpora]


def _overrides(pairs: list[str]) -> dict[str, Path]:
    return {name: Path(path) for name, path in _pairs("--source", "NAME=PATH", pairs).items()}


def _pairs(option: str, form: str, pairs: list[str]) -> dict[str, str]:
    """``NAME=VALUE`` arguments by name; an error naming the option and the form it takes."""
    named = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name or not value:
            raise ClincorpError(f"{option} takes {form}, got {pair!r}")
        named[name] = value
    return named


def _release(args: argparse.Namespace) -> int:
    return _run(args, "release")


def _build(args: argparse.Namespace) -> int:
    return _run(args, "build")


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number of records, got {text!r}")
    return int(text)


def _workers(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes of at least 1, got {text!r}")
    return int(text)


def _run(args: argparse.Namespace, mode: Literal["release", "build"]) -> int:
    """Release or build each corpus, one after another; with several, try every one and end with a summary
    table."""
    gc.disable()  # the pipeline's imports make ~1M objects that all stay: collecting meanwhile costs ~0.1 s
    try:
        from clinical_corpora.builders.release.pipeline import run
        from clinical_corpora.builders.release.request import ReleaseRequest
    finally:
        gc.enable()

    corpora = _selected(args)
    if (args.source or args.sample) and len(corpora) > 1:
        raise ClincorpError("--source and --sample apply to one corpus at a time")
    if args.gates is not None and len(corpora) > 1:
        raise ClincorpError("--gates applies to one corpus at a time (its expectations name that corpus's tables)")
    if args.option and len(corpora) > 1:
        raise ClincorpError("--option applies to one corpus at a time (each builder has its own options)")
    if args.previous is not None and len(corpora) > 1:
        raise ClincorpError("--previous applies to one corpus at a time (it names a release of that corpus)")
    overrides = _overrides(args.source)
    options = _pairs("--option", "NAME=VALUE", args.option)
    changes_since = _changes_since(args.previous, corpora[0].name) if args.previous is not None else None
    alone = len(corpora) == 1 and not args.all
    summary = [[name, "-", "FAILED", why] for name, why in load_plugins().items()] if args.all else []
    for row in summary:
        print(f"error: {row[3]}", file=sys.stderr)
    for manifest in corpora:
        request = ReleaseRequest(
            manifest,
            args.out,
            sources=overrides,
            samples=tuple(args.sample),
            on_error=args.on_error,
            max_rejects=args.max_rejects,
            gate_overlay=args.gates,
            workers=args.workers,
            options=options,
            mode=mode,
            changes_since=changes_since,
        )
        try:
            outcome = run(request)
        except ClincorpError as error:
            if alone:
                raise
            print(f"error: {manifest.name}: {error}", file=sys.stderr)
            summary.append([manifest.name, manifest.version, "FAILED", str(error).splitlines()[0]])
            continue
        summary += _finished(manifest, outcome, args, overrides, alone)
    if not alone:
        print(_summary_table(summary))
    return 1 if any(row[2] == "FAILED" for row in summary) else 0


def _changes_since(previous: Path, corpus: str) -> ChangesSince:
    from clinical_corpora.builders.diff.previous import changes_since

    return changes_since(previous, corpus)


def _finished(
    manifest: CorpusManifest, outcome: Outcome, args: argparse.Namespace, overrides: dict[str, Path], alone: bool
) -> list[list[str]]:
    """Report a finished release (and write its text-free variant when asked); its summary rows."""
    from clinical_corpora.builders.release.folder import release_digest

    counts = outcome.manifest.get("counts", {})
    version = outcome.manifest.get("version", manifest.version)
    verb = {"released": "released", "unchanged": "unchanged (identical bytes)", "built": "built"}[outcome.status]
    print(
        f"{manifest.name} {version}: {verb} at {outcome.folder} "
        f"(read {counts.get('read')}, written {counts.get('written')}, rejected {counts.get('rejected')}), "
        f"digest sha256:{release_digest(outcome.folder)}"
    )
    rows = [[manifest.name, version, outcome.status, str(outcome.folder)]]
    if getattr(args, "text_free", False):
        rows.append(_text_free(manifest, outcome.folder, overrides, args.sample, alone))
    return rows


def _text_free(
    manifest: CorpusManifest, folder: Path, overrides: dict[str, Path], samples: list[str], alone: bool
) -> list[str]:
    """Write the text-free variant of a release; its summary row (FAILED with the reason, unless alone)."""
    from clinical_corpora.builders.release.folder import release_digest
    from clinical_corpora.builders.release.inputs import resolve_sources
    from clinical_corpora.builders.text_free.layout import TEXT_FREE_SUFFIX
    from clinical_corpora.builders.text_free.release import release_text_free

    name = folder.name + TEXT_FREE_SUFFIX
    try:
        sources = resolve_sources(manifest, overrides, samples)
        outcome = release_text_free(
            manifest, folder, sources, lambda line: print(f"{manifest.name}: {line}", file=sys.stderr, flush=True)
        )
    except ClincorpError as error:
        if alone:
            raise
        print(f"error: {manifest.name} text-free: {error}", file=sys.stderr)
        return [manifest.name, name, "FAILED", str(error).splitlines()[0]]
    verb = "released" if outcome.status == "released" else "unchanged (identical bytes)"
    print(
        f"{manifest.name} {name}: {verb} at {outcome.folder} (leak gate: longest shared run "
        f"{outcome.gate.observed['longest_shared_run']} characters, limit {outcome.gate.observed['limit']}), "
        f"digest sha256:{release_digest(outcome.folder)}"
    )
    return [manifest.name, name, outcome.status, str(outcome.folder)]


def _rehydrate(args: argparse.Namespace) -> int:
    from clinical_corpora.builders.text_free.rehydrate import REJECTS_FILE, rehydrate

    load_plugins()
    if args.check:
        return check_sources(args.release, _overrides(args.source), args.json)
    if args.json:
        raise ClincorpError("--json goes with --check (rehydrate prints its summary as lines)")
    outcome = rehydrate(
        args.release,
        _overrides(args.source),
        args.out,
        args.on_error,
        lambda line: print(f"rehydrate: {line}", file=sys.stderr, flush=True),
        args.re_anchor,
    )
    if outcome.status == "re-anchored":
        print(reanchored_summary(outcome))
        return 0
    if outcome.status == "partial":
        print(
            f"{outcome.folder}: PARTIAL, {len(outcome.quarantined)} record(s) left out because their documents "
            f"differ (listed in {REJECTS_FILE}); it is not the maintainer's release and clincorp validate rejects it"
        )
        return 0
    verb = "restored" if outcome.status == "released" else "unchanged (identical bytes)"
    print(f"{outcome.folder}: {verb} from {outcome.documents} documents, byte-identical to the full release")
    return 0


def _summary_table(rows: list[list[str]]) -> str:
    """corpus, version, status and folder (or first error line), in aligned columns."""
    rows = [["corpus", "version", "status", "folder or error"], *rows]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    return "\n".join(
        "  ".join([*(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)), row[3]]) for row in rows
    )


VALID, INVALID, COULD_NOT_CHECK = 0, 1, 3
"""``clincorp validate``'s exit statuses (2 is argparse's, for wrong arguments)."""


def _validate(args: argparse.Namespace) -> int:
    """One line per step as it starts, then its verdict (or, with --json, one JSON object); the hashes,
    schema and records are judged before great-expectations is loaded."""
    from clinical_corpora.builders.validate import release_checks

    announce = (lambda line: None) if args.json else (lambda line: print(line, flush=True))
    gates = []
    try:
        for result in release_checks(args.release, announce, corpus=args.corpus, expect_digest=args.expect_digest):
            gates.append(result)
            if not args.json:
                _print_gate(result)
    except ClincorpError as error:
        if args.json:
            print(json.dumps({"release": str(args.release), "verdict": "could not check", "error": str(error)}))
        else:
            print(f"error: {error}", file=sys.stderr)
        return COULD_NOT_CHECK
    ok = all(result.success for result in gates)
    if args.json:
        verdict = {"release": str(args.release), "verdict": "valid" if ok else "invalid"}
        print(json.dumps({**verdict, "gates": [_gate_json(result) for result in gates]}, ensure_ascii=False))
    return VALID if ok else INVALID


def _gate_json(result: GateResult) -> dict[str, Any]:
    """One gate for machines: name, status, observed, expected, and where it failed (its details)."""
    entry = result.as_dict()
    return {
        "name": entry["gate"],
        "status": entry["status"],
        "observed": entry["observed"],
        "expected": entry["expected"],
        **({"warning": entry["warning"]} if "warning" in entry else {}),
        "where": entry["details"],
    }


def _print_gate(result: GateResult) -> None:
    from clinical_corpora.validation.gates import violation_text
    from clinical_corpora.validation.published import number_text

    print(result.describe(), flush=True)
    for detail in result.details:
        if "problem" in detail:
            print(f"  {detail['problem']}")
        elif "verdict" in detail:  # a published number against the recomputed one
            if detail["verdict"] != "match":
                note = f" ({detail['note']})" if detail.get("note") else ""
                published, recomputed = number_text(detail["published"]), number_text(detail["recomputed"], 4)
                print(f"  {detail['key']}: published {published}, recomputed {recomputed}: {detail['verdict']}{note}")
        elif not detail.get("success", False) or detail.get("violations"):
            verdict = "FAILED" if not detail.get("success", False) else "passed, tolerating"
            print(f"  {detail['table']}: {detail['expectation']} {verdict}: observed {detail['observed']}")
            print("".join(f"    {violation_text(v)}\n" for v in detail.get("violations", [])), end="")


def _list(args: argparse.Namespace) -> int:
    """Every installed corpus; a plugin that fails to load is reported (exit status 1) and the others listed."""
    broken = load_plugins()
    for why in broken.values():
        print(f"error: {why}", file=sys.stderr)
    for manifest in all_corpora():
        access = "public" if manifest.access.public else "restricted"
        print(f"{manifest.name} {manifest.version} [{access}: {manifest.access.how.strip()}]")
        print(f"  {_sharing_line(manifest)}")
        for name, spec in manifest.sources.items():
            optional = "" if spec.required else " (optional)"
            default = f"default {spec.path}" if spec.path else "read only when given"
            print(f"  source {name}{optional}: {spec.kind}, {default}\n    {spec.description.strip()}")
        formats = sorted(name for name, owner in exporters.keys() if owner == manifest.name)
        if formats:
            print(f"  export formats: {', '.join(formats)}")
    print("scorers: " + ", ".join(f"{name} ({scorers.get(name).help})" for name in sorted(scorers.keys())))
    return 1 if broken else 0


def _sharing_line(manifest: CorpusManifest) -> str:
    """Which variant of the corpus's releases may be passed on, under which licence."""
    licence = f"{manifest.license_name} <{manifest.license_link}>" if manifest.license_name else manifest.license
    text_free = f"its text-free variant (clincorp release {manifest.name} --text-free)"
    if manifest.full_release_shareable:
        return f"licence {licence}: the full release may be shared, and so may {text_free}"
    return f"licence {licence}: the full release may NOT be redistributed; share {text_free}"
