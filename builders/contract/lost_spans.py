"""A release as scorers and exporters read it: spans a re-anchored rehydration lost left out, each named.

``clincorp rehydrate --re-anchor`` writes a span whose text is not in the user's copy as null (its text and
offsets; ``re-anchored.jsonl`` says why). A record model marks its licensed strings (:func:`licensed_tree`), so a
null one is a lost span whatever the corpus: the struct holding it is left out of the list it is an item of (a
mention, an event, an event's argument), or, when no list holds it, the whole record is. Nothing lost is ever
read as text, offsets or ``None``; what was left out is kept, in reading order, for the command to report.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.schemas.licensed import LEAF, LicensedTree, licensed_tree

LOST_REASON = "its text is not in your copy of the document (lost when re-anchoring; re-anchored.jsonl names it)"
SHOWN = 5


@dataclass(frozen=True)
class LostSpan:
    """A struct (or a whole record, ``item`` empty) left out because a span of it was lost."""

    config: str
    split: str
    record: str
    item: str

    def __str__(self) -> str:
        return f"{self.config}/{self.split} [{self.record}] {self.item or 'the whole record'}"

    def tsv_fields(self) -> tuple[str, ...]:
        """Its line of an export's ``dropped.tsv`` (split, record, chain, item, start, end, reason); the item is the
        config alone when the whole record was left out."""
        return (
            self.split,
            self.record,
            "",
            f"{self.config}.{self.item}" if self.item else self.config,
            "",
            "",
            LOST_REASON,
        )


class _Lost(Exception):
    """A licensed string of the value being pruned is null."""


def without_lost(row: dict[str, Any], tree: LicensedTree) -> tuple[dict[str, Any] | None, list[str]]:
    """``row`` without the structs holding a null licensed string (None when the record itself holds one),
    and the paths of the items left out (``mentions[3] (T4)``)."""
    left_out: list[str] = []
    try:
        return _pruned(row, tree, "", left_out), left_out
    except _Lost:
        return None, []


def _pruned(value: Any, node: Any, path: str, left_out: list[str]) -> Any:
    if node == LEAF:
        if value is None:
            raise _Lost
        return value
    if isinstance(node, list):
        return None if value is None else _pruned_items(value, node[0], path, left_out)
    if not isinstance(value, dict):
        return value
    pruned = dict(value)
    for name, child in node.items():
        if name in value:
            pruned[name] = _pruned(value[name], child, f"{path}.{name}" if path else name, left_out)
    return pruned


def _pruned_items(items: list[Any], node: Any, path: str, left_out: list[str]) -> list[Any]:
    """The items of a list that hold no lost string; a lost plain string loses the struct holding the list."""
    kept = []
    for index, item in enumerate(items):
        found: list[str] = []
        try:
            kept.append(_pruned(item, node, f"{path}[{index}]", found))
        except _Lost:
            if not isinstance(item, dict):
                raise
            known = item.get("id")
            left_out.append(f"{path}[{index}]" + (f" ({known})" if isinstance(known, str) else ""))
            continue
        left_out += found
    return kept


class KeptView(ReleaseView):
    """A release's rows without their lost spans (:func:`without_lost`); :attr:`lost` names what was left out."""

    def __init__(self, folder: Path, models: Mapping[str, type[BaseModel]]) -> None:
        super().__init__(folder)
        self.trees = {config: licensed_tree(model) for config, model in models.items()}
        self.id_fields = {config: str(getattr(model, "id_field", "id")) for config, model in models.items()}
        self._lost: dict[LostSpan, None] = {}

    @property
    def lost(self) -> list[LostSpan]:
        """What was left out, once each, in the order it was first read."""
        return list(self._lost)

    def rows(self, config: str, split: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        for shard_split, row in super().rows(config, split):
            kept = self.kept(config, shard_split, row)
            if kept is not None:
                yield shard_split, kept

    def kept(self, config: str, split: str, row: dict[str, Any]) -> dict[str, Any] | None:
        """``row`` (of ``config``, maybe some columns only) without its lost spans; None when it is lost whole."""
        kept, items = without_lost(row, self.trees.get(config, {}))
        record = str(row.get(self.id_fields.get(config, "id"), "?"))
        for item in items if kept is not None else [""]:
            self._lost.setdefault(LostSpan(config, split, record, item))
        return kept

    def lost_summary(self) -> str | None:
        """One paragraph counting and naming what was left out (None when nothing was)."""
        lost = self.lost
        if not lost:
            return None
        named = "; ".join(map(str, lost[:SHOWN])) + (f"; and {len(lost) - SHOWN} more" if len(lost) > SHOWN else "")
        return (
            f"{self.folder.name}: left out {len(lost)} annotation(s) holding a span lost when re-anchoring (its text "
            f"is not in your copy; re-anchored.jsonl says why): {named}"
        )
