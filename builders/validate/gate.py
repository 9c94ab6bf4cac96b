"""What every check of ``clincorp validate`` returns: a gate passing when it found no problem, listing the first
ones; a check that cannot run (a damaged release) is a failed gate saying why, never a traceback."""

from __future__ import annotations

from collections.abc import Callable

from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.release_records import MAX_LISTED
from clinical_corpora.validation.gates import GateResult


def problems_gate(gate: str, problems: list[str], expected: str, observed: str | None = None) -> GateResult:
    """A gate that passes when ``problems`` is empty, listing the first :data:`MAX_LISTED` of them."""
    return GateResult(
        gate,
        not problems,
        observed if observed is not None else f"{len(problems)} problems",
        expected,
        [{"problem": problem} for problem in problems[:MAX_LISTED]],
    )


def guarded(gate: str, expected: str, check: Callable[[], GateResult]) -> GateResult:
    """``check()``, or a failed gate saying why the check could not run."""
    try:
        return check()
    except ClincorpError as error:
        return GateResult(gate, False, f"could not check: {error}", expected)
    except Exception as error:  # noqa: BLE001 - any damage to the release is a verdict, not a crash
        return GateResult(gate, False, f"could not check: {type(error).__name__}: {error}", expected)
