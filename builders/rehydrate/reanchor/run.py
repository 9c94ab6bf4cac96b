"""``clincorp rehydrate --re-anchor``: restore a text-free release from copies of the sources that differ
from the maintainer's, moving every span the anchors confirm and naming every one they do not.

The documents whose text matches its recorded sha256 restore as in a strict rehydration. For each other
document present in the sources, the release's anchors (``anchors.py``) map the maintainer's characters into
the user's copy (``relocate.py``) and each row using it is re-anchored (``rows.py``); the row is
then restored and checked against its record model with every lost string placed where its neighbours
moved, and left out (named, with the reason) when the check fails. A row using a document the sources lack,
or one the release holds no anchors for, is left out.

The result is not the maintainer's release and never says so: its manifest is the maintainer's with
``variant: re-anchored``, the counts (exact, relocated, replaced, lost, records left out), the sha256 of the
maintainer's manifest and the sha256 of its own files; its card opens with what was re-anchored; every lost
string and every record left out is listed in ``re-anchored.jsonl``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from datasets import Features
from pydantic import BaseModel

from clinical_corpora.builders.rehydrate.reanchor.maps import DocumentMap
from clinical_corpora.builders.rehydrate.reanchor.relocate import document_map
from clinical_corpora.builders.rehydrate.reanchor.rows import CLASSES, Layout, RowAnchoring
from clinical_corpora.builders.rehydrate.restoring import Restoring
from clinical_corpora.builders.rehydrate.rows import RestoredRows
from clinical_corpora.builders.release.writer import SplitWriter, rows_per_row_group
from clinical_corpora.builders.text_free.anchors import read_anchors
from clinical_corpora.core.errors import record_name
from clinical_corpora.core.release_records import ANCHORS_FILE, REANCHORED_FILE, write_json_lines
from clinical_corpora.schemas.licensed import SOURCE_DOCUMENTS, licensed_tree, offset_fields

BATCH_ROWS = 2_000


@dataclass
class Reanchored:
    """What re-anchoring did: strings per class, the lost strings and records left out, each document's map."""

    counts: Counter[str] = field(default_factory=Counter)
    lost: list[dict[str, Any]] = field(default_factory=list)
    left_out: list[dict[str, Any]] = field(default_factory=list)
    documents: list[dict[str, Any]] = field(default_factory=list)

    def write(self, folder: Path) -> None:
        """re-anchored.jsonl: each document's map, each string lost, each record left out."""
        lines = [{"document": d} for d in self.documents] + [{"lost": x} for x in self.lost]
        write_json_lines(folder / REANCHORED_FILE, [*lines, *({"left_out": x} for x in self.left_out)])

    def summary(self) -> dict[str, Any]:
        return {
            "strings": {name: self.counts[name] for name in (*CLASSES, "left_out")},
            "records_left_out": len(self.left_out),
            "documents_re_anchored": sum(1 for d in self.documents if "how" in d),
            "documents_unusable": sum(1 for d in self.documents if "how" not in d),
        }


@dataclass(frozen=True)
class Maps:
    """The differing documents: map into the user's copy, the maintainer's length, or why none."""

    maps: dict[str, DocumentMap]
    originals: dict[str, int]
    unusable: dict[str, str]


def document_maps(restoring: Restoring) -> Maps:
    """Maps of the documents that cannot restore the release strictly into the user's copies, from the release's
    anchors (none when it lists none)."""
    present = [locator for locator in restoring.bad if locator in restoring.index]
    anchors = read_anchors(restoring.anchors, present) if restoring.anchors is not None else {}
    maps, originals, unusable = {}, {}, {}
    for locator, reason in restoring.bad.items():
        anchor, text = anchors.get(locator), restoring.text(locator)
        if text is None:
            unusable[locator] = reason
        elif anchor is None:
            unusable[locator] = f"{reason}; the release holds no anchors for it ({ANCHORS_FILE})"
        else:
            maps[locator] = document_map(anchor, restoring.wanted[locator], text)
            originals[locator] = anchor.characters
    return Maps(maps, originals, unusable)


def reanchor(restoring: Restoring, staging: Path) -> Reanchored:
    """Every row restored into ``staging`` through the pipeline's writer, re-anchored where it uses a differing
    document; what was done."""
    maps = document_maps(restoring)
    report = Reanchored(documents=_document_lines(maps))
    anchoring = RowAnchoring(maps.maps, maps.originals)
    view = restoring.view
    for config, features in restoring.features().items():
        model = restoring.builder.CONFIGS[config]
        rows = _ConfigRows(model, features, anchoring, maps.unusable, report, restoring)
        for split in view.splits(config):
            writer = SplitWriter(staging / "data" / config, split, features, rows_per_group=rows_per_row_group(model))
            for shard in view.shards(config, split):
                for batch in view.shard_batches(shard, BATCH_ROWS):
                    where = f"{config}/{split}"
                    kept = rows.batch(batch, where)
                    writer.write(
                        rows.valid(restoring.restore(kept, rows.tree, rows.schema, where, rows.id_field), where)
                    )
            writer.close()
    return report


