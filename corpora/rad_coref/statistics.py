"""The ``rad_coref`` card's statistics, as Datta et al. 2022 report them (Tables 3-4, Figures 2-4, §5.1)."""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import datetime
from typing import Any

from clinical_corpora.builders.contract.text_units import tokenize
from clinical_corpora.core.card import BarChart, CardSection, Cell, Series, Table
from clinical_corpora.corpora.rad_coref.records import MENTION_TYPES

TWO_WEEKS_DAYS = 14
LONGEST_STACKED = 6
"""Figure 2 stacks chains of this length and longer in one part of each bar."""
DRAWN_GAP_BINS = 13
"""Figure 3 draws the first 12 two-week bins and puts every longer gap in the 13th."""
DRAWN_COMBINATIONS = 15
"""Figure 4 draws the most frequent modality combinations (the table lists every one)."""


def statistics_sections(patients: list[dict[str, Any]]) -> list[CardSection]:
    """The card's statistics sections, from the released patient rows."""
    return [
        corpus_statistics(patients),
        top_mentions(patients),
        chain_coverage(patients),
        modality_combinations(patients),
        time_gaps(patients),
    ]


def _chain_types(patient: dict[str, Any]) -> dict[str, str]:
    """Chain id → type of its first mention."""
    type_of = {mention["id"]: mention["type"] for mention in patient["mentions"]}
    return {chain["id"]: type_of[chain["mention_ids"][0]] for chain in patient["chains"]}


