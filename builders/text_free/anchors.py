"""Anchors: what a text-free release records of each source document so that ``clincorp rehydrate
--re-anchor`` can find its spans again in a copy that differs, without holding any of its text.

One row per document in ``anchors.parquet`` (beside the text-free release's manifest, listed in its outputs
and read by the leak gate like every other file):

- ``characters``: the length of the maintainer's text;
- its normalisation (``builders/text_free/normalise.py``): the sha256 of the normalised text (null when the
  text is its own normalised form: then it is the recorded sha256), its length,
  the edits as (start, end, normalised length) triples (positions only) and how many of each kind there were
  (BOM, CRLF, trailing whitespace, non-NFC runs), so a copy differing only in those ways maps exactly;
- block signatures of the normalised text: a keyed BLAKE2b hash of :data:`HASH_BYTES` bytes of each block of
  :data:`BLOCK` characters from the start, the last block taking the rest (up to ``2 * BLOCK - 1``
  characters), matched against the user's copy as rsync does. A text shorter than a block has none.

Why this cannot leak text. A block is :data:`BLOCK` characters, longer than the leak gate's limit
(:data:`~builders.text_free.layout.LEAK_LIMIT`), so a matching hash only confirms a run of text the
holder of a copy already has; it says nothing of a text one does not hold, except by guessing it whole.
Guessing is the one attack: hashing candidate strings (boilerplate such as "Discharge Instructions: Please
call your doctor") to learn which notes hold them, or a guessed phrase's next words. Three things make it
costly: the hash is keyed with the document's own sha256 (already in the release), so no table of hashes
computed once serves every document or every release; a block starts at a fixed multiple of
:data:`BLOCK`, so a guess must be aligned too; and blocks do not overlap, so a block confirmed by a guess
helps with no other (blocks overlapping by all but a few characters would let a guessed block be extended a
few characters at a time). What remains is confirming a whole, aligned, guessed block of boilerplate, text
that many notes share and the guesser already has. Repairing a block (``repair.py``) is the same guess made
small: a copy holding all of a block but one character, at its place, learns which character that is.

The hash is truncated to 48 bits: a false match of a block at the one position tried first has odds of
2^-48, and against every position of a 100,000-character copy about 2^-31; found blocks must also keep the
maintainer's order, and a span is relocated only when every character it covers is confirmed.

Read as untrusted input: every number is checked (bounds, edits in order inside the text, the hashes' size
against the normalised length) and a bad row is an error naming the file and the locator.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from clinical_corpora.builders.text_free.layout import LEAK_LIMIT
from clinical_corpora.builders.text_free.normalise import Edit, EditCounts, normalise, normalised_length
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.locators import text_sha256

BLOCK = 32
HASH_BYTES = 6
MAX_BLOCK = 1 << 16
MAX_CHARACTERS = 2**31 - 1

SCHEMA = pa.schema(
    [
        ("locator", pa.string()),
        ("characters", pa.int32()),
        ("normalised_characters", pa.int32()),
        ("normalised_sha256", pa.binary(32)),
        ("bom", pa.bool_()),
        ("crlf", pa.int32()),
        ("trailing_whitespace", pa.int32()),
        ("unicode", pa.int32()),
        ("edits", pa.list_(pa.int32())),
        ("block", pa.int32()),
        ("block_hashes", pa.binary()),
    ]
)

assert BLOCK > LEAK_LIMIT, "a block hash must confirm more than the leak gate lets a release hold"


@dataclass(frozen=True)
class Anchor:
    """One document's anchors (see the module docstring)."""

    locator: str
    characters: int
    normalised_characters: int
    normalised_sha256: bytes | None
    """None: the text is normalised already, its normalised sha256 is the one the release records."""
    counts: EditCounts
    edits: list[Edit]
    block: int
    block_hashes: bytes

    def hash_of(self, index: int) -> bytes:
        return self.block_hashes[index * HASH_BYTES : (index + 1) * HASH_BYTES]


class AnchorError(ClincorpError):
    """anchors.parquet is damaged or forged."""


def block_ranges(length: int, block: int) -> list[tuple[int, int]]:
    """The [start, end) of each block of a text of ``length`` characters: ``block`` characters each from the
    start, the last one taking the rest (none when the text is shorter than a block)."""
    ranges = [(start, start + block) for start in range(0, length - block + 1, block)]
    if ranges:
        ranges[-1] = (ranges[-1][0], length)
    return ranges


def block_hash(text: str, key: bytes) -> bytes:
    """The keyed, truncated hash of one block."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=HASH_BYTES, key=key).digest()


def hash_key(sha256: str) -> bytes:
    """A document's key: its recorded sha256 (different for every document, known to whoever rehydrates)."""
    return bytes.fromhex(sha256)


