"""Write a release's coreference chains as CoNLL-2012 files: ``clincorp export conll2012 RELEASE --out DIR``.

One ``DIR/<split>.conll`` per split of the corpus's chain config, one document per record (named by
the record's id), so the CoNLL-2012 reference scorer, or ``clincorp score coref``, can read a release.

A corpus registers an instance of :class:`Conll2012Export` with its :class:`ChainLayout`: which config
holds chains, which fields hold the record id, the mentions and the chain members, and which texts a
record's mention offsets point into (one text per note, or a patient's reports one after the other).
Texts are split into sentences and tokens by :mod:`clinical_corpora.builders.contract.text_units`; a mention
becomes the tokens its characters overlap. Mentions in no chain are written as singleton entities
(``--no-singletons`` leaves them out).
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
from clinical_corpora.builders.exporters.base import Exporter, Record
from clinical_corpora.builders.sources.conll2012 import (
    ConllDocument,
    TokenSpan,
    conll_doc_id,
    iter_conll2012,
    write_conll2012,
)
from clinical_corpora.core.errors import ClincorpError

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


def record_document(record: Record, layout: ChainLayout, singletons: bool) -> ConllDocument:
    """One record as a CoNLL-2012 document: its chains as token spans over its text(s)."""
    name = str(record[layout.id_field])
    sentences, token_spans = _tokens(layout.texts(record))
    offsets = [0]
    for spans in token_spans:
        offsets.append(offsets[-1] + len(spans))
    starts = [[start for start, _ in spans] for spans in token_spans]
    ends = [[end for _, end in spans] for spans in token_spans]
    span_of: dict[str, TokenSpan] = {}
    for mention in record[layout.mentions_field]:
        index = layout.text_index(mention)
        first = bisect_right(ends[index], mention["start"])
        last = bisect_left(starts[index], mention["end"])
        if first >= last:
            raise ClincorpError(f"{name}: mention {mention['id']} ({mention['text']!r}) covers no token")
        span_of[mention["id"]] = TokenSpan(offsets[index] + first, offsets[index] + last)
    chains = [[span_of[member] for member in chain[layout.members_field]] for chain in record[layout.chains_field]]
    if singletons:
        chained = {member for chain in record[layout.chains_field] for member in chain[layout.members_field]}
        chains += [[span_of[m["id"]]] for m in record[layout.mentions_field] if m["id"] not in chained]
    owner: dict[TokenSpan, int] = {}
    for number, chain in enumerate(chains):
        for span in chain:
            if owner.setdefault(span, number) != number:
                raise ClincorpError(
                    f"{name}: two chains have a mention on tokens {span.start}-{span.end}; "
                    "CoNLL-2012 cannot tell them apart"
                )
    return ConllDocument(name, 0, tuple(sentences), tuple(frozenset(chain) for chain in chains))


def iter_documents(view: ReleaseView, layout: ChainLayout, split: str, singletons: bool) -> Iterator[ConllDocument]:
    for _, record in view.rows(layout.config, split):
        yield record_document(record, layout, singletons)


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

    def write(self, view: ReleaseView, out: Path, options: argparse.Namespace | None = None) -> Iterator[str]:
        singletons = not (options is not None and options.no_singletons)
        config = self.layout.config
        out.mkdir(parents=True, exist_ok=True)
        for split in view.splits(config):
            target = out / f"{split}{CONLL_SUFFIX}"
            try:
                write_conll2012(iter_documents(view, self.layout, split, singletons), target)
            except ValueError as error:
                raise ClincorpError(f"cannot write {target}: {error}") from error
            yield f"{config}/{split}: wrote {target}"

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
