"""Perturbed copies of source documents, as a user's copy may differ from the maintainer's, with where each
original character went (so a test can tell a relocated span from a wrong one).

Each perturbed document gets, in this order: one character inside a span re-encoded (its NFD form when it
has one, else the letter followed by a combining acute accent), one to three characters inserted or deleted
outside every span, spaces added at the end of one or two lines, and, each with probability one half and one
quarter, CRLF line ends and a byte-order mark.

Normalisation undoes all of it but two things: a deleted character, and a letter given an accent (an ASCII
letter has no other encoding, so "re-encoding" it makes another letter, as a typo fixed between two versions
of a note does; a letter with no accented form in NFC, such as ``d``, keeps a combining accent after it).
A span covering a deleted or replaced character, or the letter and the character after it when an accent
stays between them, has another text in the copy, so it cannot be recovered and must be named lost.
"""

from __future__ import annotations

import json
import random
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from pydantic import BaseModel

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.text_free.normalise import normalise
from clinical_corpora.schemas.licensed import LEAF, SOURCE_DOCUMENTS, licensed_tree

Piece = tuple[str, int]
"""A piece of the perturbed text and the original position of the character it copies (-1: new)."""


@dataclass(frozen=True)
class Perturbed:
    text: str
    moved: np.ndarray
    """The position in ``text`` of each original character (-1: deleted or re-encoded)."""
    changed: frozenset[int]
    """The original characters the copy no longer holds, even once normalised."""
    accented: frozenset[int]
    """The original characters the copy holds with a combining accent after them, even once normalised."""
    edits: list[str]

    def alters(self, start: int, end: int) -> bool:
        """Whether the copy no longer holds ``[start, end)`` of the original as it was."""
        return any(start <= at < end for at in self.changed) or any(start <= at < end - 1 for at in self.accented)


def perturb(text: str, spans: Sequence[tuple[int, int]], rng: random.Random) -> Perturbed:
    """A perturbed copy of ``text``; ``spans`` are the [start, end) ranges no insertion or deletion touches."""
    pieces: list[Piece] = [(character, index) for index, character in enumerate(text)]
    inside = np.zeros(len(text) + 1, dtype=bool)
    for start, end in spans:
        inside[start:end] = True
    changed: set[int] = set()
    accented: set[int] = set()
    edits = [_re_encode(pieces, spans, rng, changed, accented)]
    for _ in range(rng.randint(1, 3)):
        edits.append(_insert_or_delete(pieces, inside, rng, changed))
    edits += _trailing_spaces(pieces, inside, rng)
    if rng.random() < 0.5:
        pieces = [("\r\n", index) if character == "\n" else (character, index) for character, index in pieces]
        edits.append("CRLF line ends")
    if rng.random() < 0.25:
        pieces.insert(0, ("\ufeff", -1))
        edits.append("byte-order mark")
    return _joined(pieces, len(text), (frozenset(changed), frozenset(accented)), [edit for edit in edits if edit])


def _re_encode(
    pieces: list[Piece], spans: Sequence[tuple[int, int]], rng: random.Random, changed: set[int], accented: set[int]
) -> str:
    letters = [p for start, end in spans for p in range(start, end) if pieces[p][0].isalpha()]
    if not letters:
        return ""
    position = rng.choice(letters)
    character = pieces[position][0]
    decomposed = unicodedata.normalize("NFD", character)
    replacement = decomposed if decomposed != character else character + "\u0301"
    composed = unicodedata.normalize("NFC", replacement)
    if composed.startswith(character) and composed != character:
        accented.add(position)
    elif composed != character:
        changed.add(position)
    pieces[position] = (replacement, -1)
    return f"re-encoded {character!r} at {position}"


def _insert_or_delete(pieces: list[Piece], inside: np.ndarray, rng: random.Random, changed: set[int]) -> str:
    """Insert a character before, or delete, an original character outside every span."""
    candidates = [at for at, (_, index) in enumerate(pieces) if index >= 0 and not inside[index]]
    if not candidates:
        return ""
    at = rng.choice(candidates)
    if rng.random() < 0.5:  # before a character outside every span: never strictly inside one
        pieces.insert(at, (rng.choice("xqz ,."), -1))
        return f"inserted before {pieces[at + 1][1]}"
    original = pieces[at][1]
    changed.add(original)
    del pieces[at]
    return f"deleted {original}"


def _trailing_spaces(pieces: list[Piece], inside: np.ndarray, rng: random.Random) -> list[str]:
    line_ends = [at for at, (character, index) in enumerate(pieces) if character == "\n" and not inside[index]]
    chosen = rng.sample(line_ends, min(len(line_ends), rng.randint(1, 2)))
    for at in sorted(chosen, reverse=True):
        pieces.insert(at, ("  ", -1))
    return [f"trailing spaces on {len(chosen)} lines"] if chosen else []