def _mean(values: list[int] | list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def corpus_statistics(patients: list[dict[str, Any]]) -> CardSection:
    """Datta et al. 2022, Table 3."""
    reports_per_patient = [len(p["reports"]) for p in patients]
    tokens_per_report = [len(tokenize(r["text"])) for p in patients for r in p["reports"]]
    tokens_per_mention = [len(tokenize(m["text"])) for p in patients for m in p["mentions"]]
    chains_per_patient = [len(p["chains"]) for p in patients]
    lengths = [len(c["mention_ids"]) for p in patients for c in p["chains"]]
    mentions = [m for p in patients for m in p["mentions"]]
    types = Counter(m["type"] for m in mentions)
    items: list[tuple[str, str, float]] = [  # stable key (corpus.yaml published:), row label, value
        ("patients", "Patients", len(patients)),
        ("reports", "Total reports", sum(reports_per_patient)),
        ("reports_per_patient.mean", "Avg no. of reports per patient", _mean(reports_per_patient)),
        ("reports_per_patient.max", "Max no. of reports per patient", max(reports_per_patient, default=0)),
        ("tokens_per_report.mean", "Avg no. of tokens per report", _mean(tokens_per_report)),
        ("tokens_per_report.max", "Max no. of tokens per report", max(tokens_per_report, default=0)),
        ("chains_per_patient.min", "Min no. of mention chains per patient", min(chains_per_patient, default=0)),
        ("chains_per_patient.max", "Max no. of mention chains per patient", max(chains_per_patient, default=0)),
        ("chains", "Total mention chains", len(lengths)),
        ("singleton_chains", "Total singleton mention chains", sum(1 for n in lengths if n == 1)),
        ("chain_length.max", "Longest chain length", max(lengths, default=0)),
        (
            "chain_length.mean_excluding_singletons",
            "Avg chain length (excluding singletons)",
            _mean([n for n in lengths if n > 1]),
        ),
        (
            "tokens_per_mention.mean",
            "Avg no. of tokens per mention",
            _mean(tokens_per_mention),
        ),
        ("mentions", "Total mentions", len(mentions)),
        *[(f"mentions.{kind}", f"Total entities ({kind})", types[kind]) for kind in MENTION_TYPES],
    ]
    rows: list[list[Cell]] = [[label, value] for _, label, value in items]
    return CardSection(
        "Corpus statistics",
        "As Datta et al. 2022, Table 3; tokens are `clinical_corpora.builders.contract.text_units.tokenize` "
        "tokens (the paper used NLTK).",
        Table(["item", "count"], rows),
        {key: float(value) for key, _, value in items},
    )


def top_mentions(patients: list[dict[str, Any]], top: int = 5) -> CardSection:
    """Datta et al. 2022, Table 4: the most frequent lower-cased mention strings of each type."""
    counts: dict[str, Counter[str]] = {kind: Counter() for kind in MENTION_TYPES}
    for patient in patients:
        for mention in patient["mentions"]:
            counts[mention["type"]][mention["text"].lower()] += 1
    ranked = [sorted(counts[kind].items(), key=lambda item: (-item[1], item[0]))[:top] for kind in MENTION_TYPES]
    rows: list[list[Cell]] = []
    for rank in range(max(map(len, ranked))):
        rows.append([cell for column in ranked for cell in (column[rank] if rank < len(column) else ("", ""))])
    values = {f"mention_string.{kind}.{text}": float(n) for kind in MENTION_TYPES for text, n in counts[kind].items()}
    return CardSection(
        "Most frequent mentions",
        f"Top {top} lower-cased mention strings by type (Datta et al. 2022, Table 4).",
        Table(["Finding", "count", "Device", "count"], rows),
        values,
        counted=("mention_string.",),
    )


def chain_coverage(patients: list[dict[str, Any]]) -> CardSection:
    """Datta et al. 2022, Figure 2: chains by the number of reports they cover and their length."""
    counts: Counter[tuple[int, int]] = Counter()
    for patient in patients:
        report_of = {m["id"]: m["report_index"] for m in patient["mentions"]}
        for chain in patient["chains"]:
            counts[(len({report_of[m] for m in chain["mention_ids"]}), len(chain["mention_ids"]))] += 1
    rows = [[reports, length, n] for (reports, length), n in sorted(counts.items())]
    return CardSection(
        "Chains by reports covered",
        "Number of chains by the number of distinct reports their "
        "mentions are in, and by chain length (Datta et al. 2022, Figure 2).",
        Table(["reports covered", "chain length", "chains"], rows),
        figures=[_coverage_chart(counts)],
    )


def _coverage_chart(counts: Counter[tuple[int, int]]) -> BarChart:
    """Datta et al. 2022, Figure 2: a bar per number of reports covered, stacked by chain length."""
    covered = list(range(1, max((reports for reports, _ in counts), default=1) + 1))
    stacked: Counter[tuple[int, int]] = Counter()
    for (reports, length), n in counts.items():
        stacked[(reports, min(length, LONGEST_STACKED))] += n
    lengths = sorted({length for _, length in stacked})
    series = tuple(
        Series(
            f"length {length}" + (" or more" if length == LONGEST_STACKED else ""),
            tuple(stacked[(reports, length)] for reports in covered),
        )
        for length in lengths
    )
    return BarChart(
        "chains-by-reports-covered",
        "Chains by the number of reports they cover, stacked by chain length",
        tuple(map(str, covered)),
        series or (Series("chains", tuple(0 for _ in covered)),),
        "reports of the patient covered by the chain",
        "chains",
        stacked=True,
    )


def modality_combinations(patients: list[dict[str, Any]]) -> CardSection:
    """Datta et al. 2022, Figure 4: the set of imaging modalities of each chain's reports."""
    order = {name: rank for rank, name in enumerate(("XR", "CT", "CTA", "MR", "US", "OTHER"))}
    counts: Counter[tuple[str, ...]] = Counter()
    for patient in patients:
        modality_of_mention = {m["id"]: patient["reports"][m["report_index"]]["modality"] for m in patient["mentions"]}
        for chain in patient["chains"]:
            counts[tuple(sorted({modality_of_mention[m] for m in chain["mention_ids"]}, key=order.__getitem__))] += 1
    rows: list[list[Cell]] = [
        [", ".join(combo), len(combo), n] for combo, n in sorted(counts.items(), key=lambda i: (-i[1], len(i[0]), i[0]))
    ]
    drawn = {" + ".join(combo): n for combo, n in sorted(counts.items(), key=lambda i: (-i[1], len(i[0]), i[0]))}
    return CardSection(
        "Modality combinations within chains",
        "Chains by the set of modalities of the reports their mentions are in (Datta et al. 2022, Figure 4)"
        + (f"; the figure draws the {DRAWN_COMBINATIONS} most frequent." if len(drawn) > DRAWN_COMBINATIONS else "."),
        Table(["modalities", "modalities in set", "chains"], rows),
        figures=[
            BarChart.counts(
                "modality-combinations",
                "Imaging modalities of the reports each chain covers",
                dict(list(drawn.items())[:DRAWN_COMBINATIONS]),
                "modalities",
                "chains",
                horizontal=True,
            )
        ],
    )


def time_gaps(patients: list[dict[str, Any]]) -> CardSection:
    """Datta et al. 2022, Figure 3: time between consecutive reports of a chain, in two-week bins, by chain type."""
    bins: Counter[tuple[int, str]] = Counter()
    longest = 0.0
    for patient in patients:
        times = [datetime.fromisoformat(r["charttime"]) for r in patient["reports"]]
        report_of = {m["id"]: m["report_index"] for m in patient["mentions"]}
        types = _chain_types(patient)
        for chain in patient["chains"]:
            covered = sorted({report_of[m] for m in chain["mention_ids"]}, key=lambda i: (times[i], i))
            for earlier, later in itertools.pairwise(covered):
                days = (times[later] - times[earlier]).total_seconds() / 86400
                longest = max(longest, days)
                bins[(int(days // TWO_WEEKS_DAYS), types[chain["id"]])] += 1
    rows: list[list[Cell]] = [
        [f"{TWO_WEEKS_DAYS * b}-{TWO_WEEKS_DAYS * (b + 1)} days", *(bins[(b, kind)] for kind in MENTION_TYPES)]
        for b in sorted({b for b, _ in bins})
    ]
    return CardSection(
        "Time between coreferent mentions",
        "Pairs of consecutive reports (by CHARTTIME) within a chain, by the time between them in "
        f"two-week bins and by chain type (Datta et al. 2022, Figure 3). Longest gap: {longest:.1f} days.",
        Table(["gap", *MENTION_TYPES], rows),
        values={"time_gap.max_days": longest},
        figures=[_gap_chart(bins)],
    )


def _gap_chart(bins: Counter[tuple[int, str]]) -> BarChart:
    """Datta et al. 2022, Figure 3: every two-week bin up to the longest gap (the last drawn holds the longer
    gaps), a bar per chain type."""
    drawn = min(max((b for b, _ in bins), default=0) + 1, DRAWN_GAP_BINS)
    counts: Counter[tuple[int, str]] = Counter()
    for (b, kind), n in bins.items():
        counts[(min(b, drawn - 1), kind)] += n
    names = [f"{TWO_WEEKS_DAYS * b}-{TWO_WEEKS_DAYS * (b + 1)}" for b in range(drawn)]
    if max((b for b, _ in bins), default=0) >= drawn:
        names[-1] = f"{TWO_WEEKS_DAYS * (drawn - 1)} or more"
    return BarChart(
        "time-between-coreferent-mentions",
        "Days between consecutive reports of a chain, by chain type",
        tuple(names),
        tuple(Series(kind, tuple(counts[(b, kind)] for b in range(drawn))) for kind in MENTION_TYPES),
        "days between the two reports (two-week bins)",
        "pairs of consecutive reports",
    )
