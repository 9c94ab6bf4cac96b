"""Re-keying: each document of a text-free release found by its content in a notes table whose ids are not the
maintainer's (MIMIC re-exported into OMOP's ``NOTE`` table, another MIMIC version, a hospital's own export).

The evidence is what the release already carries, never a guess: first the sha256 the release records for the
document (the same text), then the sha256 of its normalised text (``anchors.parquet``: the same text but for
CRLF line ends, a byte-order mark, trailing spaces or the Unicode form), then its block hashes (a copy that
was edited: the note's first or last block at its place picks the candidates, and a note is taken when at
least half of its blocks are found whole in it, in order (``reanchor/relocate.py``), and every other candidate
holds a quarter of them fewer at least). A document that two notes match about as well, or none, is named
and left out, never mapped by chance; a note is given to one document at most.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from clinical_corpora.builders.rehydrate.reanchor.relocate import blocks_found
from clinical_corpora.builders.rehydrate.restoring import RehydrateError
from clinical_corpora.builders.sources.mimic.csv_files import read_header
from clinical_corpora.builders.sources.mimic.table_scan import DEFAULT_BLOCK_SIZE, TableLayout, scan_table
from clinical_corpora.builders.text_free.anchors import Anchor, block_hash, block_ranges, hash_key
from clinical_corpora.builders.text_free.normalise import normalise
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.locators import text_sha256

LAYOUTS: dict[str, tuple[str, str]] = {
    "MIMIC-III NOTEEVENTS": ("ROW_ID", "TEXT"),
    "MIMIC-IV note": ("note_id", "text"),
    "OMOP NOTE": ("note_id", "note_text"),
}
"""The notes tables whose id and text columns are known: (id column, text column)."""

REKEY_COLUMNS = ("document", "note_id", "evidence")
MIN_SHARE = 0.5
"""The least share of a document's blocks a note must hold to be taken for it by its blocks."""
MARGIN = 0.25
"""How much more of a document's blocks its note must hold than any other note (notes written from one template
share blocks; a note within this margin of the best makes the document ambiguous)."""


@dataclass(frozen=True)
class NotesTable:
    """A user's notes table: id → text, read from ``path``."""

    path: Path
    notes: dict[str, str]


@dataclass
class Rekeyed:
    """Each document of the release (its locator) mapped to a note of the table, with the evidence, or named
    with why it was not."""

    mapped: dict[str, tuple[str, str]] = field(default_factory=dict)
    unmapped: dict[str, str] = field(default_factory=dict)

    def texts(self, table: NotesTable) -> dict[str, str]:
        """The documents' texts as the table holds them, by the release's locators."""
        return {locator: table.notes[note] for locator, (note, _) in self.mapped.items()}

    def write_csv(self, path: Path) -> None:
        """``rekey.csv``: one line per document, its new id and evidence (empty id: not mapped, and why)."""
        with path.open("w", encoding="utf-8", newline="") as stream:
            writer = csv.writer(stream)
            writer.writerow(REKEY_COLUMNS)
            for locator in sorted({*self.mapped, *self.unmapped}):
                note, evidence = self.mapped.get(locator, ("", self.unmapped.get(locator, "")))
                writer.writerow((locator, note, evidence))


def read_notes_table(path: Path, id_column: str | None, text_column: str | None) -> NotesTable:
    """The notes of a CSV (plain or gzip) or parquet table, by its id column; the columns named, or those of a
    known layout (:data:`LAYOUTS`). A missing column or a repeated id is an error naming the file."""
    columns = pq.read_schema(path).names if path.suffix == ".parquet" else read_header(path)
    id_name, text_name = _columns(path, columns, id_column, text_column)
    notes: dict[str, str] = {}
    for note_id, text in _rows(path, columns, id_name, text_name):
        if note_id in notes:
            raise SourceError(path, f"the id {note_id!r} of column {id_name} is given to two notes")
        notes[note_id] = text
    return NotesTable(path, notes)


