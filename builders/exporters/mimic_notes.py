"""Write MIMIC-III ``NOTEEVENTS.csv.gz`` rows (the columns of the full release, RFC 4180, gzip without a
timestamp so the same rows give the same bytes), as ``builders.sources.mimic.notes`` reads them."""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from clinical_corpora.builders.sources.mimic.notes import NOTEEVENTS_COLUMNS


@dataclass(frozen=True)
class NoteEventRow:
    """The NOTEEVENTS fields a release keeps; the other columns are written empty."""

    row_id: int
    subject_id: int
    charttime: str
    """``YYYY-MM-DD HH:MM:SS`` (CHARTDATE is its date)."""
    category: str
    description: str
    text: str


def write_noteevents(path: Path, rows: Iterable[NoteEventRow]) -> int:
    """Write ``path`` (gzip when it ends in ``.gz``); returns the number of rows."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(path, "wb") as raw:
        binary = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if path.suffix == ".gz" else raw
        with binary, io.TextIOWrapper(binary, encoding="utf-8", newline="") as stream:
            writer = csv.writer(stream, lineterminator="\n")
            writer.writerow(NOTEEVENTS_COLUMNS)
            for row in rows:
                chartdate = row.charttime.split(" ")[0]
                writer.writerow(
                    [row.row_id, row.subject_id, "", chartdate, row.charttime, "", row.category, row.description]
                    + ["", "", row.text]
                )
                count += 1
    return count
