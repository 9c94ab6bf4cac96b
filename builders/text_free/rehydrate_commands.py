"""The ``clincorp rehydrate`` options of re-anchoring and checking sources, and what they print.

Kept apart from ``builders/cli.py`` (which only adds the options and calls these); heavy modules are
imported where they are used, so ``clincorp --help`` stays quick.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clinical_corpora.builders.text_free.rehydrate import RehydrateOutcome

SHOWN = 10


def add_reanchor_arguments(parser: argparse.ArgumentParser) -> None:
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
    parser.add_argument("--json", action="store_true", help="with --check: print one JSON object")


def check_sources(release: Path, overrides: dict[str, Path], as_json: bool) -> int:
    """Print the check of the sources; 0 when every document matches, 1 otherwise."""
    from clinical_corpora.builders.text_free.source_check import check_sources as check

    report = check(release, overrides)
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


def reanchored_summary(outcome: RehydrateOutcome) -> str:
    """What a re-anchored rehydration did, in a few lines."""
    from clinical_corpora.builders.text_free.reanchor import REPORT_FILE

    report = outcome.reanchored
    assert report is not None
    strings = report.summary()["strings"]
    return (
        f"{outcome.folder}: RE-ANCHORED from {outcome.documents} documents, "
        f"{report.summary()['documents_re_anchored']} of them differing from the release's: NOT the maintainer's "
        f"release (marked re-anchored in its manifest and card)\n"
        f"  licensed strings: {strings['exact']} exact, {strings['relocated']} relocated, "
        f"{strings['replaced']} whole documents from your copy, {strings['lost']} lost (null), "
        f"{strings['left_out']} in {len(report.left_out)} record(s) left out; {REPORT_FILE} names each"
    )
