"""A release's schema and every one of its records.

A full release's rows are decoded and validated against their record models, which check what a record holds
(every span's text is the slice its offsets name, ids are of their declared form). A text-free release's rows
cannot be (their text is recipes): each is decoded (its labels in range), each string it keeps is checked
against the bound its record model declares (``schemas/bounded.py``), and each recipe against its row's source
documents: slices of a listed document, literals short and between slices, so no text rides in a row."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from datasets import Features
from pydantic import BaseModel, ValidationError

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.opened import OpenedRelease, schema_problems
from clinical_corpora.builders.validate.gate import problems_gate
from clinical_corpora.core.errors import record_name
from clinical_corpora.core.locators import LOCATOR
from clinical_corpora.core.release_manifest import SHA256, first_problem
from clinical_corpora.schemas.bounded import Bound, BoundTree, bounded_tree
from clinical_corpora.schemas.features import LabelIdError, features_for, row_decoder, schema_fingerprint
from clinical_corpora.schemas.licensed import (
    LEAF,
    LITERAL,
    MAX_LITERAL,
    SOURCE_DOCUMENTS,
    LicensedTree,
    holds_lost,
    licensed_tree,
)
from clinical_corpora.validation.gates import GateResult

BATCH_ROWS = 1024


def schema_gate(opened: OpenedRelease) -> GateResult:
    """Every shard's Arrow schema and embedded features against its record model, and the schema fingerprint."""
    expected = opened.expected_features()
    problems = []
    if schema_fingerprint(expected) != opened.manifest.schema_fingerprint:
        problems.append("the installed record models no longer match the release's schema fingerprint")
    if opened.text_free:
        full = {config: features_for(opened.builder.CONFIGS[config]) for config in opened.corpus.configs}
        if schema_fingerprint(full) != opened.manifest.full_schema_fingerprint:
            problems.append("the installed record models differ from those the full release was built with")
    problems += schema_problems(opened)
    if opened.variant == "full":
        problems += [f"config {config}: no parquet files" for config in expected if not opened.view.shards(config)]
    return problems_gate("schema", problems, "features as the record models")


def records_gate(opened: OpenedRelease) -> GateResult:
    """Every record of the release valid (see the module docstring); each problem names the config, split,
    record id and field."""
    problems, checked, unchecked = [], 0, 0
    check = _text_free_problem if opened.text_free else _record_problem
    for config in opened.configs():
        model = opened.builder.CONFIGS[config]
        id_field = getattr(model, "id_field", "id")
        rows = RowCheck(model, opened.view.features(config), opened.variant == "re-anchored")
        for split, shard, position, row in _stored_rows(opened.view, config):
            checked += 1
            problem = check(rows, row)
            if problem is LOST:
                unchecked += 1
            elif problem is not None:
                where = f"{config}/{split} record {record_name(row.get(id_field))!r} ({shard} row {position})"
                problems.append(f"{where}: {problem}")
        if id_field in opened.view.features(config):
            problems += [
                f"{config}/{split}: duplicate id {record_id!r}"
                for split, _, record_id in opened.view.repeated_ids(config, id_field)
            ]
    observed = f"{checked} records, {len(problems)} invalid" + (
        f", {unchecked} with strings re-anchoring lost (named in re-anchored.jsonl)" if unchecked else ""
    )
    return problems_gate("records", problems, "every record valid under its model", observed)


LOST = "lost"
"""A re-anchored record with a lost string (null): its model cannot check it; re-anchored.jsonl names it."""


class RowCheck:
    """How one config's stored rows are checked: its record model, its rows' decoder, and whether a string
    may be lost (a re-anchored rehydration)."""

    def __init__(self, model: type[BaseModel], features: Features, lost_allowed: bool) -> None:
        self.model, self.lost_allowed = model, lost_allowed
        self.decode: Callable[[Any], Any] = row_decoder(features)
        self.licensed: LicensedTree = licensed_tree(model)
        self.bounded: BoundTree = bounded_tree(model)