def make_anchor(locator: str, text: str, sha256: str) -> Anchor:
    normalised = normalise(text)
    key = hash_key(sha256)
    hashes = b"".join(
        block_hash(normalised.text[start:end], key) for start, end in block_ranges(len(normalised.text), BLOCK)
    )
    return Anchor(
        locator,
        len(text),
        len(normalised.text),
        None if normalised.text == text else bytes.fromhex(text_sha256(normalised.text)),
        normalised.counts,
        normalised.edits,
        BLOCK,
        hashes,
    )


def write_anchors(path: Path, documents: Iterable[tuple[str, str, str]]) -> None:
    """anchors.parquet for (locator, text, sha256) triples, sorted by locator."""
    anchors = [make_anchor(*document) for document in sorted(documents)]
    columns = [
        [a.locator for a in anchors],
        [a.characters for a in anchors],
        [a.normalised_characters for a in anchors],
        [a.normalised_sha256 for a in anchors],
        [a.counts.bom for a in anchors],
        [a.counts.crlf for a in anchors],
        [a.counts.trailing_whitespace for a in anchors],
        [a.counts.unicode for a in anchors],
        [[number for edit in a.edits for number in edit] for a in anchors],
        [a.block for a in anchors],
        [a.block_hashes for a in anchors],
    ]
    table = pa.Table.from_arrays(
        [pa.array(values, field.type) for values, field in zip(columns, SCHEMA, strict=True)], schema=SCHEMA
    )
    pq.write_table(table, path, compression="zstd")


def read_anchors(path: Path, wanted: Collection[str]) -> dict[str, Anchor]:
    """The checked anchors of the ``wanted`` locators (others are not read past their locator)."""
    try:
        parquet = pq.ParquetFile(path)
    except (OSError, pa.ArrowInvalid) as error:
        raise AnchorError(f"{path}: not a readable parquet file ({error})") from None
    if not parquet.schema_arrow.equals(SCHEMA, check_metadata=False):
        raise AnchorError(f"{path}: its columns are not those of an anchors file: the release is damaged or forged")
    anchors: dict[str, Anchor] = {}
    for batch in parquet.iter_batches(batch_size=4096):
        for row in batch.filter(pc.is_in(batch.column("locator"), pa.array(sorted(wanted), pa.string()))).to_pylist():
            anchor = _checked(row, path)
            if anchor.locator in anchors:
                raise AnchorError(f"{path}: {anchor.locator} is listed twice: the release is damaged or forged")
            anchors[anchor.locator] = anchor
    return anchors


def _checked(row: dict[str, object], path: Path) -> Anchor:
    """The anchor of one row, every number checked; an AnchorError naming the locator otherwise."""
    locator = str(row["locator"])

    def fail(problem: str) -> AnchorError:
        return AnchorError(f"{path}, {locator}: {problem}: the release is damaged or forged")

    numbers = [row[name] for name in ("characters", "normalised_characters", "crlf", "trailing_whitespace", "unicode")]
    if any(not isinstance(number, int) or not 0 <= number <= MAX_CHARACTERS for number in numbers):
        raise fail("a count is missing or out of range")
    characters, normalised_characters = int(row["characters"]), int(row["normalised_characters"])  # type: ignore[call-overload]
    block = row["block"]
    if not isinstance(block, int) or not LEAK_LIMIT < block <= MAX_BLOCK:
        raise fail(f"block size {block!r} is not between {LEAK_LIMIT + 1} and {MAX_BLOCK}")
    flat = row["edits"]
    if not isinstance(flat, list) or len(flat) % 3 or any(not isinstance(n, int) for n in flat):
        raise fail("edits are not (start, end, length) triples")
    edits = [(flat[i], flat[i + 1], flat[i + 2]) for i in range(0, len(flat), 3)]
    position = 0
    for start, end, replaced in edits:
        if not position <= start <= end <= characters or replaced < 0:
            raise fail(f"edit ({start}, {end}) is out of order or outside the {characters} characters")
        position = end
    if normalised_length(characters, edits) != normalised_characters:
        raise fail("its edits do not give its normalised length")
    hashes, digest = row["block_hashes"], row["normalised_sha256"]
    if not isinstance(hashes, bytes) or len(hashes) != HASH_BYTES * len(block_ranges(normalised_characters, block)):
        raise fail("its block hashes do not cover its normalised text")
    if digest is not None and (not isinstance(digest, bytes) or len(digest) != 32):
        raise fail("its normalised sha256 is not 32 bytes")
    counts = EditCounts(bool(row["bom"]), *(int(n) for n in numbers[2:]))  # type: ignore[call-overload]
    return Anchor(locator, characters, normalised_characters, digest, counts, edits, block, hashes)
