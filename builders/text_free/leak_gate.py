"""The leak gate of a text-free release: no file of it holds a run of more than :data:`LEAK_LIMIT`
characters of a source document.

Every file is read for what a reader of it would see: a parquet file's string values and its schema
metadata, any other file's text. Thirty characters: a clinical sentence is longer (a leaked sentence, or
half of one, fails), while what a text-free release legitimately holds stays shorter: ids and locators,
label names (excluded anyway), the short literals of recipes, and the full card's statistics tables of
frequent terms ("left pleural effusion", 21 characters). Runs of no letter (dates, numbers) are not counted.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from clinical_corpora.builders.text_free.layout import LEAK_LIMIT
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.validation.gates import GateResult
from clinical_corpora.validation.leak import SEED, ReleaseText, longest_shared_run


def leak_gate(folder: Path, documents: Collection[tuple[str, str]], ignored: Collection[str] = ()) -> GateResult:
    """The gate over every file of ``folder``: passes when the longest shared run is at most LEAK_LIMIT."""
    release = ReleaseText(text for path in _files(folder) for text in sorted(set(file_strings(path))))
    found = longest_shared_run(documents, release, ignored)
    length = found.length if found else 0
    observed: dict[str, Any] = {"longest_shared_run": length, "measured_from": SEED, "limit": LEAK_LIMIT}
    if found is not None:
        observed |= {"document": found.locator, "offset": found.offset}
    gate = GateResult(
        gate="leak",
        success=length <= LEAK_LIMIT,
        observed=observed,
        expected=f"no run of more than {LEAK_LIMIT} characters of a source document in any file "
        "(runs without a letter and label names aside; runs shorter than "
        f"{SEED} are not measured and count as 0)",
    )
    if not gate.success and found is not None:
        gate.details.append(
            {
                "problem": f"{length} characters of document {found.locator} from offset {found.offset} "
                f"appear in the release (in {', '.join(_holding(folder, found, documents)) or 'its files'})"
            }
        )
    return gate


def _holding(folder: Path, found: Any, documents: Collection[tuple[str, str]]) -> list[str]:
    """The files holding the leaked run (read again: only a failed gate asks)."""
    text = next((text for locator, text in documents if locator == found.locator), None)
    if text is None:
        return []
    run = text[found.offset : found.offset + found.length]
    return [
        path.relative_to(folder).as_posix()
        for path in _files(folder)
        if any(run in string for string in file_strings(path))
    ]


def _files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file())


def file_strings(path: Path) -> Iterator[str]:
    """What a reader of the file sees: a parquet file's string values (each batch's distinct ones) and
    metadata, else its text."""
    if path.suffix == ".parquet":
        yield from parquet_strings(path)
        return
    try:
        yield path.read_bytes().decode("utf-8", "replace")
    except OSError as error:
        raise ClincorpError(f"cannot read {path}: {error.strerror or error}") from None


def parquet_strings(path: Path) -> Iterator[str]:
    """A parquet file's schema metadata values and the distinct string values of each batch's fields (those
    under null values too)."""
    parquet = pq.ParquetFile(path)
    for value in (parquet.schema_arrow.metadata or {}).values():
        yield value.decode("utf-8", "replace")
    for batch in parquet.iter_batches(batch_size=4096):
        for column in batch.columns:
            yield from _strings(column)


def _strings(array: pa.Array) -> Iterator[str]:
    kind = array.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        yield from (value for value in pc.unique(array).to_pylist() if value is not None)
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        yield from _strings(array.flatten())
    elif pa.types.is_struct(kind):
        for index in range(kind.num_fields):
            yield from _strings(array.field(index))
