"""Release gates: rejects, expectations and agreement, each passed, failed or skipped (with why); a gate that
passes with a reserve (a number that differs from its paper without a declared reason) is a warning."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from clinical_corpora.core.manifest import Threshold
from clinical_corpora.core.release_records import GateRecord
from clinical_corpora.validation.expectations import ExpectationOutcome

Status = Literal["pass", "fail", "skipped", "warning"]


@dataclass
class GateResult:
    """One gate's verdict: ``skipped`` holds the reason a gate did not run (it then neither passes nor
    fails; a required gate that did not run is a failure, not a skip); ``warning`` what a gate that did not
    fail found worth a look (a warning never fails a release, nor changes validate's exit status)."""

    gate: str
    success: bool
    observed: Any
    expected: str
    details: list[dict[str, Any]] = field(default_factory=list)
    skipped: str | None = None
    warning: str | None = None

    @property
    def status(self) -> Status:
        if not self.success:
            return "fail"
        if self.skipped is not None:
            return "skipped"
        return "warning" if self.warning is not None else "pass"

    def as_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "gate": self.gate,
            "status": self.status,
            "success": None if self.status == "skipped" else self.success,
            "observed": self.observed,
            "expected": self.expected,
        }
        if self.skipped is not None:
            entry["reason"] = self.skipped
        if self.warning is not None and self.status == "warning":
            entry["warning"] = self.warning
        entry["details"] = self.details
        return entry

    def record(self) -> GateRecord:
        """The gate as validation.json records it."""
        return GateRecord.model_validate(self.as_dict())

    def describe(self) -> str:
        if self.status == "skipped":
            return f"gate {self.gate} skipped: {self.skipped}"
        if self.status == "warning":
            return f"gate {self.gate} passed with a WARNING: {self.warning} (observed {self.observed})"
        verdict = "passed" if self.success else "FAILED"
        return f"gate {self.gate} {verdict}: observed {self.observed}, expected {self.expected}"


def violation_text(violation: dict[str, Any]) -> str:
    """One offending row of an expectation: ``train record 'n1': text=''``."""
    where = " ".join(
        part
        for part in (
            str(violation["split"]) if "split" in violation else "",
            f"record {violation['record']!r}" if "record" in violation else "",
            f"row {violation['row']}" if "row" in violation else "",
        )
        if part
    )
    values = ", ".join(f"{column}={value!r}" for column, value in violation.get("values", {}).items())
    return f"{where}: {values}" if values else where


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


NOT_RUN = "no annotator data in this build"


def agreement_gates(measures: dict[str, float] | None, thresholds: dict[str, Threshold]) -> list[GateResult]:
    """One gate per threshold. Without annotator data a gate is skipped, or failed when it is required."""
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
        gate = f"agreement.{name}"
        if measures is None:
            if threshold.required:
                results.append(GateResult(gate, False, f"not run ({NOT_RUN}), but the gate is required", expected))
            else:
                results.append(GateResult(gate, True, f"not run: {NOT_RUN}", expected, skipped=NOT_RUN))
            continue
        if name not in measures:
            results.append(GateResult(gate, False, "not reported by the builder", expected))
            continue
        value = measures[name]
        ok = (threshold.min is None or value >= threshold.min) and (threshold.max is None or value <= threshold.max)
        results.append(GateResult(gate, ok, round(value, 6), expected))
    return results
