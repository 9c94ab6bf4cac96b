"""Release gates: rejects, expectations and agreement, each with the value it observed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clinical_corpora.core.manifest import Threshold
from clinical_corpora.validation.expectations import ExpectationOutcome


@dataclass
class GateResult:
    """One gate's verdict."""

    gate: str
    success: bool
    observed: Any
    expected: str
    details: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "gate": self.gate,
            "success": self.success,
            "observed": self.observed,
            "expected": self.expected,
            "details": self.details,
        }

    def describe(self) -> str:
        verdict = "passed" if self.success else "FAILED"
        return f"gate {self.gate} {verdict}: observed {self.observed}, expected {self.expected}"


def rejects_gate(rejected: int, max_rejects: int) -> GateResult:
    return GateResult("max_rejects", rejected <= max_rejects, rejected, f"<= {max_rejects}")


def expectations_gate(outcomes: list[ExpectationOutcome]) -> GateResult:
    failed = [outcome for outcome in outcomes if not outcome.success]
    return GateResult(
        "expectations",
        not failed,
        f"{len(outcomes) - len(failed)}/{len(outcomes)} passed",
        "all pass",
        [outcome.as_dict() for outcome in outcomes],
    )


def agreement_gates(measures: dict[str, float] | None, thresholds: dict[str, Threshold]) -> list[GateResult]:
    """One gate per threshold; without annotator data the gates are recorded as not run (passing)."""
    results = []
    for name, threshold in sorted(thresholds.items()):
        expected = (
            " and ".join(
                part
                for part in (
                    f">= {threshold.min}" if threshold.min is not None else "",
                    f"<= {threshold.max}" if threshold.max is not None else "",
                )
                if part
            )
            or "any"
        )
        if measures is None:
            results.append(GateResult(f"agreement.{name}", True, "not run: no annotator data in this build", expected))
            continue
        if name not in measures:
            results.append(GateResult(f"agreement.{name}", False, "not reported by the builder", expected))
            continue
        value = measures[name]
        ok = (threshold.min is None or value >= threshold.min) and (threshold.max is None or value <= threshold.max)
        results.append(GateResult(f"agreement.{name}", ok, round(value, 6), expected))
    return results
