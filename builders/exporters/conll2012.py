"""Write a release's coreference chains as CoNLL-2012 files: ``clincorp export conll2012 RELEASE --out DIR``.

One ``DIR/<split>.conll`` per split of the corpus's chain config, one document per record (named by
the record's id), so the CoNLL-2012 reference scorer, or ``clincorp score coref``, can read a release.

A corpus registers an instance of :class:`Conll2012Export` with its :class:`ChainLayout`: which config
holds chains, which fields hold the record id, the mentions and the chain members, and which texts a
record's mention offsets point into (one text per note, or a patient's reports one after the other).
Texts are split into sentences and tokens by :mod:`clinical_corpora.builders.contract.text_units`; a mention
becomes the tokens its characters overlap. Mentions in no chain are written as singleton entities
(``--no-singletons`` leaves them out). A mention the format cannot hold (on whitespace, covering no token;
on tokens that carry a mention of another chain, as a discontinuous mention's covering span often does)
fails the export naming every such mention, or with ``--on-error drop`` is left out, counted and listed in
``dropped.tsv``; nothing is written on failure (the export is staged, see :mod:`.base`). A mention on the same
tokens as another mention of its own chain becomes one CoNLL-2012 mention with it: merged, counted and listed
in ``dropped.tsv`` too.
"""

from __future__ import annotations

import argparse
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.contract.text_units import split_sentences
from clinical_corpora.builders.exporters.base import DROPPED_FILE, Exporter, Record, write_dropped
from clinical_corpora.builders.sources.conll2012 import (
    ConllDocument,
    TokenSpan,
    conll_doc_id,
    iter_conll2012,
    write_conll2012,
)
from clinical_corpora.core.errors import ClincorpError, excerpt

CONLL_SUFFIX = ".conll"


def _own_text(record: Record) -> list[str]:
    return [record["text"]]


def _first_text(mention: Record) -> int:
    return 0


@dataclass(frozen=True)
class ChainLayout:
    """Where a config keeps its document id, mentions, chain members and texts."""

    config: str
    id_field: str
    mentions_field: str
    members_field: str
    chains_field: str = "chains"
    texts: Callable[[Record], list[str]] = _own_text
    text_index: Callable[[Record], int] = _first_text


def _tokens(texts: list[str]) -> tuple[list[tuple[str, ...]], list[list[tuple[int, int]]]]:
    """Sentences of words (all texts in order) and, per text, its token character spans."""
    sentences: list[tuple[str, ...]] = []
    spans: list[list[tuple[int, int]]] = []
    for text in texts:
        text_spans: list[tuple[int, int]] = []
        for sentence in split_sentences(text):
            sentences.append(tuple(text[start:end] for start, end in sentence.tokens))
            text_spans += sentence.tokens
        spans.append(text_spans)
    return sentences, spans


@dataclass(frozen=True)
class DroppedMention:
    """A mention CoNLL-2012 does not hold as such: it covers no token or its tokens carry a mention of another
    chain (left out), or its tokens are those of another mention of its own chain (``merged`` into that one)."""

    split: str
    document: str
    mention: str
    chain: str
    start: int | None
    end: int | None
    reason: str
    merged: bool = False

    def __str__(self) -> str:
        return f"{self.split}/{self.document}: mention {self.mention} {self.reason}"

    def tsv_fields(self) -> tuple[str, ...]:
        """Its line of ``dropped.tsv`` (:data:`DROPPED_COLUMNS`)."""
        offsets = ("" if self.start is None else str(self.start), "" if self.end is None else str(self.end))
        return (self.split, self.document, self.chain, self.mention, *offsets, self.reason)


@dataclass
class _Placing:
    """Placing one record's mentions on its tokens: which chain holds each token span, and what was not placed."""

    split: str
    document: str
    chain_of: dict[str, str]
    dropped: list[DroppedMention] | None
    mentions: dict[str, Record]

    def drop(self, mention: str, reason: str, *, merged: bool = False) -> None:
        """List a mention the format does not hold; without a list, a merge is silent and a loss an error."""
        found = self.mentions.get(mention, {})
        problem = DroppedMention(
            self.split,
            self.document,
            mention,
            self.chain_of.get(mention, ""),
            found.get("start"),
            found.get("end"),
            reason,
            merged,
        )
        if self.dropped is not None:
            self.dropped.append(problem)
        elif not merged:
            raise ClincorpError(f"{self.document}: mention {mention} {reason}")


