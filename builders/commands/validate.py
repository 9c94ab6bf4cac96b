"""``clincorp validate <release dir>``: every check of a release, one line per step, for data-quality CI (or one
JSON object with ``--json``, on every path: a release that cannot be checked is a verdict too)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from clinical_corpora.builders.commands import arguments
from clinical_corpora.core.errors import ClincorpError

if TYPE_CHECKING:
    from clinical_corpora.builders.validate.run import CheckedRelease
    from clinical_corpora.validation.gates import GateResult

VALID, INVALID, COULD_NOT_CHECK = 0, 1, 3
"""``clincorp validate``'s exit statuses (2 is argparse's, for wrong arguments)."""


@dataclass(frozen=True)
class ValidateArgs:
    """What ``clincorp validate`` is asked (the Python API takes the same object)."""

    release: Path
    corpus: str | None = None
    json: bool = False
    expect_digest: str | None = None
    phi_report: Path | None = None


@dataclass(frozen=True)
class Verdict:
    """What ``clincorp validate`` found: the release given, what its manifest.json names (None when it cannot be
    read), the verdict, each gate run, and why it could not be checked (then no gate decides)."""

    release: Path
    checked: CheckedRelease | None
    verdict: Literal["valid", "invalid", "could not check"]
    gates: list[GateResult] = field(default_factory=list)
    error: str | None = None

    @property
    def exit_status(self) -> int:
        return {"valid": VALID, "invalid": INVALID}.get(self.verdict, COULD_NOT_CHECK)

    def as_json(self) -> dict[str, Any]:
        """``clincorp validate --json``'s object."""
        found = asdict(self.checked) if self.checked else dict.fromkeys(("corpus", "version", "variant", "digest"))
        subject = {"release": str(self.release), **found, "verdict": self.verdict}
        if self.error is not None:
            return {**subject, "error": self.error}
        return {**subject, "gates": [_gate_json(result) for result in self.gates]}


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
    if asked.json:
        found = validate(asked)
        print(json.dumps(found.as_json(), ensure_ascii=False))
        return found.exit_status
    found = validate(asked, lambda line: print(line, flush=True), _print_gate)
    if found.error is not None:
        print(f"error: {found.error}", file=sys.stderr)
    return found.exit_status


def validate(
    asked: ValidateArgs,
    on_step: Callable[[str], None] | None = None,
    on_gate: Callable[[GateResult], None] | None = None,
) -> Verdict:
    """Every check of a release: ``on_step`` hears each step as it starts, ``on_gate`` each gate's result as soon
    as it is known. A release that cannot be checked (no release at all, unreadable) is a verdict too."""
    from clinical_corpora.builders.validate.run import release_checks

    gates: list[GateResult] = []
    checked: list[CheckedRelease] = []
    try:
        for result in release_checks(
            asked.release, on_step, asked.corpus, asked.expect_digest, checked.append, asked.phi_report
        ):
            gates.append(result)
            if on_gate is not None:
                on_gate(result)
    except BrokenPipeError:  # the reader of our output went away: clincorp's entry ends quietly
        raise
    except Exception as error:  # noqa: BLE001 - whatever a release holds, validate gives a verdict
        message = str(error) if isinstance(error, ClincorpError) else f"{type(error).__name__}: {error}"
        return Verdict(asked.release, checked[0] if checked else None, "could not check", gates, message)
    ok = all(result.success for result in gates)
    return Verdict(asked.release, checked[0] if checked else None, "valid" if ok else "invalid", gates)


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
