"""A release against its paper: each number corpus.yaml's ``published:`` holds, against the value recomputed.

A number matches when the recomputed value is within its tolerance; otherwise it deviates, explained when
corpus.yaml declares why (a reading choice, an erratum, another release of the source) and unexplained
otherwise. A number is not compared when the release is not the one it describes (a source it needs was not
given, or one it excludes was; the release holds other splits or notes of other sources than its
``applies_to`` names) or when the release does not compute it (agreement without annotator data).
The gate passes, or passes with a warning when a deviation is unexplained: papers have errata, so a deviation
never fails a release.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from clinical_corpora.core.manifest import PublishedNumber, PublishedScope
from clinical_corpora.validation.gates import GateResult

GATE = "published"
MAX_LISTED = 5
"""Unexplained deviations the gate's warning names; the card and validate's details list them all."""
Verdict = Literal["match", "explained", "unexplained", "not compared"]
DEVIATION_KINDS = {"reading_choice": "reading choice", "erratum": "erratum", "other_release": "other release"}


@dataclass(frozen=True)
class Comparison:
    """One published number against the release: the value recomputed (None when not), the verdict, and the
    declared reason of a deviation or why the number was not compared."""

    number: PublishedNumber
    recomputed: float | None
    verdict: Verdict
    note: str = ""

    @property
    def difference(self) -> float | None:
        return None if self.recomputed is None else self.recomputed - self.number.value

    def as_dict(self) -> dict[str, object]:
        return {
            "key": self.number.key,
            "published": self.number.value,
            "recomputed": self.recomputed,
            "tolerance": self.number.tolerance,
            "verdict": self.verdict,
            "source": self.number.source,
            **({"note": self.note} if self.note else {}),
        }


@dataclass(frozen=True)
class Recomputed:
    """What a release recomputes: ``values`` by key; a key absent but under a ``counted`` prefix counts 0."""

    values: Mapping[str, float]
    counted: tuple[str, ...] = ()

    def get(self, key: str) -> float | None:
        if key in self.values:
            return self.values[key]
        return 0.0 if key.startswith(self.counted) else None


@dataclass(frozen=True)
class ReleaseScope:
    """What a release holds, as its data says: rows of its default config, the splits holding them, and the
    sources of its notes (None when its rows do not say)."""

    config: str
    rows: int
    splits: tuple[str, ...]
    note_sources: tuple[str, ...] | None = None

    def describe(self) -> str:
        """``12 rows of its sdoh config, in the train, dev and test splits, of mimic and uw notes``."""
        where = f", in {splits_text(self.splits)}" if self.splits else ", in no split"
        return f"{self.rows} rows of its {self.config} config{where}{_sources_text(self.note_sources)}"


def scope_text(scope: PublishedScope) -> str:
    """A number's ``applies_to`` in words: the release, then its splits and note sources."""
    splits = "any splits" if scope.splits == "any" else splits_text(scope.splits)
    return f"{' '.join(scope.release.split())} ({splits}{_sources_text(scope.note_sources)})"


def and_list(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def splits_text(splits: Sequence[str]) -> str:
    """``the train split``, ``the train and test splits``, ``the train, dev and test splits``."""
    names = list(splits)
    return f"the {and_list(names)} split{'s' if len(names) > 1 else ''}"


def _sources_text(sources: Sequence[str] | None) -> str:
    return f", of {and_list(sorted(sources))} notes" if sources else ""


def compare_published(
    numbers: Sequence[PublishedNumber], recomputed: Recomputed, given_sources: Collection[str], scope: ReleaseScope
) -> list[Comparison]:
    """Each number against what a release built from ``given_sources``, holding ``scope``, recomputes."""
    return [_compare(number, recomputed, set(given_sources), scope) for number in numbers]


def _compare(number: PublishedNumber, recomputed: Recomputed, given: set[str], scope: ReleaseScope) -> Comparison:
    other = _other_release(number, given, scope)
    if other:
        why = f"{other}; the number is of {scope_text(number.applies_to)}"
        return Comparison(number, recomputed.get(number.key), "not compared", f"another release: {why}")
    value = recomputed.get(number.key)
    if value is None:
        return Comparison(number, None, "not compared", "this release does not compute it")
    if abs(value - number.value) <= number.tolerance + 1e-9 * max(1.0, abs(number.value)):
        return Comparison(number, value, "match")
    if number.deviation is not None:
        kind = DEVIATION_KINDS[number.deviation.kind]
        return Comparison(number, value, "explained", f"{kind}: {number.deviation.reason.strip()}")
    return Comparison(number, value, "unexplained")


def _other_release(number: PublishedNumber, given: set[str], scope: ReleaseScope) -> str:
    """How the release differs from the one ``number`` describes; empty when it is that release."""
    missing = [name for name in number.requires_sources if name not in given]
    excluded = [name for name in number.excludes_sources if name in given]
    if missing or excluded:
        return f"built without {', '.join(missing)}" if missing else f"built from {', '.join(excluded)}"
    described = number.applies_to
    splits_differ = described.splits != "any" and set(described.splits) != set(scope.splits)
    sources_differ = described.note_sources is not None and set(described.note_sources) != set(scope.note_sources or ())
    return f"this release holds {scope.describe()}" if splits_differ or sources_differ else ""


def published_gate(comparisons: Sequence[Comparison], not_comparable: str | None = None) -> GateResult:
    """The ``published`` gate: skipped with ``not_comparable`` (a sample release) or when there is nothing to
    compare; a warning naming each unexplained deviation; else passed."""
    expected = "published numbers within tolerance, or deviating for a declared reason"
    if not_comparable is not None:
        return GateResult(GATE, True, f"not compared: {not_comparable}", expected, skipped=not_comparable)
    compared = [c for c in comparisons if c.verdict != "not compared"]
    if not compared:
        reason = "no published number describes this release" if comparisons else "the corpus declares none"
        return GateResult(GATE, True, f"not compared: {reason}", expected, skipped=reason)
    counts = {verdict: sum(c.verdict == verdict for c in comparisons) for verdict in _ORDER}
    observed = ", ".join(f"{n} {verdict}" for verdict, n in counts.items() if n)
    details = [c.as_dict() for c in comparisons]
    unexplained = [c for c in comparisons if c.verdict == "unexplained"]
    if not unexplained:
        return GateResult(GATE, True, observed, expected, details)
    listed = "; ".join(
        f"{c.number.key} {number_text(c.recomputed, 4)} vs {number_text(c.number.value)} ({c.number.source})"
        for c in unexplained[:MAX_LISTED]
    )
    more = f"; and {len(unexplained) - MAX_LISTED} more" if len(unexplained) > MAX_LISTED else ""
    warning = f"{len(unexplained)} published number(s) deviate without a declared reason: {listed}{more}"
    return GateResult(GATE, True, observed, expected, details, warning=warning)


_ORDER: tuple[Verdict, ...] = ("match", "explained", "unexplained", "not compared")


def number_text(value: float | None, decimals: int = 6) -> str:
    """A number as cards and messages print it: whole numbers without decimals, others with at most
    ``decimals``; ``-`` for none."""
    if value is None:
        return "-"
    return str(int(value)) if float(value).is_integer() else f"{value:.{decimals}f}".rstrip("0").rstrip(".")
