"""A full release's expectation suite: the installed corpus's (with the ``--gates`` overlay its manifest
records) against the copy validation.json holds, run again on the data, its outcomes against those recorded."""

from __future__ import annotations

from clinical_corpora.builders.release.checks import check_suite
from clinical_corpora.builders.release.opened import OpenedRelease
from clinical_corpora.builders.validate.gate import problems_gate
from clinical_corpora.core.manifest import CorpusManifest, Expectation
from clinical_corpora.core.release_records import ExpectationDetail
from clinical_corpora.validation.gates import GateResult, expectations_gate

EXPECTED = "all pass, as validation.json records"


def suite_gate(opened: OpenedRelease, corpus: CorpusManifest) -> GateResult:
    """The suite run again: a failed gate when validation.json's copy of the suite, or its recorded outcomes,
    differ from the installed corpus's suite and what it finds in the data."""
    problems = suite_problems(opened, corpus)
    if problems:
        return problems_gate("expectations", problems, "the installed corpus's suite")
    gate = expectations_gate(check_suite(opened.builder, opened.view, list(corpus.gates.expectations)))
    ours = gate.record()
    recorded = next((g for g in opened.validation.gates if g.gate == "expectations"), None)
    if not gate.success or recorded == ours:  # an expectation the data fails is the verdict itself
        return gate
    theirs = recorded.details if recorded is not None else []
    differing = [
        f"{detail.table}: {detail.expectation}"
        for number, detail in enumerate(ours.details)
        if isinstance(detail, ExpectationDetail) and (number >= len(theirs) or theirs[number] != detail)
    ] or ["the gate itself"]
    problem = f"validation.json records other outcomes than the suite finds in the data: {', '.join(differing)}"
    return problems_gate("expectations", [problem], EXPECTED)


def suite_problems(opened: OpenedRelease, corpus: CorpusManifest) -> list[str]:
    """How validation.json's expectation_suite differs from the installed corpus's (overlay applied)."""
    installed: list[Expectation] = list(corpus.gates.expectations)
    released = opened.validation.expectation_suite or []
    if len(released) != len(installed):
        return [
            f"validation.json's expectation_suite has {len(released)} expectations, "
            f"{corpus.name}'s corpus.yaml has {len(installed)}"
        ]
    overlay = (
        "the --gates overlay recorded in manifest.json does not make that change"
        if opened.manifest.gate_overlay is not None
        else "no --gates overlay in manifest.json records that change"
    )
    problems = []
    for number, (ours, theirs) in enumerate(zip(installed, released, strict=True), start=1):
        if ours == theirs:
            continue
        where = f"validation.json expectation {number} ({theirs.describe()})"
        if ours.key != theirs.key or set(ours.kwargs) - set(theirs.kwargs):
            problems.append(f"{where}: differs from {corpus.name}'s corpus.yaml ({ours.describe()})")
        else:
            changed = {key: value for key, value in theirs.kwargs.items() if ours.kwargs.get(key) != value}
            before = {key: ours.kwargs.get(key) for key in changed}
            problems.append(f"{where}: {before} -> {changed} differs from {corpus.name}'s corpus.yaml and {overlay}")
    return problems
