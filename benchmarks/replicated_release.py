"""A sample release made larger: its records copied under new ids, written as a release folder of some configs.

The round-trip tests release ten times each sample this way; ``benchmarks/baselines.py`` runs the baselines on it.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from copy import deepcopy
from pathlib import Path
from typing import Any

import pyarrow as pa

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.writer import SplitWriter
from clinical_corpora.core.release_manifest import OutputFile, read_manifest, write_manifest
from clinical_corpora.schemas.features import row_encoder

Renamer = Callable[[str, dict[str, Any], int], dict[str, Any]]


def _sdoh(config: str, note: dict[str, Any], copy: int) -> dict[str, Any]:
    return {**note, "id": f"{note['id']}x{copy}"}


def _snomed_el(config: str, note: dict[str, Any], copy: int) -> dict[str, Any]:
    return {**note, "note_id": f"{note['note_id']}-x{copy}"}


def _odie_anaphora(config: str, note: dict[str, Any], copy: int) -> dict[str, Any]:
    return {**note, "id": f"{note['id']}x{copy}"}


def _rad_coref(config: str, patient: dict[str, Any], copy: int) -> dict[str, Any]:
    """New SUBJECT_ID and ROW_IDs (integers, as MIMIC-III has them), mention ids and chain ids."""
    row_ids = {r["row_id"]: r["row_id"] + copy * 10_000_000 for r in patient["reports"]}
    mention_ids = {
        m["id"]: f"{row_ids[int(m['id'].partition('-')[0])]}-{m['id'].partition('-')[2]}" for m in patient["mentions"]
    }
    return {
        "patient_id": str(int(patient["patient_id"]) + copy * 1_000_000),
        "reports": [{**r, "row_id": row_ids[r["row_id"]]} for r in patient["reports"]],
        "mentions": [{**m, "id": mention_ids[m["id"]]} for m in patient["mentions"]],
        "chains": [
            {"id": f"{c['id']}x{copy}", "mention_ids": [mention_ids[i] for i in c["mention_ids"]]}
            for c in patient["chains"]
        ],
    }


def _clicr(config: str, row: dict[str, Any], copy: int) -> dict[str, Any]:
    if config == "clicr_documents":
        return {**row, "id": f"{row['id']}x{copy}"}
    case, _, number = row["id"].rpartition(".")
    return {**row, "id": f"{case}x{copy}.{number}", "document_id": f"{row['document_id']}x{copy}"}


RENAMERS: dict[str, Renamer] = {
    "sdoh": _sdoh,
    "snomed_el": _snomed_el,
    "odie_anaphora": _odie_anaphora,
    "rad_coref": _rad_coref,
    "clicr": _clicr,
}


def replicated(
    release: Path, configs: tuple[str, ...], renamer: Renamer, out: Path, copies: int, once: tuple[str, ...] = ()
) -> Path:
    """A release folder holding ``configs`` of ``release`` with every record ``copies`` times, the first copy
    as it was and the others renamed, and the configs ``once`` as they are (enough for a command that reads only
    these configs)."""
    view = ReleaseView(release)
    out.mkdir(parents=True)
    shutil.copy(release / "validation.json", out / "validation.json")
    for config in (*configs, *once):
        features = view.features(config)
        encode = row_encoder(features)
        for split in view.splits(config):
            rows = [row for _, row in view.rows(config, split)]
            writer = SplitWriter(out / "data" / config, split, features)
            for copy in range(1 if config in once else copies):
                encoded = [encode(deepcopy(row if copy == 0 else renamer(config, row, copy))) for row in rows]
                writer.write(pa.RecordBatch.from_pylist(encoded, schema=features.arrow_schema))
            writer.close()
    names = sorted(path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file())
    outputs = [
        OutputFile(
            file=name,
            sha256=hashlib.sha256((out / name).read_bytes()).hexdigest(),
            rows=ReleaseView.rows_in(out / name) if name.endswith(".parquet") else None,
        )
        for name in names
    ]
    write_manifest(out, read_manifest(release).model_copy(update={"outputs": outputs}))  # its configs only
    return out
