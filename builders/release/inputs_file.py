"""``inputs.jsonl``: the input files a release was built from, one line each (source, file, sha256, bytes), and
the per-source summary of them manifest.json keeps."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from clinical_corpora.core.release_manifest import InputSummary
from clinical_corpora.core.release_records import INPUTS_FILE

INPUT_FIELDS = pa.schema(
    [("source", pa.string()), ("file", pa.string()), ("sha256", pa.string()), ("bytes", pa.int64())]
)
"""What each line of ``inputs.jsonl`` holds."""


def summarise_inputs(inputs: pa.Table, invented: list[str]) -> dict[str, InputSummary]:
    """Per source (in order of first appearance): whether it is the invented sample, its file count, bytes and
    one aggregate sha256 (of its ``sha256  file`` lines in file order, as sha256sum prints them), so the
    manifest stays small. ``inputs`` has the columns of :data:`INPUT_FIELDS`."""
    in_file_order = inputs.sort_by("file")
    summary = {}
    for source in pc.unique(inputs["source"]).to_pylist():
        items = in_file_order.filter(pc.equal(in_file_order["source"], source))
        lines = pc.binary_join_element_wise(items["sha256"], items["file"], "  ").combine_chunks()
        listing = pc.binary_join(pa.ListArray.from_arrays(pa.array([0, len(lines)], pa.int32()), lines), "\n")
        summary[source] = InputSummary(
            sample=source in invented,
            files=items.num_rows,
            bytes=pc.sum(items["bytes"]).as_py(),
            sha256=hashlib.sha256(f"{listing[0].as_py()}\n".encode()).hexdigest(),
        )
    return summary


def write_inputs_file(folder: Path, inputs: list[dict[str, Any]]) -> None:
    """``inputs.jsonl``: one line per input file (source, file, sha256, bytes)."""
    (folder / INPUTS_FILE).write_text(
        "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in inputs), encoding="utf-8"
    )


def read_inputs_file(path: Path) -> pa.Table:
    """The items of an ``inputs.jsonl`` as a table of :data:`INPUT_FIELDS`, parsed column-wise: a
    ValueError unless each non-blank line holds one JSON object with a string source, file and sha256 and an
    integer bytes, and nothing else."""
    data = path.read_bytes()
    lines = sum(1 for line in data.split(b"\n") if line.strip())
    if not lines:
        return INPUT_FIELDS.empty_table()
    options = pa_json.ParseOptions(explicit_schema=INPUT_FIELDS, unexpected_field_behavior="error")
    table = pa_json.read_json(io.BytesIO(data), parse_options=options)
    if table.num_rows != lines:
        raise ValueError(f"{table.num_rows} JSON objects on {lines} lines")
    missing = [name for name in INPUT_FIELDS.names if table[name].null_count]
    if missing:
        raise ValueError(f"a line lacks {missing[0]}")
    return table


def inputs_problems(folder: Path, summary: dict[str, InputSummary]) -> list[str]:
    """How ``inputs.jsonl`` disagrees with the per-source summary in manifest.json (empty when it agrees)."""
    path = folder / INPUTS_FILE
    if not path.is_file():
        return [f"{INPUTS_FILE}: missing"]
    try:
        items = read_inputs_file(path)
        listed = summarise_inputs(items, [name for name, entry in summary.items() if entry.sample])
    except (OSError, ValueError, TypeError, pa.ArrowException) as error:
        return [f"{INPUTS_FILE}: not one JSON object with source, file, sha256 and bytes per line ({error})"]
    problems = []
    for source in sorted(set(summary) | set(listed)):
        if source not in listed:
            problems.append(f"{INPUTS_FILE}: no files of source {source!r}, which manifest.json lists")
        elif source not in summary:
            problems.append(f"{INPUTS_FILE}: source {source!r} is not in manifest.json")
        else:
            problems += [
                f"{INPUTS_FILE}: source {source!r} {key} is {getattr(listed[source], key)}, "
                f"manifest.json says {getattr(summary[source], key)}"
                for key in ("files", "bytes", "sha256")
                if getattr(listed[source], key) != getattr(summary[source], key)
            ]
    return problems