class _ConfigRows:
    """Re-anchors the batches of one config."""

    def __init__(
        self,
        model: type[BaseModel],
        features: Features,
        anchoring: RowAnchoring,
        unusable: dict[str, str],
        report: Reanchored,
        restoring: Restoring,
    ) -> None:
        self.anchoring, self.unusable, self.report = anchoring, unusable, report
        self.restoring = restoring
        self.tree, self.schema = licensed_tree(model), features.arrow_schema
        self.layout = Layout(self.tree, offset_fields(model))
        self.id_field = getattr(model, "id_field", "id")
        self.restored = RestoredRows(model, features)

    def valid(self, batch: pa.RecordBatch, where: str) -> pa.RecordBatch:
        """The restored rows that are valid records (a row of documents that match is checked too: its recipe
        may be forged); the others left out and named."""
        problems = self.restored.problems(batch)
        for position, problem in problems:
            record = f"{where} [{self.restored.record(batch, position)}]"
            self.report.left_out.append({"record": record, "reason": f"restores as no valid record: {problem}"})
        return self.restored.without(batch, [position for position, _ in problems]) if problems else batch

    def batch(self, batch: pa.RecordBatch, where: str) -> pa.RecordBatch:
        """The batch with re-anchored rows moved and the rows that cannot be left out, in order."""
        listed = batch.column(SOURCE_DOCUMENTS).to_pylist()
        touched = [self.anchoring.touches(row) or self._unusable(row) is not None for row in listed]
        if not any(touched):
            self.report.counts["exact"] += self._strings(batch)
            return batch
        clean = batch.filter(pa.array([not t for t in touched]))
        self.report.counts["exact"] += self._strings(clean)
        touched_rows = batch.filter(pa.array(touched)).to_pylist()
        positions, rows = self._kept(np.flatnonzero(touched).tolist(), touched_rows, where, batch.schema)
        moved = pa.Table.from_pylist(rows, schema=batch.schema)
        order = np.argsort(np.concatenate([np.flatnonzero(~np.array(touched)), np.array(positions, dtype=np.int64)]))
        table = pa.concat_tables([pa.Table.from_batches([clean], schema=batch.schema), moved]).take(pa.array(order))
        return table.combine_chunks().to_batches()[0] if table.num_rows else batch.slice(0, 0)

    def _strings(self, batch: pa.RecordBatch) -> int:
        """How many licensed strings (not null) the batch's rows hold."""
        return sum(_count_strings(batch.column(name), node) for name, node in self.tree.items())

    def _unusable(self, row_documents: list[dict[str, Any]]) -> str | None:
        reasons = [
            f"{d['locator']}: {self.unusable[d['locator']]}" for d in row_documents if d["locator"] in self.unusable
        ]
        return "; ".join(reasons) if reasons else None

    def _kept(
        self, positions: list[int], rows: list[dict[str, Any]], where: str, schema: pa.Schema
    ) -> tuple[list[int], list[dict[str, Any]]]:
        """The touched rows (of config and split ``where``) re-anchored, with their positions; each one that cannot
        be is left out and named. Every probe is restored and checked in one batch."""
        anchored = []
        for position, row in zip(positions, rows, strict=True):
            record = f"{where} [{record_name(row.get(self.id_field))}]"
            unusable = self._unusable(row[SOURCE_DOCUMENTS])
            if unusable is not None:
                self._leave_out(row, record, unusable)
            else:
                anchored.append((position, record, self.anchoring.row(row, self.layout, record)))
        if not anchored:
            return [], []
        probes = pa.RecordBatch.from_pylist([outcome.probe for _, _, outcome in anchored], schema=schema)
        restored = self.restoring.restore(probes, self.tree, self.schema, where, self.id_field).to_pylist()
        kept_positions, kept = [], []
        for (position, record, outcome), probe in zip(anchored, restored, strict=True):
            problem = self.restored.problem(probe)
            if problem is not None:
                why = f"its re-anchored offsets do not hold under its record model: {problem}"
                self._leave_out(outcome.row, record, why)
                continue
            self.report.counts.update(outcome.counts)
            self.report.lost += outcome.lost
            kept_positions.append(position)
            kept.append(outcome.row)
        return kept_positions, kept

    def _leave_out(self, row: dict[str, Any], where: str, reason: str) -> None:
        """Name a record left out; its licensed strings are counted as left out."""
        self.report.left_out.append({"record": where, "reason": reason})
        self.report.counts["left_out"] += _row_strings(row, self.tree)


def _count_strings(array: Any, node: Any) -> int:
    """The licensed strings (recipes not null) under ``array``."""
    if isinstance(array, pa.ChunkedArray):
        return sum(_count_strings(chunk, node) for chunk in array.chunks)
    if not isinstance(node, (list, dict)):
        return len(array) - array.null_count
    if isinstance(node, list):
        return _count_strings(array.flatten(), node[0])
    return sum(_count_strings(array.field(name), child) for name, child in node.items())


def _row_strings(value: Any, node: Any) -> int:
    """The licensed strings (not null) of a stored row, or of a value inside it."""
    if value is None:
        return 0
    if isinstance(node, list):
        return sum(_row_strings(item, node[0]) for item in value)
    if isinstance(node, dict):
        return sum(_row_strings(value[name], child) for name, child in node.items())
    return 1


def _document_lines(maps: Maps) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [
        {
            "document": locator,
            "how": document.how,
            "characters": maps.originals[locator],
            "your_characters": document.user_characters,
            "blocks_confirmed": document.confirmed_blocks,
            "blocks_repaired": document.repaired_blocks,
            "blocks": document.blocks,
        }
        for locator, document in sorted(maps.maps.items())
    ]
    return lines + [{"document": locator, "unusable": reason} for locator, reason in sorted(maps.unusable.items())]
