"""A coreference baseline's chains over a release's own mentions, written as the CoNLL-2012 response that
``clincorp score coref RELEASE RESPONSE`` scores against the release's ``conll2012`` export (gold mentions).

The response has the export's documents, sentences and tokens; only the chains are the system's. A mention the
format cannot hold is left out of both sides alike (the key is the export read back the same way) and counted.
"""

from __future__ import annotations

from collections.abc import Callable

from clinical_corpora.builders.contract.baseline import BaselineRequest
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.exporters.base import Record
from clinical_corpora.builders.exporters.conll2012 import (
    CONLL_SUFFIX,
    ChainLayout,
    DroppedMention,
    dropped_summary,
    record_document,
)
from clinical_corpora.builders.sources.conll2012 import ConllDocument, TokenSpan, write_conll2012
from clinical_corpora.core.errors import ClincorpError

Chains = dict[str, list[list[TokenSpan]]]
"""Document → its chains of token spans, as ``clincorp score coref`` reads a CoNLL-2012 file."""
SystemChains = Callable[[list[Record]], list[list[str]]]
"""A system: a record's mentions in, chains of mention ids out."""


def write_responses(request: BaselineRequest, layout: ChainLayout, system: SystemChains) -> list[str]:
    """One ``<split>.conll`` per split of ``layout.config`` holding records: every record with its chains replaced by
    the system's."""
    request.release.of(request.release.corpus, layout.config)
    written = []
    for split in request.splits(layout.config):
        if not request.release.view.split_rows(layout.config, split):  # as the export, no file for an empty split
            written.append(f"split {split}: no records, no file written")
            continue
        dropped: list[DroppedMention] = []
        documents = (
            record_document(_with_chains(record, layout, system), layout, True, dropped, split)
            for _, record in request.release.view.rows(layout.config, split)
        )
        path = request.out / f"{split}{CONLL_SUFFIX}"
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            write_conll2012(documents, path)
        except ValueError as error:  # a record the CoNLL-2012 format cannot hold (a name with whitespace)
            raise ClincorpError(f"cannot write {path.name}: {error}") from error
        written.append(f"{path} ({dropped_summary(dropped)})" if dropped else str(path))
    return written


def key_and_response(view: ReleaseView, layout: ChainLayout, system: SystemChains, split: str) -> tuple[Chains, Chains]:
    """The chains ``clincorp score coref RELEASE RESPONSE --split SPLIT`` scores for the response
    :func:`write_responses` writes: the release's key and the response as their CoNLL-2012 files hold them."""
    key: Chains = {}
    response: Chains = {}
    for _, record in view.rows(layout.config, split):
        gold = record_document(record, layout, True, [], split)
        key[gold.doc_id] = _spans(gold)
        response[gold.doc_id] = _spans(record_document(_with_chains(record, layout, system), layout, True, [], split))
    return key, response


def _spans(document: ConllDocument) -> list[list[TokenSpan]]:
    return [sorted(chain) for chain in document.chains]


def _with_chains(record: Record, layout: ChainLayout, system: SystemChains) -> Record:
    chains = system(list(record[layout.mentions_field]))
    return {
        **record,
        layout.chains_field: [
            {"id": f"system {number}", layout.members_field: chain} for number, chain in enumerate(chains)
        ],
    }


def grouped_by(key: Callable[[Record], str]) -> SystemChains:
    """A system linking the mentions whose ``key`` is equal (the transitive closure: one chain per key), chains in
    order of their first mention, mentions in record order."""

    def chains(mentions: list[Record]) -> list[list[str]]:
        grouped: dict[str, list[str]] = {}
        for mention in mentions:
            grouped.setdefault(key(mention), []).append(mention["id"])
        return list(grouped.values())

    return chains