def _joined(
    pieces: list[Piece], length: int, changes: tuple[frozenset[int], frozenset[int]], edits: list[str]
) -> Perturbed:
    moved = np.full(length, -1, dtype=np.int64)
    position = 0
    parts = []
    for piece, index in pieces:
        if index >= 0:
            moved[index] = position + len(piece) - 1  # "\r\n" copies "\n" at its end
        parts.append(piece)
        position += len(piece)
    return Perturbed("".join(parts), moved, *changes, edits)


SENTENCE = "Seen with family today; questions answered and plan reviewed with nursing staff."
"""The sentence a drifted copy gains (80 characters)."""

DRIFT_RATES = (0.10, 0.02, 0.01)
"""How often a drifted document gains :data:`SENTENCE` outside every span, has one word inside a span
changed, and is truncated to half its length."""


def drift(
    text: str, spans: Sequence[tuple[int, int]], rng: random.Random, rates: Sequence[float] = DRIFT_RATES
) -> Perturbed:
    """``text`` as a copy that drifted from the maintainer's: every line end CRLF, and, each with its
    probability in ``rates``, a sentence inserted where no span is cut, one word inside a span replaced by
    another, and the second half cut off. Each change is placed at original positions and they are applied
    from the end of the text, so a piece's position still names its original character."""
    pieces: list[Piece] = [(character, index) for index, character in enumerate(text)]
    changed: set[int] = set()
    end = len(text) // 2 if rng.random() < rates[2] else len(text)
    changes: list[tuple[int, int, str]] = [(end, len(text), "")]  # (start, end, replacement)
    word = _word_in_a_span(text, [(start, stop) for start, stop in spans if stop <= end], rng)
    if word is not None and rng.random() < rates[1]:
        changes.append((*word, "former" if text[word[0] : word[1]] != "former" else "latter"))
    if rng.random() < rates[0]:
        at = _outside_spans([*spans, *(change[:2] for change in changes[1:])], end, rng)
        changes.append((at, at, SENTENCE))
    edits = []
    for start, stop, replacement in sorted(changes, reverse=True):
        pieces[start:stop] = [(replacement, -1)] if replacement else []
        changed.update(range(start, stop))
        edits.append(f"{start}-{stop} replaced by {len(replacement)} characters")
    pieces = [("\r\n", index) if character == "\n" else (character, index) for character, index in pieces]
    return _joined(pieces, len(text), (frozenset(changed), frozenset()), [*edits, "CRLF line ends"])


def _word_in_a_span(text: str, spans: Sequence[tuple[int, int]], rng: random.Random) -> tuple[int, int] | None:
    """A word (a run of letters) lying whole inside one of ``spans``, or None."""
    words = [
        (start + match.start(), start + match.end())
        for start, stop in spans
        for match in re.finditer(r"[^\W\d_]+", text[start:stop])
    ]
    return rng.choice(words) if words else None


def _outside_spans(spans: Sequence[tuple[int, int]], end: int, rng: random.Random) -> int:
    """An original position up to ``end`` where inserting cuts none of ``spans``."""
    cut = np.zeros(end + 1, dtype=bool)
    for start, stop in spans:
        cut[start + 1 : min(stop, end + 1)] = True
    return int(rng.choice(np.flatnonzero(~cut)))


# Scoring a re-anchored rehydration against the maintainer's full release.

SpanKey = tuple[str, str]
"""(record, field): ``sdoh/dev [0101]``, ``events[0].trigger.text``, as re-anchored.jsonl names them."""


def leaves(value: object, node: object, path: str = "") -> Iterator[tuple[str, object]]:
    """(field path, value) of every licensed string under ``value`` (a stored row or a part of it)."""
    if node == LEAF:
        yield path, value
    elif value is None:
        return
    elif isinstance(node, list):
        for index, item in enumerate(value):  # type: ignore[call-overload]
            yield from leaves(item, node[0], f"{path}[{index}]")
    else:
        for name, child in node.items():  # type: ignore[attr-defined]
            yield from leaves(value[name], child, f"{path}.{name}" if path else name)  # type: ignore[index]


def span_ranges(text_free: Path, documents: dict[str, str]) -> dict[str, list[tuple[int, int]]]:
    """Per document, the [start, end) of every slice a recipe cuts from it other than the whole document."""
    ranges: dict[str, list[tuple[int, int]]] = defaultdict(list)
    view = ReleaseView(text_free)
    for config in view.configs():
        for shard in view.shards(config):
            for row in pq.read_table(shard).to_pylist():
                locators = [document["locator"] for document in row[SOURCE_DOCUMENTS]]
                for struct, recipe in _recipes(row):
                    for segment in recipe:
                        if segment["document"] < 0:
                            continue
                        locator = locators[segment["document"]]
                        if (segment["start"], segment["end"]) != (0, len(documents[locator])):
                            ranges[locator].append((segment["start"], segment["end"]))
                            start, end, text = struct.get("start"), struct.get("end"), documents[locator]
                            if (
                                isinstance(start, int)
                                and isinstance(end, int)
                                and text[start:end] == text[segment["start"] : segment["end"]]
                            ):
                                ranges[locator].append((start, end))  # where the span itself is
    return ranges


