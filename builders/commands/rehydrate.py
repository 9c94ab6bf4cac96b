"""``clincorp rehydrate <text-free release>``: the full release rebuilt from your own copies of its sources,
byte for byte (or, asked, leaving out or re-anchoring the records whose documents differ); ``--check`` only
compares your sources with the release."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clinical_corpora.builders.commands import arguments
from clinical_corpora.core.errors import ClincorpError

if TYPE_CHECKING:
    from clinical_corpora.builders.contract.base import OnError
    from clinical_corpora.builders.rehydrate.check import SourceCheck
    from clinical_corpora.builders.rehydrate.request import RehydrateRequest
    from clinical_corpora.builders.rehydrate.run import RehydrateOutcome, RekeyedOutcome

SHOWN = 10


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("release", type=Path, help="a text-free release folder (<corpus>-<version>.text-free)")
    arguments.add_sources(
        parser, "your copy of source NAME (clincorp list names them); none given: the embedded samples"
    )
    parser.add_argument("--out", type=Path, default=Path("releases"), help="writes <out>/<corpus>/<corpus>-<version>/")
    parser.add_argument(
        "--on-error",
        choices=["fail", "quarantine"],
        default="fail",
        help="fail when a document differs from its recorded hash, or leave its records out (a partial release)",
    )
    parser.add_argument(
        "--re-anchor",
        action="store_true",
        help="when a document differs from its recorded hash, relocate its spans in your copy with the release's "
        "anchors instead of failing: spans every character of which is confirmed are kept, the others are "
        "written as null and named in re-anchored.jsonl; the folder is marked re-anchored (not the "
        "maintainer's release)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="only compare your sources with the release: per source, which documents match, which differ and "
        "how (length, line ends, byte-order mark, whitespace, Unicode form, text) and which are missing; "
        "exit status 0 when every document matches, 1 otherwise; writes nothing",
    )
    parser.add_argument(
        "--re-key",
        type=Path,
        metavar="TABLE",
        help="your notes are a table whose ids are not the release's (a CSV, plain or gzip, or parquet: MIMIC-III "
        "NOTEEVENTS, MIMIC-IV note, OMOP NOTE, or any with --id-column and --text-column): find each document by "
        "its content (its sha256, its normalised sha256, its block hashes), then restore and re-anchor; "
        "<folder>.rekey.csv beside the restored folder names each document's note and the evidence, or why none",
    )
    parser.add_argument("--id-column", help="with --re-key: the table's id column")
    parser.add_argument("--text-column", help="with --re-key: the table's text column")
    parser.add_argument(
        "--source-encoding",
        action="append",
        default=[],
        metavar="[NAME=]ENCODING",
        help="read your copy of source NAME (without NAME: of every source whose documents are text files or "
        "CSV, or HTML pages, whatever they declare) as text in ENCODING (latin-1, cp1252, utf-16, …) instead of "
        "UTF-8; --check names the encoding of a copy that is not UTF-8",
    )
    parser.add_argument(
        "--json", action="store_true", help="with --check: print one JSON object, an error included (then 'error')"
    )


@dataclass(frozen=True)
class RehydrateArgs:
    """What ``clincorp rehydrate`` is asked (the Python API takes the same object). ``encodings``: source →
    encoding (``*``: every source), as ``--source-encoding [NAME=]ENCODING`` gives them."""

    release: Path
    out: Path = Path("releases")
    sources: dict[str, Path] = field(default_factory=dict)
    on_error: OnError = "fail"
    re_anchor: bool = False
    re_key: Path | None = None
    id_column: str | None = None
    text_column: str | None = None
    encodings: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parsed(cls, args: argparse.Namespace) -> RehydrateArgs:
        sources, columns = arguments.sources(args.source), (args.id_column, args.text_column)
        given = (args.release, args.out, sources, args.on_error, args.re_anchor, args.re_key, *columns)
        return cls(*given, encodings(args.source_encoding))

    def request(self, on_stage: Callable[[str], None] | None = None) -> RehydrateRequest:
        """The typed request these arguments make."""
        from clinical_corpora.builders.rehydrate.request import RehydrateRequest
        from clinical_corpora.core.text_encoding import known_encoding

        named = {source: known_encoding(encoding) for source, encoding in self.encodings.items()}
        return RehydrateRequest(
            self.release, self.out, self.sources, self.on_error, self.re_anchor, on_stage=on_stage, encodings=named
        )


@dataclass(frozen=True)
class Rehydrated:
    """A rehydration: the folder restored and how (``outcome``), and with ``re_key`` the notes found by content."""

    outcome: RehydrateOutcome
    rekeyed: RekeyedOutcome | None = None


def _stage(line: str) -> None:
    print(f"rehydrate: {line}", file=sys.stderr, flush=True)


def encodings(given: list[str]) -> dict[str, str]:
    """``--source-encoding [NAME=]ENCODING`` arguments: source → encoding (``*``: every source)."""
    from clinical_corpora.core.text_encoding import EVERY_SOURCE

    named: dict[str, str] = {}
    for value in given:
        name, _, encoding = value.rpartition("=")
        source = name or EVERY_SOURCE
        if source in named:
            raise ClincorpError(f"--source-encoding {value}: an encoding for {name or 'every source'} was given twice")
        named[source] = encoding
    return named


def run(args: argparse.Namespace) -> int:
    if args.json:
        return _as_json(args)
    asked = RehydrateArgs.parsed(args)
    if args.check and args.re_key is not None:
        raise ClincorpError("--re-key does not go with --check: it finds the documents, then restores")
    if args.check:
        return _check(asked)
    done = rehydrate(asked, _stage)
    if done.rekeyed is not None:
        found = done.rekeyed.rekeyed
        print(
            f"{done.rekeyed.csv}: {len(found.mapped)} document(s) found in {asked.re_key} by content, "
            f"{len(found.unmapped)} not found (named there)"
        )
    _print_outcome(done.outcome)
    return 0


def rehydrate(asked: RehydrateArgs, on_stage: Callable[[str], None] | None = None) -> Rehydrated:
    """The full release restored from the text-free one and the sources (or, with ``re_key``, a notes table whose
    documents are found by their content); ``on_stage`` hears one line per stage."""
    from clinical_corpora.builders.rehydrate.run import rehydrate as restore
    from clinical_corpora.core.errors import EncodingError

    try:
        if asked.re_key is None:
            return Rehydrated(restore(asked.request(on_stage)))
        rekeyed = _re_keyed(asked, asked.re_key, on_stage)
        return Rehydrated(rekeyed.outcome, rekeyed)
    except EncodingError as error:
        raise ClincorpError(
            f"{error}\n(--check names the encoding of your copy; --source-encoding NAME=ENCODING reads it)"
        ) from None


def check_sources(asked: RehydrateArgs) -> SourceCheck:
    """Your sources compared with the release, document by document (``rehydrate --check``); writes nothing."""
    from clinical_corpora.builders.rehydrate.check import check_sources as compare

    if asked.re_key is not None:
        raise ClincorpError("--re-key does not go with --check: it finds the documents, then restores")
    return compare(asked.request(_stage))


def _print_outcome(outcome: RehydrateOutcome) -> None:
    from clinical_corpora.core.release_records import REHYDRATE_REJECTS_FILE

    if outcome.status == "re-anchored":
        assert outcome.reanchored is not None
        strings = outcome.reanchored.summary()["strings"]
        print(
            f"{outcome.folder}: RE-ANCHORED from {outcome.documents} documents, "
            f"{outcome.reanchored.summary()['documents_re_anchored']} of them differing from the release's: NOT the "
            "maintainer's release (marked re-anchored in its manifest and card)\n"
            f"  licensed strings: {strings['exact']} exact, {strings['relocated']} relocated, "
            f"{strings['replaced']} whole documents from your copy, {strings['lost']} lost (null), "
            f"{strings['left_out']} in {len(outcome.reanchored.left_out)} record(s) left out; "
            "re-anchored.jsonl names each"
        )
    elif outcome.status == "partial":
        invalid = sum(1 for reject in outcome.quarantined if not reject.documents)
        print(
            f"{outcome.folder}: PARTIAL, {len(outcome.quarantined)} record(s) left out (listed in "
            f"{REHYDRATE_REJECTS_FILE}): {len(outcome.quarantined) - invalid} because their documents differ, "
            f"{invalid} because they restore as no valid record (the text-free release is damaged or forged); it is "
            "not the maintainer's release, and says so"
        )
    else:
        verb = "restored" if outcome.status == "released" else "unchanged (identical bytes)"
        print(f"{outcome.folder}: {verb} from {outcome.documents} documents, byte-identical to the full release")


def _re_keyed(asked: RehydrateArgs, table: Path, on_stage: Callable[[str], None] | None) -> RekeyedOutcome:
    """The release restored from a notes table re-keyed by content."""
    from clinical_corpora.builders.rehydrate.rekey import read_notes_table
    from clinical_corpora.builders.rehydrate.run import rehydrate_rekeyed

    if asked.sources:
        raise ClincorpError("--re-key takes the notes table in place of --source")
    return rehydrate_rekeyed(asked.request(on_stage), read_notes_table(table, asked.id_column, asked.text_column))


def _as_json(args: argparse.Namespace) -> int:
    """``--check --json``: one JSON object on every path, an error (``{"ok": false, "error": ...}``) included."""
    try:
        if not args.check:
            raise ClincorpError("--json goes with --check (rehydrate prints its summary as lines)")
        report = check_sources(RehydrateArgs.parsed(args)).as_dict()
    except ClincorpError as error:
        report = {"ok": False, "error": str(error)}
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0 if report["ok"] else 1


def _check(asked: RehydrateArgs) -> int:
    """Print the check of the sources; 0 when every document matches, 1 otherwise."""
    report = check_sources(asked)
    if report.unreadable is not None:
        _print_unreadable(report.unreadable)
        return 1
    for name, encoding in report.encodings.items():
        print(f"{name}: read as {encoding} (--source-encoding)")
    for name, counts in report.counts.items():
        print(
            f"{name} ({report.sources.get(name) or 'not given'}): {counts['match']} match, "
            f"{counts['differ']} differ, {counts['missing']} missing"
        )
    for entry in report.differing[:SHOWN]:
        print(f"  differs: {entry['document']}: " + "; ".join(entry["how"]))
    for entry in report.missing[:SHOWN]:
        print(f"  missing: {entry['document']}")
    hidden = max(len(report.differing) - SHOWN, 0) + max(len(report.missing) - SHOWN, 0)
    if hidden:
        print(f"  … and {hidden} more (--json lists them all)")
    if report.ok:
        print("every document matches: clincorp rehydrate restores the release byte for byte")
    elif not report.missing:
        print("rehydrate fails on the documents that differ; --re-anchor relocates their spans")
    return 0 if report.ok else 1


def _print_unreadable(problem: dict[str, Any]) -> None:
    """What --check says of a copy that is not text in the encoding it was read in."""
    print(
        f"{problem['source'] or 'a source'}: {problem['file']} is not text in the encoding it was read in: "
        f"{problem['problem']}"
    )
    if problem["encoding"] is None:
        print("  charset-normalizer finds no encoding it is in: is it a text file at all?")
        return
    also = f" (or {', '.join(problem['could_be'])})" if problem["could_be"] else ""
    print(
        f"  it seems to be {problem['encoding']}{also}, as charset-normalizer guesses: check again with "
        f"{problem.get('option', '--source-encoding')}; every document then matching confirms the guess"
    )


COMMANDS = (
    arguments.Subcommand(
        "rehydrate",
        "rebuild a full release from a text-free one and your own copies of its sources",
        arguments.plain_text(__doc__ or ""),
        configure,
        run,
    ),
)
