"""``clincorp rehydrate <text-free release>``: the full release rebuilt from your own copies of its sources,
byte for byte (or, asked, leaving out or re-anchoring the records whose documents differ); ``--check`` only
compares your sources with the release."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from clinical_corpora.builders.commands import arguments
from clinical_corpora.core.errors import ClincorpError

if TYPE_CHECKING:
    from clinical_corpora.builders.rehydrate.request import RehydrateRequest
    from clinical_corpora.builders.rehydrate.run import RehydrateOutcome

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
    parser.add_argument("--json", action="store_true", help="with --check: print one JSON object")


def request(args: argparse.Namespace) -> RehydrateRequest:
    """The typed request the arguments make."""
    from clinical_corpora.builders.rehydrate.request import RehydrateRequest

    return RehydrateRequest(
        args.release,
        args.out,
        arguments.sources(args.source),
        args.on_error,
        args.re_anchor,
        on_stage=lambda line: print(f"rehydrate: {line}", file=sys.stderr, flush=True),
    )


def run(args: argparse.Namespace) -> int:
    if args.check:
        return _check(request(args), args.json)
    if args.json:
        raise ClincorpError("--json goes with --check (rehydrate prints its summary as lines)")
    from clinical_corpora.builders.rehydrate.run import rehydrate
    from clinical_corpora.core.release_records import REHYDRATE_REJECTS_FILE

    outcome = _re_keyed(args) if args.re_key is not None else rehydrate(request(args))
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
        listed = REHYDRATE_REJECTS_FILE
        print(
            f"{outcome.folder}: PARTIAL, {len(outcome.quarantined)} record(s) left out (listed in {listed}): "
            f"{len(outcome.quarantined) - invalid} because their documents differ, {invalid} because they restore "
            "as no valid record (the text-free release is damaged or forged); it is not the maintainer's release, "
            "and says so"
        )
    else:
        verb = "restored" if outcome.status == "released" else "unchanged (identical bytes)"
        print(f"{outcome.folder}: {verb} from {outcome.documents} documents, byte-identical to the full release")
    return 0


def _re_keyed(args: argparse.Namespace) -> RehydrateOutcome:
    """The release restored from a notes table re-keyed by content; says how many documents were found."""
    from clinical_corpora.builders.rehydrate.rekey import read_notes_table
    from clinical_corpora.builders.rehydrate.run import rehydrate_rekeyed

    if args.source or args.check:
        raise ClincorpError("--re-key takes the notes table in place of --source, and does not go with --check")
    done = rehydrate_rekeyed(request(args), read_notes_table(args.re_key, args.id_column, args.text_column))
    mapped, unmapped = len(done.rekeyed.mapped), len(done.rekeyed.unmapped)
    print(f"{done.csv}: {mapped} document(s) found in {args.re_key} by content, {unmapped} not found (named there)")
    return done.outcome


def _check(asked: RehydrateRequest, as_json: bool) -> int:
    """Print the check of the sources; 0 when every document matches, 1 otherwise."""
    from clinical_corpora.builders.rehydrate.check import check_sources

    report = check_sources(asked)
    if as_json:
        print(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
        return 0 if report.ok else 1
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


COMMANDS = (
    arguments.Subcommand(
        "rehydrate",
        "rebuild a full release from a text-free one and your own copies of its sources",
        arguments.plain_text(__doc__ or ""),
        configure,
        run,
    ),
)