def _columns(path: Path, columns: list[str], id_column: str | None, text_column: str | None) -> tuple[str, str]:
    if id_column is None and text_column is None:
        for id_name, text_name in LAYOUTS.values():
            if {id_name, text_name} <= set(columns):
                return id_name, text_name
        known = "; ".join(f"{name}: {a}, {b}" for name, (a, b) in LAYOUTS.items())
        raise SourceError(path, f"no known notes layout ({known}): name the columns with --id-column and --text-column")
    missing = [name for name in (id_column, text_column) if name is None or name not in columns]
    if missing or id_column is None or text_column is None:
        raise SourceError(path, f"expected the columns {id_column} and {text_column}; it has {', '.join(columns)}")
    return id_column, text_column


def _rows(path: Path, columns: list[str], id_name: str, text_name: str) -> list[tuple[str, str]]:
    if path.suffix == ".parquet":
        try:
            table = pq.read_table(path, columns=[id_name, text_name])
        except (OSError, pa.ArrowException) as error:
            raise SourceError(path, f"not a readable parquet file: {error}") from None
        return [(str(row[id_name]), row[text_name] or "") for row in table.to_pylist()]
    layout = TableLayout(tuple(columns), id_name, lambda row: (row.values[id_name], row.values[text_name] or ""))
    return list(scan_table(path, layout, None, {}, DEFAULT_BLOCK_SIZE))


def rekey(wanted: Mapping[str, str], anchors: Mapping[str, Anchor], table: NotesTable) -> Rekeyed:
    """Each wanted document (locator → recorded sha256) mapped to the one note of ``table`` its evidence points
    to (see the module docstring)."""
    normalised_texts = {note: normalise(text).text for note, text in table.notes.items()}
    by_sha: dict[str, list[str]] = defaultdict(list)
    by_normalised: dict[str, list[str]] = defaultdict(list)
    for note, text in table.notes.items():
        by_sha[text_sha256(text)].append(note)
        by_normalised[text_sha256(normalised_texts[note])].append(note)
    rekeyed = Rekeyed()
    for locator, sha256 in wanted.items():
        anchor = anchors.get(locator)
        normalised = anchor.normalised_sha256.hex() if anchor and anchor.normalised_sha256 else sha256
        for evidence, candidates in (
            ("sha256", by_sha.get(sha256, [])),
            ("normalised sha256", by_normalised.get(normalised, [])),
        ):
            if candidates:
                _decide(rekeyed, locator, candidates, evidence)
                break
    _by_blocks(rekeyed, wanted, anchors, normalised_texts)
    _one_document_per_note(rekeyed)
    return rekeyed


def _decide(rekeyed: Rekeyed, locator: str, candidates: list[str], evidence: str) -> None:
    if len(candidates) == 1:
        rekeyed.mapped[locator] = (candidates[0], evidence)
    else:
        shown = ", ".join(sorted(candidates)[:5])
        rekeyed.unmapped[locator] = f"ambiguous: {len(candidates)} notes have its {evidence} ({shown})"


def _by_blocks(
    rekeyed: Rekeyed, wanted: Mapping[str, str], anchors: Mapping[str, Anchor], normalised: Mapping[str, str]
) -> None:
    """The documents no hash found, looked for among the notes no hash took (their ``normalised`` texts), by
    their block hashes."""
    taken = {note for note, _ in rekeyed.mapped.values()}
    free = {note: text for note, text in normalised.items() if note not in taken}
    for locator, sha256 in wanted.items():
        if locator in rekeyed.mapped or locator in rekeyed.unmapped:
            continue
        anchor = anchors.get(locator)
        if anchor is None or not anchor.block_hashes:
            rekeyed.unmapped[locator] = "not found: no note has its sha256 and it has no block hashes to look for"
            continue
        sought = _Sought.of(anchor, sha256)
        aligned = {note: sought.aligned(text) for note, text in free.items() if sought.ends_match(text)}
        shortlist = _shortlist(aligned)
        rekeyed_by_share(rekeyed, locator, {note: _confirmed_share(anchor, sha256, free[note]) for note in shortlist})


