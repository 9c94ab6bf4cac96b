"""The ``odie_anaphora`` card's statistics: Savova et al. 2011's corpus characteristics, from the released rows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from clinical_corpora.core.card import BarChart, CardSection, Cell, Series, Table
from clinical_corpora.corpora.odie_anaphora.records import RELATION_TYPES

NOT_ANNOTATED = "(not annotated)"
INSTITUTION_NAMES = {"mayo": "Mayo Clinic", "upmc": "UPMC"}


def statistics_sections(split_rows: list[tuple[str, dict[str, Any]]]) -> list[CardSection]:
    """Counts of notes, markables, pairs and chains (in all and per split); the markables' and pairs' attribute
    distributions."""
    rows = [row for _, row in split_rows]
    markables = [m for row in rows for m in row["markables"]]
    pairs = [(row["note_type"], p) for row in rows for p in row["pairs"]]
    chain_sizes = [len(c["markable_ids"]) for row in rows for c in row["chains"]]
    documents = max(len(rows), 1)
    overview = Table(
        ["", "total", "per note"],
        [
            ["notes", len(rows), 1.0],
            ["markables", len(markables), len(markables) / documents],
            ["pairs", len(pairs), len(pairs) / documents],
            ["identity chains", len(chain_sizes), len(chain_sizes) / documents],
        ],
    )
    chain_text = (
        f"Chain length (markables per chain) ranges from {min(chain_sizes)} to {max(chain_sizes)}."
        if chain_sizes
        else "No identity chains."
    )
    counts = {
        "notes": len(rows),
        "markables": len(markables),
        "pairs": len(pairs),
        "chains": len(chain_sizes),
        "markables.per_note": len(markables) / documents,
        "pairs.per_note": len(pairs) / documents,
        "chains.per_note": len(chain_sizes) / documents,
        **({"chain_length.min": min(chain_sizes), "chain_length.max": max(chain_sizes)} if chain_sizes else {}),
    }
    return [
        CardSection(
            "Corpus statistics",
            chain_text,
            overview,
            values={key: float(n) for key, n in counts.items()},
            figures=[institution_chart(rows)],
        ),
        split_section(split_rows),
        _distribution("Semantic classes of markables", "semantic_class", (m["semantic_class"] for m in markables)),
        _distribution(
            "Grammatical categories of markables",
            "grammatical_category",
            (m["grammatical_category"] for m in markables),
        ),
        _relations_per_note_type(pairs),
        _distribution("Bagga classes of pairs", "bagga_class", (p["bagga_class"] for _, p in pairs)),
    ]


def split_section(split_rows: list[tuple[str, dict[str, Any]]]) -> CardSection:
    """Notes, markables, pairs and identity chains of each split (the i2b2/VA 2011 train and test folders are
    released as the splits they are, Uzuner et al. 2012)."""
    counts: dict[str, list[int]] = {}
    for split, row in split_rows:
        totals = counts.setdefault(split, [0, 0, 0, 0])
        for index, size in enumerate((1, len(row["markables"]), len(row["pairs"]), len(row["chains"]))):
            totals[index] += size
    order = sorted(counts, key=lambda split: (split != "train", split))
    columns = ["split", "notes", "markables", "pairs", "identity chains"]
    return CardSection("Counts per split", table=Table(columns, [[split, *counts[split]] for split in order]))


def _relations_per_note_type(pairs: list[tuple[str, dict[str, Any]]]) -> CardSection:
    """How many pairs of each relation type each note type holds, and in all."""
    note_types = sorted({note_type for note_type, _ in pairs})
    by_note_type = Counter((note_type, p["relation"]) for note_type, p in pairs)
    relation_rows = [
        [
            relation,
            *(by_note_type[(t, relation)] for t in note_types),
            sum(by_note_type[(t, relation)] for t in note_types),
        ]
        for relation in RELATION_TYPES
    ]
    return CardSection(
        "Relation types of pairs, per note type",
        table=Table(["relation", *note_types, "all"], relation_rows),
        values=_shares("relation", Counter(p["relation"] for _, p in pairs)),
        counted=("relation.",),
    )


def institution_chart(rows: list[dict[str, Any]]) -> BarChart:
    """Markables, pairs and identity chains per institution (Savova et al. 2011's Mayo and UPMC sets)."""
    institutions = sorted({row["institution"] for row in rows})
    counted = {
        name: tuple(
            sum(len(row[field]) for row in rows if row["institution"] == institution) for institution in institutions
        )
        for name, field in (("markables", "markables"), ("pairs", "pairs"), ("identity chains", "chains"))
    }
    return BarChart(
        "annotations-per-institution",
        "Markables, pairs and identity chains per institution",
        tuple(INSTITUTION_NAMES.get(institution, institution) for institution in institutions),
        tuple(Series(name, values) for name, values in counted.items()),
        "institution",
        "annotations",
    )


def _distribution(title: str, attribute: str, values: Iterable[str | None]) -> CardSection:
    """Each value's count and share; keyed ``<attribute>.<value>`` and ``<attribute>.<value>.share``."""
    counts = Counter(NOT_ANNOTATED if value is None else value for value in values)
    total = sum(counts.values()) or 1
    rows: list[list[Cell]] = [
        [name, count, f"{100 * count / total:.1f}%"]
        for name, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    table = Table(["value", "count", "share"], rows)
    return CardSection(title, table=table, values=_shares(attribute, counts), counted=(f"{attribute}.",))


def _shares(attribute: str, counts: Counter[str]) -> dict[str, float]:
    total = sum(counts.values()) or 1
    return {
        **{f"{attribute}.{name}": float(n) for name, n in counts.items()},
        **{f"{attribute}.{name}.share": n / total for name, n in counts.items()},
    }