def _stored_rows(view: ReleaseView, config: str) -> Iterator[tuple[str, str, int, dict[str, Any]]]:
    """(split, shard name, row within the shard, stored row) of every row of a config."""
    for shard in view.shards(config):
        position = 0
        for batch in view.shard_batches(shard, BATCH_ROWS):
            for row in batch.to_pylist():
                yield view.split_of(shard), shard.name, position, row
                position += 1


def _record_problem(check: RowCheck, row: dict[str, Any]) -> str | None:
    """Why a stored row is not a valid record (``field spans[2].label: ...``), or None."""
    try:
        if check.lost_allowed and holds_lost(row, check.licensed):
            return LOST
        check.model.model_validate(check.decode(row))
    except LabelIdError as error:
        return f"field {error.field}: {error.problem}"
    except ValidationError as error:
        return f"field {first_problem(error)}" if error.errors()[0]["loc"] else first_problem(error)
    return None


def _text_free_problem(check: RowCheck, row: dict[str, Any]) -> str | None:
    """Why a stored text-free row is not one of its model's records with recipes for its text, or None."""
    try:
        decoded = check.decode(dict(row))
    except LabelIdError as error:
        return f"field {error.field}: {error.problem}"
    documents = decoded.get(SOURCE_DOCUMENTS) or []
    for number, document in enumerate(documents):
        if not (re.fullmatch(LOCATOR, document["locator"] or "") and re.fullmatch(SHA256, document["sha256"] or "")):
            return f"field {SOURCE_DOCUMENTS}[{number}]: not a locator <source>:<key> with a sha256"
    for path, value, bound in _leaves(decoded, check.bounded, "", _is_bound):
        if value is not None and (len(value) > bound.max_length or not re.fullmatch(bound.pattern, value)):
            return f"field {path}: {len(value)} characters that are not {bound.what}"
    for path, recipe, _ in _leaves(decoded, check.licensed, "", _is_licensed):
        problem = recipe_problem(recipe, len(documents))
        if problem is not None:
            return f"field {path}: {problem}"
    return None


def _is_bound(node: Any) -> bool:
    return isinstance(node, Bound)


def _is_licensed(node: Any) -> bool:
    return node == LEAF


def _leaves(value: Any, node: Any, path: str, is_leaf: Callable[[Any], bool]) -> Iterator[tuple[str, Any, Any]]:
    """(path, value, node) of every value of a decoded row at a leaf of a field tree (``is_leaf`` says which
    nodes are leaves; lists and structs are followed, a null stops the walk)."""
    if value is None:
        return
    if is_leaf(node):
        yield path, value, node
    elif isinstance(node, list):
        for index, item in enumerate(value):
            yield from _leaves(item, node[0], f"{path}[{index}]", is_leaf)
    else:
        for name, child in node.items():
            yield from _leaves(value.get(name), child, f"{path}.{name}" if path else name, is_leaf)


def recipe_problem(recipe: list[dict[str, Any]], documents: int) -> str | None:
    """Why a recipe is not slices of its row's ``documents`` listed documents with short literals between
    them, or None."""
    literal, previous_literal = 0, False
    for segment in recipe:
        document, start, end, text = segment["document"], segment["start"], segment["end"], segment["literal"]
        if document == LITERAL:
            if text is None or previous_literal:
                return "a literal segment without its text, or next to another literal"
            literal += len(text)
        elif not (0 <= document < documents and text is None and start is not None and end is not None):
            return f"a segment of document {document} of a row listing {documents}, or with a literal"
        elif not 0 <= start <= end:
            return f"a segment [{start}, {end}) that is not a slice"
        previous_literal = document == LITERAL
    if literal > MAX_LITERAL:
        return f"{literal} characters of literal text (at most {MAX_LITERAL}): text the documents do not hold"
    return None