def _shortlist(aligned: dict[str, int]) -> list[str]:
    """The notes holding at least half as many of a document's blocks at their place as the note holding most,
    which the whole map then scores (notes of one template can all start alike; a note whose edit moved half
    of its blocks still holds the other half at their place)."""
    most = max(aligned.values(), default=0)
    return [note for note, count in aligned.items() if count > 0 and 2 * count >= most]


def rekeyed_by_share(rekeyed: Rekeyed, locator: str, scores: dict[str, float]) -> None:
    """The document mapped to the note holding the largest share of its blocks, when that is at least
    :data:`MIN_SHARE` and no other note comes within :data:`MARGIN` of it; named otherwise."""
    ranked = sorted(scores.items(), key=lambda item: -item[1])
    if not ranked or ranked[0][1] < MIN_SHARE:
        rekeyed.unmapped[locator] = "not found: no note has its sha256 or half of its blocks"
        return
    (note, share), runner_up = ranked[0], ranked[1][1] if len(ranked) > 1 else 0.0
    if share - runner_up < MARGIN:
        close = sorted(other for other, other_share in ranked if share - other_share < MARGIN)
        rekeyed.unmapped[locator] = (
            f"ambiguous: {len(close)} notes hold {runner_up:.0%} to {share:.0%} of its blocks ({', '.join(close[:5])})"
        )
        return
    rekeyed.mapped[locator] = (note, f"blocks: {share:.0%} of its blocks found, the next note {runner_up:.0%}")


@dataclass(frozen=True)
class _Sought:
    """One document looked for by its blocks: its anchor, hash key and block ranges, worked out once."""

    anchor: Anchor
    key: bytes
    blocks: list[tuple[int, int]]

    @classmethod
    def of(cls, anchor: Anchor, sha256: str) -> _Sought:
        return cls(anchor, hash_key(sha256), block_ranges(anchor.normalised_characters, anchor.block))

    def ends_match(self, normalised: str) -> bool:
        """Whether the note's first block, or its last, is the document's at its place (cheap: two hashes)."""
        (first_start, first_end), (last_start, last_end) = self.blocks[0], self.blocks[-1]
        size = last_end - last_start
        tail = normalised[len(normalised) - size :] if len(normalised) >= size else ""
        return block_hash(normalised[first_start:first_end], self.key) == self.anchor.hash_of(0) or (
            block_hash(tail, self.key) == self.anchor.hash_of(len(self.blocks) - 1)
        )

    def aligned(self, normalised: str) -> int:
        """How many of the document's blocks the note holds at their place, counted from its start or from its
        end (the more of the two): an edit moves only the blocks after it, or before it."""
        shift = len(normalised) - self.anchor.normalised_characters
        counts = [0, 0]
        for index, (start, end) in enumerate(self.blocks):
            for side, at in enumerate((start, start + shift)):
                if 0 <= at and at + end - start <= len(normalised):
                    counts[side] += block_hash(normalised[at : at + end - start], self.key) == self.anchor.hash_of(
                        index
                    )
        return max(counts)


def _confirmed_share(anchor: Anchor, sha256: str, normalised: str) -> float:
    found, blocks = blocks_found(anchor, sha256, normalised)
    return found / blocks if blocks else 0.0


def _one_document_per_note(rekeyed: Rekeyed) -> None:
    """A note two documents were mapped to is given to neither: both named."""
    documents: dict[str, list[str]] = defaultdict(list)
    for locator, (note, _) in rekeyed.mapped.items():
        documents[note].append(locator)
    for note, locators in documents.items():
        if len(locators) > 1:
            for locator in locators:
                del rekeyed.mapped[locator]
                rekeyed.unmapped[locator] = (
                    f"ambiguous: note {note} is also the text of {len(locators) - 1} other document(s)"
                )


def unmapped_error(rekeyed: Rekeyed) -> RehydrateError:
    """The error when no document was found in the table."""
    return RehydrateError(
        f"no document of the release was found in the notes table ({len(rekeyed.unmapped)} named in rekey.csv)"
    )