def record_document(
    record: Record, layout: ChainLayout, singletons: bool, dropped: list[DroppedMention] | None = None, split: str = ""
) -> ConllDocument:
    """One record as a CoNLL-2012 document: its chains as token spans over its text(s).

    A mention the format cannot hold (on whitespace, covering no token; on the tokens of a mention of another
    chain, as a discontinuous mention's covering span often is) raises ClincorpError naming it, or, given a
    ``dropped`` list, is left out and listed there (the first chain to reach a token span keeps it). A mention
    on the tokens of another mention of its own chain is one CoNLL-2012 mention with it: listed as merged."""
    name = str(record[layout.id_field])
    sentences, token_spans = _tokens(layout.texts(record))
    chain_ids, members = _chains(record, layout, singletons)
    placing = _Placing(
        split,
        name,
        {mention: chain_ids[number] for number, chain in enumerate(members) for mention in chain},
        dropped,
        {mention["id"]: mention for mention in record[layout.mentions_field]},
    )
    span_of = _token_spans(record[layout.mentions_field], layout, token_spans, placing)
    owner: dict[TokenSpan, tuple[int, str]] = {}
    chains: list[set[TokenSpan]] = [set() for _ in members]
    for number, chain in enumerate(members):
        for mention in chain:
            span = span_of.get(mention)
            if span is None:
                continue
            holder, holder_mention = owner.setdefault(span, (number, mention))
            if holder != number:
                placing.drop(
                    mention,
                    f"of chain {chain_ids[number]}: two chains have a mention on tokens {span.start}-{span.end} "
                    f"(mention {holder_mention} of chain {chain_ids[holder]}); CoNLL-2012 cannot tell them apart",
                )
            elif holder_mention != mention:
                placing.drop(
                    mention,
                    f"of chain {chain_ids[number]}: on tokens {span.start}-{span.end}, as mention {holder_mention} of "
                    "the same chain; merged into one CoNLL-2012 mention",
                    merged=True,
                )
            else:
                chains[number].add(span)
    kept = tuple(frozenset(chain) for chain in chains if chain)
    return ConllDocument(name, 0, tuple(sentences), kept)


def _chains(record: Record, layout: ChainLayout, singletons: bool) -> tuple[list[str], list[list[str]]]:
    """The record's chain ids and members, with a chain per unchained mention when ``singletons``."""
    chain_ids = [chain.get("id", str(number)) for number, chain in enumerate(record[layout.chains_field])]
    members = [list(chain[layout.members_field]) for chain in record[layout.chains_field]]
    if singletons:
        chained = {member for chain in members for member in chain}
        singles = [m["id"] for m in record[layout.mentions_field] if m["id"] not in chained]
        members += [[mention] for mention in singles]
        chain_ids += [f"singleton {mention}" for mention in singles]
    return chain_ids, members


def _token_spans(
    mentions: list[Record], layout: ChainLayout, token_spans: list[list[tuple[int, int]]], placing: _Placing
) -> dict[str, TokenSpan]:
    """Mention id → the document's tokens its characters overlap; a mention covering no token is dropped."""
    offsets = [0]
    for spans in token_spans:
        offsets.append(offsets[-1] + len(spans))
    starts = [[start for start, _ in spans] for spans in token_spans]
    ends = [[end for _, end in spans] for spans in token_spans]
    span_of: dict[str, TokenSpan] = {}
    for mention in mentions:
        index = layout.text_index(mention)
        first = bisect_right(ends[index], mention["start"])
        last = bisect_left(starts[index], mention["end"])
        if first >= last:
            placing.drop(mention["id"], f"({excerpt(mention['text'])}) covers no token")
            continue
        span_of[mention["id"]] = TokenSpan(offsets[index] + first, offsets[index] + last)
    return span_of


def mention_tokens(record: Record, layout: ChainLayout) -> tuple[dict[str, TokenSpan], list[tuple[int, int]]]:
    """Where the record's CoNLL-2012 document puts its mentions (mention id → its tokens; a mention on no token
    left out) and each token's character span (a single-text record's offsets)."""
    _, token_spans = _tokens(layout.texts(record))
    mentions = {mention["id"]: mention for mention in record[layout.mentions_field]}
    placing = _Placing("", str(record[layout.id_field]), {}, [], mentions)
    return _token_spans(record[layout.mentions_field], layout, token_spans, placing), [
        span for spans in token_spans for span in spans
    ]


