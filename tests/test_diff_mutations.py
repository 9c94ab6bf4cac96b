"""``clincorp diff`` against known edits: random record edits applied to the parquet of a copy of each corpus's
sample release (spans moved, labels changed, chains merged, event arguments removed, records added and removed,
scalars changed), rehashed into its manifest; diff must report exactly the edits applied, nothing else."""

from __future__ import annotations

import copy
import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasets import Features

from clinical_corpora.builders.diff.engine import RECORD, Change, compare
from clinical_corpora.builders.diff.report import open_release
from clinical_corpora.core.hashing import sha256_file
from tests.conftest import SampleRelease

Applied = tuple[str, str, str]
"""(path, kind, item) of one edit inside a record."""
Mutation = Callable[[dict[str, Any], random.Random, Features, set[str]], Applied | None]
"""Edits a stored row in place (``taken``: what earlier edits of this round touched in it); None when it cannot."""
Key = tuple[str, str, str, str, str, str]
"""(config, split, record, path, kind, item) of a change."""

ROUNDS = 9
EDITS_PER_ROUND = 24


def names(features: Features, *path: str) -> list[str]:
    """The label names of the ClassLabel at ``path`` (lists walked through)."""
    feature: Any = features
    for name in path:
        while hasattr(feature, "feature"):
            feature = feature.feature
        feature = feature[name]
    return list(feature.names)


def relabel(value: dict[str, Any], field: str, labels: list[str], rng: random.Random) -> None:
    """Give a ClassLabel field (and its name beside it) another label."""
    other = rng.choice([label for label in labels if label != value[f"{field}_name"]])
    value[field], value[f"{field}_name"] = labels.index(other), other


def pick(items: list[dict[str, Any]], taken: set[str], rng: random.Random, prefix: str = "") -> dict[str, Any] | None:
    """An item with an id no earlier edit touched (marked as touched)."""
    free = [item for item in items if f"{prefix}{item['id']}" not in taken]
    if not free:
        return None
    item = rng.choice(free)
    taken.add(f"{prefix}{item['id']}")
    return item


def shift(span: dict[str, Any], text: str, others: list[dict[str, Any]], rng: random.Random) -> bool:
    """Move a span by a few characters (its text following) to offsets no other span has."""
    for delta in rng.sample([-3, -2, -1, 1, 2, 3], 6):
        start, end = span["start"] + delta, span["end"] + delta
        if 0 <= start and end <= len(text) and all((o["start"], o["end"]) != (start, end) for o in others):
            span["start"], span["end"], span["text"] = start, end, text[start:end]
            return True
    return False


