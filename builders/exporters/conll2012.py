"""Write a release's coreference chains as CoNLL-2012 files: ``clincorp export conll2012 RELEASE --out DIR``.

One ``DIR/<split>.conll`` per split of the chosen config, one document per record (named by the
record's id), so the CoNLL-2012 reference scorer, or ``clincorp score coref``, can read a release.

Any config whose records have ``chains`` (each with a ``*_ids`` list of member ids) and a list of
mentions (items with ``id``, ``start``, ``end``) can be exported: ``rad_coref`` (mentions in several
reports, ``report_index`` naming the report in ``reports``) and note-level corpora (offsets into the
record's ``text``). Texts are split into sentences and tokens by :mod:`clinical_corpora.builders.text_units`, the
reports of a record one after the other; a mention becomes the tokens its characters overlap.
Mentions in no chain are written as singleton entities (``--no-singletons`` leaves them out).
"""

from __future__ import annotations

import argparse
import json
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clinical_corpora.builders.base import load_builder_class
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.builders.release_view import ReleaseView
from clinical_corpora.builders.text_units import split_sentences
from clinical_corpora.builders.sources.conll2012 import ConllDocument, TokenSpan, write_conll2012

CHAINS_FIELD = "chains"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("release", type=Path, help="a release folder (holding manifest.json and data/)")
    parser.add_argument("--out", type=Path, required=True, help="folder for <split>.conll files")
    parser.add_argument("--config", help="the config to export (default: the one config with chains)")
    parser.add_argument("--no-singletons", action="store_true",
                        help="leave out mentions that are in no chain (by default they are singleton entities)")


@dataclass(frozen=True)
class RecordShape:
    """Where a config keeps its document id, mentions and chain members."""

    id_field: str
    mentions_field: str
    members_field: str


def record_shape(view: ReleaseView, config: str, id_field: str) -> RecordShape:
    """The fields of ``config`` holding mentions and chain members, or a ClincorpError saying why not."""
    features = view.features(config)
    chains = features.get(CHAINS_FIELD)
    chain_item = getattr(chains, "feature", None)
    members = [name for name in chain_item or {} if name.endswith("_ids")] if isinstance(chain_item, dict) else []
    mention_lists = [name for name, feature in features.items()
                     if isinstance(getattr(feature, "feature", None), dict)
                     and {"id", "start", "end"} <= set(feature.feature)]
    if len(members) != 1 or len(mention_lists) != 1:
        raise ClincorpError(f"config {config!r} has no chains of mention ids to export: expected a "
                            f"'{CHAINS_FIELD}' list whose items have one '*_ids' list, and one list of "
                            "mentions with id, start and end")
    return RecordShape(id_field, mention_lists[0], members[0])


def _tokens(texts: list[str]) -> tuple[list[tuple[str, ...]], list[list[tuple[int, int]]]]:
    """Sentences of words (all texts in order) and, per text, its token character spans."""
    sentences: list[tuple[str, ...]] = []
    spans: list[list[tuple[int, int]]] = []
    for text in texts:
        text_spans = []
        for sentence in split_sentences(text):
            sentences.append(tuple(text[start:end] for start, end in sentence.tokens))
            text_spans += sentence.tokens
        spans.append(text_spans)
    return sentences, spans


def record_document(record: dict[str, Any], shape: RecordShape, singletons: bool) -> ConllDocument:
    """One record as a CoNLL-2012 document: its chains as token spans over its text(s)."""
    name = str(record[shape.id_field])
    multi = "reports" in record and all("report_index" in m for m in record[shape.mentions_field])
    texts = [report["text"] for report in record["reports"]] if multi else [record["text"]]
    sentences, token_spans = _tokens(texts)
    offsets = [0]
    for spans in token_spans:
        offsets.append(offsets[-1] + len(spans))
    starts = [[start for start, _ in spans] for spans in token_spans]
    ends = [[end for _, end in spans] for spans in token_spans]
    span_of: dict[str, TokenSpan] = {}
    for mention in record[shape.mentions_field]:
        index = mention["report_index"] if multi else 0
        first = bisect_right(ends[index], mention["start"])
        last = bisect_left(starts[index], mention["end"])
        if first >= last:
            raise ClincorpError(f"{name}: mention {mention['id']} ({mention['text']!r}) covers no token")
        span_of[mention["id"]] = TokenSpan(offsets[index] + first, offsets[index] + last)
    chains = [[span_of[member] for member in chain[shape.members_field]] for chain in record[CHAINS_FIELD]]
    if singletons:
        chained = {member for chain in record[CHAINS_FIELD] for member in chain[shape.members_field]}
        chains += [[span_of[m["id"]]] for m in record[shape.mentions_field] if m["id"] not in chained]
    owner: dict[TokenSpan, int] = {}
    for number, chain in enumerate(chains):
        for span in chain:
            if owner.setdefault(span, number) != number:
                raise ClincorpError(f"{name}: two chains have a mention on tokens {span.start}-{span.end}; "
                                    "CoNLL-2012 cannot tell them apart")
    return ConllDocument(name, 0, tuple(sentences), tuple(frozenset(chain) for chain in chains))


def iter_documents(view: ReleaseView, config: str, split: str, shape: RecordShape,
                   singletons: bool) -> Iterator[ConllDocument]:
    for _, record in view.rows(config, split):
        yield record_document(record, shape, singletons)


def _chain_configs(view: ReleaseView) -> list[str]:
    return [config for config in view.configs() if CHAINS_FIELD in view.features(config)]


def run(args: argparse.Namespace) -> int:
    manifest_path = args.release / "manifest.json"
    if not manifest_path.is_file():
        raise ClincorpError(f"{args.release} is not a release: it has no manifest.json")
    view = ReleaseView(args.release)
    candidates = _chain_configs(view)
    config = args.config or (candidates[0] if len(candidates) == 1 else None)
    if config is None or config not in view.configs():
        raise ClincorpError(f"name a config with chains (--config): candidates are {', '.join(candidates) or 'none'}")
    builder = load_builder_class(json.loads(manifest_path.read_text(encoding="utf-8"))["builder"])
    shape = record_shape(view, config, getattr(builder.CONFIGS[config], "id_field", "id"))
    args.out.mkdir(parents=True, exist_ok=True)
    for split in view.splits(config):
        target = args.out / f"{split}.conll"
        try:
            write_conll2012(iter_documents(view, config, split, shape, not args.no_singletons), target)
        except ValueError as error:
            raise ClincorpError(f"cannot write {target}: {error}") from error
        print(f"{config}/{split}: wrote {target}")
    return 0