def iter_documents(
    view: ReleaseView, layout: ChainLayout, split: str, singletons: bool, dropped: list[DroppedMention] | None = None
) -> Iterator[ConllDocument]:
    """The documents of one split; mentions the format cannot hold fail (or, given ``dropped``, go there)."""
    for _, record in view.rows(layout.config, split):
        yield record_document(record, layout, singletons, dropped, split)


LISTED = 10


def dropped_summary(dropped: list[DroppedMention]) -> str:
    """How many mentions were left out and how many merged into another of their chain."""
    merged = sum(problem.merged for problem in dropped)
    return (
        f"left out {len(dropped) - merged} mention(s) the format cannot hold and merged {merged} duplicate "
        "mention(s) into another of their chain on the same tokens"
    )


class Conll2012Export(Exporter):
    """The ``clincorp export conll2012`` command for one corpus's chain layout: one ``<split>.conll`` per split,
    one document per record, its chains as token spans (what the CoNLL-2012 reference scorer and ``clincorp
    score coref`` read). No builder reads CoNLL-2012 back: the round trip reads the files with the CoNLL-2012
    reader and compares the chains."""

    lost = (
        "character offsets and whitespace: texts are written as sentences of tokens and a mention as the "
        "tokens its characters overlap (a discontinuous mention as its covering span)",
        "mention, chain and record fields other than the chains themselves (ids, types, attributes, report "
        "metadata; several texts of one record follow each other in one document)",
    )
    exact = False

    def __init__(self, layout: ChainLayout) -> None:
        self.layout = layout
        self.configs = (layout.config,)

    def configure(self, parser: argparse.ArgumentParser) -> None:
        super().configure(parser)
        parser.add_argument(
            "--no-singletons",
            action="store_true",
            help="leave out mentions that are in no chain (by default they are singleton entities)",
        )
        parser.add_argument(
            "--on-error",
            choices=["fail", "drop"],
            default="fail",
            help="a mention the format cannot hold (covering no token, or on the tokens of another chain's "
            f"mention) fails the export naming every such mention, or is left out, counted and listed in "
            f"{DROPPED_FILE}",
        )

    def write(self, view: ReleaseView, out: Path, options: argparse.Namespace | None = None) -> Iterator[str]:
        singletons = not (options is not None and options.no_singletons)
        config = self.layout.config
        dropped: list[DroppedMention] = []
        out.mkdir(parents=True, exist_ok=True)
        for split in view.splits(config):
            if not view.split_rows(config, split):
                continue  # a declared split without rows (odie_anaphora's test split of a Knowtator input)
            target = out / f"{split}{CONLL_SUFFIX}"
            try:
                write_conll2012(iter_documents(view, self.layout, split, singletons, dropped), target)
            except ValueError as error:
                raise ClincorpError(f"cannot write {target.name}: {error}") from error
            yield f"{config}/{split}: wrote {target}"
        lost = [problem for problem in dropped if not problem.merged]
        if lost and (options is None or options.on_error == "fail"):
            listed = "\n  ".join(map(str, lost[:LISTED]))
            more = f"\n  and {len(lost) - LISTED} more" if len(lost) > LISTED else ""
            raise ClincorpError(
                f"{len(lost)} mention(s) cannot be written in CoNLL-2012; nothing was exported:\n  {listed}{more}\n"
                f"(--on-error drop leaves them out and lists them in {DROPPED_FILE})"
            )
        if dropped:
            write_dropped(out, [problem.tsv_fields() for problem in dropped])
            yield f"{config}: {dropped_summary(dropped)}, listed in {out / DROPPED_FILE}"

    def read_back(self, out: Path) -> dict[str, Any]:
        """``<split>/<document id>`` → (sentences, chains as sets of token spans), as the reader reads them."""
        return {
            f"{path.stem}/{document.doc_id}": (document.sentences, set(document.chains))
            for path in sorted(out.glob(f"*{CONLL_SUFFIX}"))
            for document in iter_conll2012(path)
        }

    def expected(self, view: ReleaseView) -> dict[str, Any]:
        return {
            f"{split}/{conll_doc_id(document.name, document.part)}": (document.sentences, set(document.chains))
            for split in view.splits(self.layout.config)
            for document in iter_documents(view, self.layout, split, True)
        }