# sdoh: events with triggers and arguments
def sdoh_trigger_moved(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    event = pick(row["events"], taken, rng, "trigger:")
    if event is None or not shift(event["trigger"], row["text"], [], rng):
        return None
    return ("events.trigger", "moved", event["id"])


def sdoh_event_type(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    event = pick(row["events"], taken, rng, "type:")
    if event is None:
        return None
    relabel(event, "type", names(features, "events", "type"), rng)
    return ("events.type", "label changed", event["id"])


def sdoh_argument_removed(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    event = pick(row["events"], taken, rng, "arguments:")
    if event is None or not event["arguments"]:
        return None
    argument = event["arguments"].pop(rng.randrange(len(event["arguments"])))
    return ("events.arguments", "removed", f"{event['id']}/{argument['id']}")


def sdoh_argument_subtype(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    event = pick(row["events"], taken, rng, "arguments:")
    if event is None or not event["arguments"]:
        return None
    argument = rng.choice(event["arguments"])
    relabel(argument, "subtype", names(features, "events", "arguments", "subtype"), rng)
    return ("events.arguments", "relabelled", f"{event['id']}/{argument['id']}")


def sdoh_scalar(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    if "has_ann_file" in taken:
        return None
    taken.add("has_ann_file")
    row["has_ann_file"] = not row["has_ann_file"]
    return ("has_ann_file", "changed", "")


# rad_coref: mentions across reports, chains
def rad_mention_moved(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    mention = pick(row["mentions"], taken, rng)
    if mention is None:
        return None
    text = row["reports"][mention["report_index"]]["text"]
    return ("mentions", "moved", mention["id"]) if shift(mention, text, row["mentions"], rng) else None


def rad_mention_type(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    mention = pick(row["mentions"], taken, rng)
    if mention is None:
        return None
    relabel(mention, "type", names(features, "mentions", "type"), rng)
    return ("mentions", "relabelled", mention["id"])


def merge_chains(members: str, chains: str = "chains") -> Mutation:
    def merged(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
        free = [chain for chain in row[chains] if f"chain:{chain['id']}" not in taken]
        if len(free) < 2:
            return None
        into, gone = rng.sample(free, 2)
        taken.update({f"chain:{into['id']}", f"chain:{gone['id']}"})
        into[members] = into[members] + gone[members]
        row[chains].remove(gone)
        return (chains, "merged", into["id"])

    return merged


def bigbio_entity_moved(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    """A BigBio entity's offsets (its ``offsets`` list of [start, end]) shifted by one character."""
    entity = pick(row["entities"], taken, rng)
    if entity is None:
        return None
    entity["offsets"] = [[start + 1, end + 1] for start, end in entity["offsets"]]
    return ("entities", "moved", entity["id"])


def bigbio_entity_type(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    entity = pick(row["entities"], taken, rng)
    if entity is None:
        return None
    entity["type"] = entity["type"] + "_edited"
    return ("entities", "relabelled", entity["id"])


def relabel_unkeyed(
    row: dict, rng: random.Random, features: Features, taken: set[str], items: str, label: str
) -> Applied | None:
    """Relabel one item of a list whose items have no id (one edit among them per round)."""
    if items in taken:
        return None
    taken.add(items)
    index = rng.randrange(len(row[items]))
    relabel(row[items][index], label, names(features, items, label), rng)
    return (f"{items}.{label}", "label changed", f"#{index}")


def toggle(row: dict, taken: set[str], name: str) -> Applied | None:
    """Flip a boolean field (once per round)."""
    if name in taken:
        return None
    taken.add(name)
    row[name] = not row[name]
    return (name, "changed", "")


def rad_modality(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    return relabel_unkeyed(row, rng, features, taken, "reports", "modality")


def pair_coreferent(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    return toggle(row, taken, "coreferent")


# odie_anaphora: markables, pairs, chains
def odie_markable_moved(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    markable = pick(row["markables"], taken, rng)
    if markable is None:
        return None
    return ("markables", "moved", markable["id"]) if shift(markable, row["text"], row["markables"], rng) else None


def odie_semantic_class(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    markable = pick(row["markables"], taken, rng)
    if markable is None:
        return None
    relabel(markable, "semantic_class", names(features, "markables", "semantic_class"), rng)
    return ("markables", "relabelled", markable["id"])


def odie_pair_removed(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    pair = pick(row["pairs"], taken, rng, "pair:")
    if pair is None:
        return None
    row["pairs"].remove(pair)
    return ("pairs", "removed", pair["id"])


def odie_note_type(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    if "note_type" in taken:
        return None
    taken.add("note_type")
    relabel(row, "note_type", names(features, "note_type"), rng)
    return ("note_type", "label changed", "")


# snomed_el: linked spans without ids, concepts
def snomed_annotation(kind: str) -> Mutation:
    def edit(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
        if "annotations" in taken or not row["annotations"]:  # spans without ids: one edit among them per round
            return None
        taken.add("annotations")
        span = rng.choice(row["annotations"])
        if kind == "relabelled":
            span["concept_id"] += 1
        elif not shift(span, row["text"], row["annotations"], rng):
            return None
        return ("annotations", kind, f"{span['start']}-{span['end']}")

    return edit


def concept_depth(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    if "depth" in taken:
        return None
    taken.add("depth")
    row["depth"] += 1
    return ("depth", "changed", "")


# clicr: queries and their answers, case reports and their entities
def clicr_answer_category(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    return relabel_unkeyed(row, rng, features, taken, "answers", "category")


def clicr_in_passage(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    return toggle(row, taken, "answer_in_passage")


def clicr_entity_moved(row: dict, rng: random.Random, features: Features, taken: set[str]) -> Applied | None:
    if "entities" in taken or not row["entities"]:
        return None
    taken.add("entities")
    span = rng.choice(row["entities"])
    if not shift(span, row["passage"], row["entities"], rng):
        return None
    return ("entities", "moved", f"{span['start']}-{span['end']}")


MAIN = {
    "sdoh": "sdoh",
    "rad_coref": "rad_coref",
    "odie_anaphora": "odie_anaphora",
    "snomed_el": "snomed_el",
    "clicr": "clicr",
}
MUTATIONS: dict[str, list[tuple[str, Mutation]]] = {
    "sdoh": [
        ("sdoh", sdoh_trigger_moved),
        ("sdoh", sdoh_event_type),
        ("sdoh", sdoh_argument_removed),
        ("sdoh", sdoh_argument_subtype),
        ("sdoh", sdoh_scalar),
        ("sdoh_bigbio_kb", bigbio_entity_moved),
    ],
    "rad_coref": [
        ("rad_coref", rad_mention_moved),
        ("rad_coref", rad_mention_type),
        ("rad_coref", merge_chains("mention_ids")),
        ("rad_coref", rad_modality),
        ("mention_pairs", pair_coreferent),
        ("rad_coref_bigbio_kb", merge_chains("entity_ids", "coreferences")),
    ],
    "odie_anaphora": [
        ("odie_anaphora", odie_markable_moved),
        ("odie_anaphora", odie_semantic_class),
        ("odie_anaphora", odie_pair_removed),
        ("odie_anaphora", merge_chains("markable_ids")),
        ("odie_anaphora", odie_note_type),
        ("odie_anaphora_bigbio_kb", bigbio_entity_type),
    ],
    "snomed_el": [
        ("snomed_el", snomed_annotation("moved")),
        ("snomed_el", snomed_annotation("relabelled")),
        ("concepts", concept_depth),
    ],
    "clicr": [
        ("clicr", clicr_answer_category),
        ("clicr", clicr_in_passage),
        ("clicr_documents", clicr_entity_moved),
    ],
}
ID_FIELDS = {"rad_coref": "patient_id", "snomed_el": "note_id", "concepts": "concept_id"}


class Copy:
    """A copy of a release whose parquet files are edited as rows and written back with the same schema."""

    def __init__(self, source: Path, folder: Path) -> None:
        shutil.copytree(source, folder)
        self.folder = folder
        self.tables: dict[Path, tuple[pa.Schema, list[dict[str, Any]]]] = {}

    def rows(self, config: str, split: str) -> tuple[list[dict[str, Any]], Features]:
        path = next((self.folder / "data" / config).glob(f"{split}-*.parquet"))
        if path not in self.tables:
            table = pq.read_table(path)
            self.tables[path] = (table.schema, table.to_pylist())
        schema, rows = self.tables[path]
        return rows, Features.from_arrow_schema(schema)

    def splits(self, config: str) -> list[str]:
        return sorted(path.name.split("-")[0] for path in (self.folder / "data" / config).glob("*.parquet"))

    def save(self) -> None:
        """Write the edited files and rehash them in manifest.json."""
        manifest_path = self.folder / "manifest.json"
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        for path, (schema, rows) in self.tables.items():
            pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
            name = path.relative_to(self.folder).as_posix()
            entry = next(entry for entry in manifest["outputs"] if entry["file"] == name)
            entry["sha256"], entry["rows"] = sha256_file(path), len(rows)
        manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def mutate(copy_: Copy, corpus: str, rng: random.Random, edits: int) -> set[Key]:
    """Apply ``edits`` random edits; the changes they make."""
    applied: set[Key] = set()
    taken: dict[tuple[str, str], set[str]] = {}
    main = MAIN[corpus]
    menu = [*MUTATIONS[corpus], (main, None), (main, None)]  # None: a record added or removed
    attempts = 0
    while len(applied) < edits and attempts < edits * 20:
        attempts += 1
        config, mutation = rng.choice(menu)
        split = rng.choice(copy_.splits(config))
        rows, features = copy_.rows(config, split)
        id_field = ID_FIELDS.get(config, "id")
        free = [row for row in rows if taken.get((config, str(row[id_field]))) != {"whole"}]
        if not free:
            continue
        row = rng.choice(free)
        record = str(row[id_field])
        touched = taken.setdefault((config, record), set())
        if mutation is None:
            if touched:
                continue
            if rng.random() < 0.5 and len(rows) > 1:
                rows.remove(row)
                applied.add((config, split, record, RECORD, "removed", ""))
            else:
                added = copy.deepcopy(row)
                added[id_field] = (
                    f"{record}-added-{attempts}" if isinstance(row[id_field], str) else row[id_field] + 10**6 + attempts
                )
                rows.append(added)
                taken[(config, str(added[id_field]))] = {"whole"}
                applied.add((config, split, str(added[id_field]), RECORD, "added", ""))
            touched.add("whole")
            taken[(config, record)] = {"whole"}
            continue
        if "whole" in touched:
            continue
        change = mutation(row, rng, features, touched)
        if change is not None:
            applied.add((config, split, record, *change))
    return applied


def reported(old: Path, new: Path) -> set[Key]:
    changes: list[Change] = [
        change for comparison in compare(open_release(old), open_release(new)) for change in comparison.changes
    ]
    keys = {(c.config, c.split, c.record, c.path, c.kind, c.item) for c in changes}
    assert len(keys) == len(changes), "a change was reported twice"
    return keys


@pytest.mark.parametrize("corpus", sorted(MUTATIONS))
def test_diff_reports_every_edit_and_nothing_else(corpus: str, sample_release: SampleRelease, tmp_path: Path) -> None:
    release = sample_release(corpus).folder
    rng = random.Random(f"diff-{corpus}")
    total = 0
    for round_ in range(ROUNDS):
        edited = Copy(release, tmp_path / f"{round_}" / corpus / release.name)
        applied = mutate(edited, corpus, rng, EDITS_PER_ROUND)
        edited.save()
        assert reported(release, edited.folder) == applied
        total += len(applied)
        shutil.rmtree(tmp_path / f"{round_}")
    assert total >= 200  # 5 corpora: over 1,000 edits in all