def _recipes(row: dict[str, Any]) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Every recipe of a text-free row (lists of segments, found by their shape) with the struct holding it."""
    stack: list[tuple[dict[str, Any], Any]] = [({}, row)]
    while stack:
        struct, value = stack.pop()
        if isinstance(value, list) and value and all(isinstance(v, dict) and "literal" in v for v in value):
            yield struct, value
        elif isinstance(value, list):
            stack += [(struct, item) for item in value]
        elif isinstance(value, dict):
            stack += [(value, item) for key, item in value.items() if key != SOURCE_DOCUMENTS]


def perturb_documents(
    documents: dict[str, str],
    ranges: dict[str, list[tuple[int, int]]],
    fraction: float,
    seed: int,
    how: Callable[[str, Sequence[tuple[int, int]], random.Random], Perturbed] = perturb,
) -> dict[str, Perturbed]:
    """``fraction`` of the documents spans are cut from (at least one) perturbed by ``how``, chosen with
    ``seed`` (the others: a CHARTTIME or DESCRIPTION cell, a terminology entry, are left as they are)."""
    rng = random.Random(seed)
    annotated = sorted(locator for locator in documents if ranges.get(locator))
    chosen = rng.sample(annotated, max(1, round(len(annotated) * fraction)))
    return {locator: how(documents[locator], ranges.get(locator, []), rng) for locator in chosen}


def score(
    full: Path,
    text_free: Path,
    reanchored: Path,
    models: dict[str, type[BaseModel]],
    documents: dict[str, str],
    perturbed: dict[str, Perturbed],
) -> Counter[str]:
    """Every licensed string of the maintainer's release other than whole documents, classed: ``recovered``
    (the same text, once normalised), ``lost_named`` (null, named in re-anchored.jsonl), ``left_out_named``
    (its record left out and named), ``wrong`` (another text) or ``unnamed`` (missing and not named).
    ``changed`` counts the strings not recovered whose recipe cuts text a ``perturbed`` document (by locator)
    no longer holds as it was (one may still be recovered from its own place, when the recipe cuts it from an
    earlier occurrence)."""
    lost: set[SpanKey] = set()
    left_out: set[str] = set()
    for line in (reanchored / "re-anchored.jsonl").read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if "lost" in entry:
            lost.add((entry["lost"]["record"], entry["lost"]["field"]))
        elif "left_out" in entry:
            left_out.add(entry["left_out"]["record"])
    whole = set(documents.values())
    counts: Counter[str] = Counter()
    for config, model in models.items():
        tree, id_field = licensed_tree(model), getattr(model, "id_field", "id")
        recipes, restored_splits = _rows(text_free, config, id_field), _rows(reanchored, config, id_field)
        for split, rows in _rows(full, config, id_field).items():
            restored = restored_splits.get(split, {})
            for record_id, row in rows.items():
                record = f"{config}/{split} [{record_id}]"
                new = dict(leaves(restored[record_id], tree)) if record_id in restored else None
                stored = recipes[split][record_id]
                cut = dict(leaves(stored, tree))
                locators = [document["locator"] for document in stored[SOURCE_DOCUMENTS]]
                for path, text in leaves(row, tree):
                    if text is None or text in whole:
                        continue
                    counts["spans"] += 1
                    got = None if new is None else new[path]
                    counts["changed"] += got != text and _alters(cut[path], locators, perturbed)  # type: ignore[arg-type]
                    if new is None:
                        counts["left_out_named" if record in left_out else "unnamed"] += 1
                    elif new[path] is None:
                        counts["lost_named" if (record, path) in lost else "unnamed"] += 1
                    else:
                        counts["recovered" if _same_text(new[path], text) else "wrong"] += 1
    return counts


def _same_text(restored: str, original: str) -> bool:
    """Whether a restored string is the original as the user's copy holds it: the same text once both are
    normalised (a span crossing a line end comes back with the copy's CRLF)."""
    return restored == original or normalise(restored).text == normalise(original).text


def _alters(recipe: list[dict[str, Any]], locators: list[str], perturbed: dict[str, Perturbed]) -> bool:
    """Whether the copy no longer holds a slice of the recipe as it was."""
    return any(
        segment["document"] >= 0
        and locators[segment["document"]] in perturbed
        and perturbed[locators[segment["document"]]].alters(segment["start"], segment["end"])
        for segment in recipe
    )


def _rows(folder: Path, config: str, id_field: str) -> dict[str, dict[str, dict[str, Any]]]:
    view = ReleaseView(folder)
    if config not in view.configs():
        return {}
    return {
        split: {
            str(row[id_field]): row for shard in view.shards(config, split) for row in pq.read_table(shard).to_pylist()
        }
        for split in view.splits(config)
    }
