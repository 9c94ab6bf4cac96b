"""``clincorp validate <release dir>``: every check of a release, one line per step, for data-quality CI (or one
JSON object with ``--json``, on every path: a release that cannot be checked is a verdict too)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clinical_corpora.builders.commands import arguments
from clinical_corpora.core.errors import ClincorpError

if TYPE_CHECKING:
    from clinical_corpora.builders.validate.run import CheckedRelease
    from clinical_corpora.validation.gates import GateResult

VALID, INVALID, COULD_NOT_CHECK = 0, 1, 3
"""``clincorp validate``'s exit statuses (2 is argparse's, for wrong arguments)."""


@dataclass(frozen=True)
class ValidateArgs:
    release: Path
    corpus: str | None
    json: bool
    expect_digest: str | None
    phi_report: Path | None


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("release", type=Path)
    parser.add_argument(
        "--corpus",
        metavar="NAME_OR_PATH",
        help="check against this installed corpus or corpus.yaml folder (default: the installed corpus the "
        "release's manifest.json names; nothing is imported from the release)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (the release; the corpus, version and variant its manifest.json names and its "
        "digest, the sha256 of manifest.json, each null when it cannot be read; its verdict; and each gate with "
        "its status, observed and expected values and where it failed) instead of lines; the exit status is the "
        "same: 0 valid, 1 invalid, 2 wrong arguments, 3 could not check",
    )
    parser.add_argument(
        "--expect-digest",
        metavar="HEX",
        help="fail unless manifest.json has this sha256 (the digest clincorp release printed for the release "
        "you mean to check; manifest.json hashes every other file)",
    )
    parser.add_argument(
        "--phi-report",
        metavar="FILE",
        type=Path,
        help="write the PHI gate's findings to FILE, one JSON line each (file, field path, row or line, category, "
        "short hash; never the text found), for a maintainer to review in the enclave",
    )


def run(args: argparse.Namespace) -> int:
    """One line per step as it starts, then its verdict (or, with --json, one JSON object)."""
    asked = ValidateArgs(args.release, args.corpus, args.json, args.expect_digest, args.phi_report)
    from clinical_corpora.builders.validate.run import release_checks

    announce = (lambda line: None) if asked.json else (lambda line: print(line, flush=True))
    gates = []
    checked: list[CheckedRelease] = []
    try:
        for result in release_checks(
            asked.release, announce, asked.corpus, asked.expect_digest, checked.append, asked.phi_report
        ):
            gates.append(result)
            if not asked.json:
                _print_gate(result)
    except BrokenPipeError:  # the reader of our output went away: clincorp's entry ends quietly
        raise
    except Exception as error:  # noqa: BLE001 - whatever a release holds, validate gives a verdict
        message = str(error) if isinstance(error, ClincorpError) else f"{type(error).__name__}: {error}"
        if asked.json:
            print(json.dumps({**_subject(asked.release, checked), "verdict": "could not check", "error": message}))
        else:
            print(f"error: {message}", file=sys.stderr)
        return COULD_NOT_CHECK
    ok = all(result.success for result in gates)
    if asked.json:
        verdict = {**_subject(asked.release, checked), "verdict": "valid" if ok else "invalid"}
        print(json.dumps({**verdict, "gates": [_gate_json(result) for result in gates]}, ensure_ascii=False))
    return VALID if ok else INVALID


def _subject(release: Path, checked: list[CheckedRelease]) -> dict[str, Any]:
    """The folder given, and the corpus, version, variant and digest of the release found in it (or nulls)."""
    found = asdict(checked[0]) if checked else dict.fromkeys(("corpus", "version", "variant", "digest"))
    return {"release": str(release), **found}


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


COMMANDS = (
    arguments.Subcommand(
        "validate", "re-check an existing release folder", arguments.plain_text(__doc__ or ""), configure, run
    ),
)
