"""odie_anaphora's exports: identity chains as CoNLL-2012 (one document per note); ``i2b2``, the i2b2/VA 2011
coreference layout (``docs/``, ``concepts/``, ``chains/``, ``pairs/``) the corpus also reads; and ``knowtator``,
the annotators' Knowtator XML beside the note texts."""

from __future__ import annotations

import argparse
from bisect import bisect_right
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.exporters.base import Exporter, Record, ReleaseInputs, write_text
from clinical_corpora.builders.exporters.conll2012 import ChainLayout, Conll2012Export
from clinical_corpora.builders.exporters.knowtator import write_knowtator_file
from clinical_corpora.builders.sources.i2b2.concepts import TokenGrid
from clinical_corpora.builders.sources.i2b2.coref import (
    Chain,
    Concept,
    CorefPair,
    I2b2CorefDocument,
    write_i2b2_document,
)
from clinical_corpora.builders.sources.knowtator.document import KnowtatorDocument, Markable, Pair
from clinical_corpora.core.errors import ClincorpError, excerpt
from clinical_corpora.core.safe_names import inside

CONFIG = "odie_anaphora"
IDENTITY = "identity"
NOTE_CHAINS = ChainLayout(config=CONFIG, id_field="id", mentions_field="markables", members_field="markable_ids")
conll2012 = Conll2012Export(NOTE_CHAINS)

Offsets = tuple[int, int]


class TokenEdges:
    """Where the whitespace tokens of a text start and end (the i2b2/VA format counts whole tokens)."""

    def __init__(self, text: str) -> None:
        self.grid = TokenGrid(text)
        tokens = [span for line in self.grid.tokens for span in line]
        self.starts = [start for start, _ in tokens]
        self.ends = [end for _, end in tokens]

    def widen(self, start: int, end: int) -> Offsets:
        """``start``-``end`` widened to the tokens it touches."""
        first = bisect_right(self.ends, start)
        last = bisect_right(self.starts, max(end - 1, start)) - 1
        if first > last:
            return start, end
        return min(self.starts[first], start), max(self.ends[last], end)


def note_document(note: Record) -> I2b2CorefDocument:
    """The i2b2/VA view of a released note: markables as concepts on whole tokens (typed by their semantic class,
    spaces for underscores), identity chains typed by their first member, identity pairs."""
    text = note["text"]
    edges = TokenEdges(text)
    concepts: dict[str, Concept] = {}
    owner: dict[Offsets, str] = {}
    for markable in note["markables"]:
        start, end = edges.widen(markable["start"], markable["end"])
        concept_type = markable["semantic_class"].replace("_", " ")
        first = owner.setdefault((start, end), markable["id"])
        if first != markable["id"] and concepts[first].type != concept_type:
            raise ClincorpError(
                f"{note['id']}: markables {first} and {markable['id']} both cover the tokens "
                f"{excerpt(text[start:end])} with different semantic classes; the i2b2/VA format has one concept "
                "per position"
            )
        concepts[markable["id"]] = Concept(start, end, concept_type, text[start:end])
    chain_type = {}
    chains = []
    for chain in note["chains"]:
        members = tuple(concepts[markable_id] for markable_id in chain["markable_ids"])
        chains.append(Chain(members[0].type, members))
        chain_type.update(dict.fromkeys(chain["markable_ids"], members[0].type))
    pairs = tuple(
        CorefPair(concepts[p["antecedent_id"]], concepts[p["anaphor_id"]], chain_type[p["anaphor_id"]])
        for p in note["pairs"]
        if p["relation"] == IDENTITY
    )
    unique = {(c.start, c.end): c for c in concepts.values()}
    return I2b2CorefDocument(note["id"], text, tuple(unique.values()), tuple(chains), pairs)


def linked(note: Record) -> tuple[Record, int]:
    """The note with the pairs and chain links naming a markable it no longer holds (left out: a span lost when
    re-anchoring) gone with it, and how many pairs went; a chain left with one markable is none."""
    present = {markable["id"] for markable in note["markables"]}
    pairs = [pair for pair in note["pairs"] if {pair["anaphor_id"], pair["antecedent_id"]} <= present]
    chains = []
    for chain in note["chains"]:
        members = [markable_id for markable_id in chain["markable_ids"] if markable_id in present]
        if len(members) > 1:
            chains.append({**chain, "markable_ids": members})
    return {**note, "pairs": pairs, "chains": chains}, len(note["pairs"]) - len(pairs)


def with_lost_pairs(line: str, pairs: int) -> str:
    """A summary line, saying how many pairs went with the markables left out (if any)."""
    return line + (f" ({pairs} pair(s) left out with the markables they link)" if pairs else "")


TEST_SPLIT = "test"
"""The split an i2b2/VA export writes to ``test/`` (source ``i2b2_test``), when the release has one."""


