"""Load a synthetic SNOMED CT RF2 Snapshot at International Edition scale; prints JSON.

Generates (in a temp dir) 350k concepts, 1.5M descriptions and 1M active-or-not is-a rows (plus
attribute rows the reader must skip) forming a DAG under the root with the three challenge
hierarchies kept disjoint, then times ``load_snapshot`` (hierarchies and depths included) against
the naive baseline of ``pandas.read_csv`` of the three files without any graph work.
Target: load with depths in <= 60 s.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas

from benchmarks._measure import measure
from clinical_corpora.builders.sources.rf2 import (
    CONCEPT_COLUMNS,
    DESCRIPTION_COLUMNS,
    HIERARCHY_ROOTS,
    RELATIONSHIP_COLUMNS,
    ROOT_CONCEPT_ID,
    load_snapshot,
)

TARGET_SECONDS = 60.0
MODULE = "900000000000207008"
TOPS = [
    HIERARCHY_ROOTS["finding"],
    HIERARCHY_ROOTS["procedure"],
    HIERARCHY_ROOTS["body_structure"],
    105590001,
]
GROUP_SHARES = [0.34, 0.17, 0.12, 0.37]  # finding, procedure, body structure, everything else


def _write(path: Path, header: tuple[str, ...], columns: list[np.ndarray]) -> None:
    lines = ["\t".join(header)]
    lines.extend("\t".join(row) for row in zip(*(column.astype(str) for column in columns), strict=True))
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")


def write_snapshot(folder: Path, concepts: int, descriptions: int, is_a_rows: int, seed: int) -> None:
    """A Snapshot DAG: every concept's parents are earlier concepts of its own top-level group."""
    rng = np.random.default_rng(seed)
    ids = np.concatenate([[ROOT_CONCEPT_ID, *TOPS], 10_000_000_000 + np.arange(concepts - 5) * 1000 + 100])
    group = np.concatenate([[-1, 0, 1, 2, 3], rng.choice(4, size=concepts - 5, p=GROUP_SHARES)])
    children, parents = [np.arange(1, 5)], [np.zeros(4, dtype=np.int64)]
    extra = is_a_rows - (concepts - 1)
    for g in range(4):
        members = np.flatnonzero(group == g)  # members[0] is the group's top concept
        rank = np.arange(1, len(members))
        children.append(members[1:])
        parents.append(members[(rng.random(len(rank)) * rank).astype(np.int64)])
        extra_children = rng.choice(rank, size=int(extra * len(rank) / (concepts - 5)))
        children.append(members[extra_children])
        parents.append(members[(rng.random(len(extra_children)) * extra_children).astype(np.int64)])
    child, parent = np.concatenate(children), np.concatenate(parents)
    is_parent = np.zeros(concepts, dtype=bool)
    is_parent[parent] = True
    retired = (rng.random(concepts) < 0.02) & ~is_parent  # retired leaves lose their is-a rows
    keep = ~retired[child]
    child, parent = child[keep], parent[keep]
    active_concept = (~retired).astype(np.int64)
    rows = len(child)
    _write(
        folder / "sct2_Concept_Snapshot_INT_20230531.txt",
        CONCEPT_COLUMNS,
        [
            ids,
            np.full(concepts, 20230531),
            active_concept,
            np.full(concepts, MODULE),
            np.full(concepts, "900000000000074008"),
        ],
    )
    described = np.concatenate([np.arange(concepts), rng.integers(0, concepts, descriptions - concepts)])
    type_ids = np.where(np.arange(descriptions) < concepts, "900000000000003001", "900000000000013009")
    terms = np.char.add(
        np.char.add("term ", described.astype(str)),
        np.where(type_ids == "900000000000003001", " (finding)", ' "syn"'),
    )
    _write(
        folder / "sct2_Description_Snapshot-en_INT_20230531.txt",
        DESCRIPTION_COLUMNS,
        [
            20_000_000_000 + np.arange(descriptions) * 1000 + 110,
            np.full(descriptions, 20230531),
            np.where(np.arange(descriptions) < concepts, 1, (rng.random(descriptions) < 0.9).astype(np.int64)),
            np.full(descriptions, MODULE),
            ids[described],
            np.full(descriptions, "en"),
            type_ids,
            terms,
            np.full(descriptions, "900000000000448009"),
        ],
    )
    attribute_rows = rows // 3
    attribute_source = rng.integers(5, concepts, attribute_rows)
    _write(
        folder / "sct2_Relationship_Snapshot_INT_20230531.txt",
        RELATIONSHIP_COLUMNS,
        [
            30_000_000_000 + np.arange(rows + attribute_rows) * 1000 + 120,
            np.full(rows + attribute_rows, 20230531),
            np.ones(rows + attribute_rows, dtype=np.int64),
            np.full(rows + attribute_rows, MODULE),
            np.concatenate([ids[child], ids[attribute_source]]),
            np.concatenate([ids[parent], ids[rng.integers(0, concepts, attribute_rows)]]),
            np.zeros(rows + attribute_rows, dtype=np.int64),
            np.concatenate([np.full(rows, "116680003"), np.full(attribute_rows, "363698007")]),
            np.full(rows + attribute_rows, "900000000000011006"),
            np.full(rows + attribute_rows, "900000000000451002"),
        ],
    )


def run_reader(folder: str) -> dict[str, int]:
    terminology = load_snapshot(folder)
    return {
        "active_concepts": len(terminology.active),
        "with_depth": len(terminology.depth),
        "max_depth": max(terminology.depth.values()),
        "in_hierarchies": len(terminology.hierarchy),
        "synonyms": sum(map(len, terminology.synonyms.values())),
    }


def run_pandas(folder: str) -> int:
    return sum(
        len(pandas.read_csv(path, sep="\t", quoting=csv.QUOTE_NONE, dtype=str, keep_default_na=False))
        for path in sorted(Path(folder).glob("sct2_*.txt"))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of 350k / 1.5M / 1M rows")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()

    concepts, descriptions, is_a_rows = (max(1000, int(n * args.scale)) for n in (350_000, 1_500_000, 1_000_000))
    with tempfile.TemporaryDirectory(prefix="bench_rf2_") as folder:
        # generated in a child process too: a child's peak RSS starts at its parent's high-water mark
        generation = measure(write_snapshot, Path(folder), concepts, descriptions, is_a_rows, args.seed)
        reader = measure(run_reader, folder)
        baseline = measure(run_pandas, folder)
        size = sum(path.stat().st_size for path in Path(folder).glob("*.txt"))
    report = {
        "benchmark": "rf2",
        "concepts": concepts,
        "descriptions": descriptions,
        "is_a_rows": is_a_rows,
        "input_mb": round(size / 1e6, 1),
        "generation_seconds": generation["seconds"],
        "load_snapshot": reader,
        "pandas_read_csv_only": baseline,
        "ratio_vs_pandas": round(reader["seconds"] / baseline["seconds"], 2),
        "target_seconds": TARGET_SECONDS,
        "meets_target": reader["seconds"] <= TARGET_SECONDS,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