class I2b2Export(Exporter):
    """Write an odie_anaphora release in the i2b2/VA 2011 coreference layout: ``docs/<note>.txt``,
    ``concepts/<note>.txt.con``, ``chains/<note>.txt.chains`` and ``pairs/<note>.txt.pairs`` (the identity pairs);
    ``clincorp release odie_anaphora --source i2b2=DIR`` releases it again. A release with a test split is written
    as two such folders, ``train/`` and ``test/`` (``--source i2b2=DIR/train --source i2b2_test=DIR/test``)."""

    configs = (CONFIG,)
    lost = (
        "markable ids (re-read as line:token positions), grammatical categories, sentence functions, Bagga "
        "classes and every non-identity pair (set/subset, part/whole, other): the format has identity "
        "coreference only",
        "fragments and exact boundaries: a markable becomes the whole whitespace tokens it touches (a "
        "discontinuous one its covering span); markables on the same tokens become one concept",
        "pair ids and chain ids (re-derived from positions and text order)",
    )
    exact = False

    def write(self, view: ReleaseView, out: Path, options: argparse.Namespace | None = None) -> Iterator[str]:
        count = pairs = 0
        split_folders = view.split_rows(CONFIG, TEST_SPLIT) > 0
        for split, released in view.rows(CONFIG):
            note, gone = linked(released)
            write_i2b2_document(out / split if split_folders else out, note_document(note))
            count, pairs = count + 1, pairs + gone
        yield with_lost_pairs(f"{CONFIG}: {count} notes written under {out}", pairs)

    def reread(self, out: Path) -> ReleaseInputs:
        if (out / TEST_SPLIT).is_dir():
            train = {"i2b2": out / "train"} if (out / "train").is_dir() else {}
            return ReleaseInputs({**train, "i2b2_test": out / TEST_SPLIT})
        return ReleaseInputs({"i2b2": out})

    def kept(self, config: str, row: dict[str, Any]) -> dict[str, Any]:
        """Markables as typed token spans, identity pairs and chains as spans (ids, attributes and other
        relations erased)."""
        edges = TokenEdges(row["text"])
        span = {m["id"]: edges.widen(m["start"], m["end"]) for m in row["markables"]}
        return {
            "id": row["id"],
            "institution": row["institution"],
            "note_type": row["note_type"],
            "text": row["text"],
            "markables": sorted({(*span[m["id"]], m["semantic_class"]) for m in row["markables"]}),
            "pairs": sorted(
                {(span[p["anaphor_id"]], span[p["antecedent_id"]]) for p in row["pairs"] if p["relation"] == IDENTITY}
            ),
            "chains": sorted(sorted(span[i] for i in chain["markable_ids"]) for chain in row["chains"]),
        }


i2b2 = I2b2Export()

GOLD_FOLDER = "gold"
TEXT_FOLDER = "text"
ANNOTATOR = "gold"


def note_knowtator(note: Record) -> KnowtatorDocument:
    """A released note as one Knowtator document (markable and pair ids as released)."""
    return KnowtatorDocument(
        doc_id=note["id"],
        text=note["text"],
        annotators=(ANNOTATOR,),
        markables=tuple(
            Markable(
                id=m["id"],
                fragments=tuple((f["start"], f["end"]) for f in m["fragments"]),
                text=m["text"],
                semantic_class=m["semantic_class"],
                grammatical_category=m["grammatical_category"],
                sentence_function=m["sentence_function"],
            )
            for m in note["markables"]
        ),
        pairs=tuple(
            Pair(p["id"], p["anaphor_id"], p["antecedent_id"], p["relation"], p["bagga_class"]) for p in note["pairs"]
        ),
    )


class KnowtatorExport(Exporter):
    """Write an odie_anaphora release as Knowtator XML: ``gold/<note>.txt.knowtator.xml`` (Markable and Pair class
    mentions with their slots, as in Savova et al. 2011's annotation schema) and ``text/<note>.txt``;
    ``clincorp release odie_anaphora --source knowtator=DIR/gold --source text=DIR/text`` releases it again."""

    configs = (CONFIG,)
    lost = (
        "annotator names and creation dates (every annotation is written as annotator 'gold'), and the "
        "annotators' own files (the agreement gate's inputs are not in a release)",
    )

    def write(self, view: ReleaseView, out: Path, options: argparse.Namespace | None = None) -> Iterator[str]:
        count = pairs = 0
        for _, released in view.rows(CONFIG):
            note, gone = linked(released)
            write_knowtator_file(out / GOLD_FOLDER, note_knowtator(note), ANNOTATOR)
            write_text(inside(out / TEXT_FOLDER, note["id"], ".txt"), note["text"])
            count, pairs = count + 1, pairs + gone
        yield with_lost_pairs(
            f"{CONFIG}: {count} notes written under {out / GOLD_FOLDER} and {out / TEXT_FOLDER}", pairs
        )

    def reread(self, out: Path) -> ReleaseInputs:
        return ReleaseInputs({"knowtator": out / GOLD_FOLDER, "text": out / TEXT_FOLDER})


knowtator = KnowtatorExport()
