"""The CliCR card's statistics: Šuster & Daelemans 2018's Tables 2 and 3 and its §5.1 baselines.

The release is read in batches of the columns (and answer fields) each statistic needs; the passages,
the bulk of the release, are tokenised apart (:func:`statistics_sections`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress
from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.contract.text_units import token_strings
from clinical_corpora.core.card import BarChart, CardSection, Cell, Table
from clinical_corpora.core.processes import child_process
from clinical_corpora.corpora.clicr.entity_matcher import CATEGORIES
from clinical_corpora.corpora.clicr.released_rows import QUERY_BATCH
from clinical_corpora.corpora.clicr.splits import SPLIT_PROPORTIONS

DOCUMENT_BATCH = 256
TABLE_2_KEYS = (
    "cases",
    "cases_without_learning_points",
    "",  # queries in train/dev/test: one value per split, queries.<split>
    "queries_removed",
    "passage_tokens",
    "passage_word_types",
    "passage_entity_types",
    "distinct_answers",
    "distinct_answers_extended",
    "answers_verbatim.percent",
)
"""The stable keys of the Data statistics rows, in their order."""
PASSAGES_APART = 1_000
"""Cases from which the card tokenises the passages in a child process: forking it costs about 0.1 s, and
tokenising a thousand passages about 0.5 s."""


def statistics_sections(release: ReleaseView) -> list[CardSection]:
    """Data statistics and answer categories. From :data:`PASSAGES_APART` cases on, the passages are tokenised in
    a child process (on the other core) while this one tallies the rest."""
    cases = sum(release.rows_in(shard) for shard in release.shards("clicr_documents"))
    if cases < PASSAGES_APART:
        passages = PassageTally.of(release)
        documents, queries = DocumentTally.of(release), query_tallies(release)
    else:
        with child_process("counting the passages' tokens") as start:
            counted = start(PassageTally.of, release)
            documents, queries = DocumentTally.of(release), query_tallies(release)
            passages = counted()
    return [
        _data_statistics(documents, passages, queries),
        _length_distributions(passages, query_lengths(release), queries),
        _answer_categories(queries),
    ]


class QueryTally(NamedTuple):
    """What the card needs from one query (its answers' texts, not the whole answer records)."""

    split: str
    id: str
    document_id: str
    answers: tuple[str, ...]
    dataset_answers: tuple[str, ...]
    category: str
    answer_in_passage: bool


def query_tallies(release: ReleaseView) -> list[QueryTally]:
    """A :class:`QueryTally` per query, read in batches of the columns and answer fields it needs; an answer
    text repeated across queries is one string object."""
    answer = release.features("clicr")["answers"].feature
    dataset = answer["origin"].names.index("dataset")
    categories = pa.array(answer["category"].names, pa.string())
    shared: dict[str, str] = {}
    columns, fields = ["id", "document_id", "answer_in_passage"], {"answers": {"text", "origin", "category"}}
    return [
        tally
        for split in release.splits("clicr")
        for batch in release.batches("clicr", split, columns, QUERY_BATCH, fields)
        for tally in _batch_query_tallies(split, batch, dataset, categories, shared)
    ]


def _batch_query_tallies(
    split: str, batch: pa.RecordBatch, dataset: int, categories: pa.Array, shared: dict[str, str]
) -> Iterator[QueryTally]:
    """The tallies of a batch of queries: ``dataset`` is the id of origin ``dataset``, ``categories`` the
    category names by id."""
    answers = batch.column("answers")
    flat = answers.flatten()
    texts = _shared_texts(flat.field("text"), shared)
    from_dataset = pc.equal(flat.field("origin"), dataset).to_pylist()
    first_categories = categories.take(pc.list_element(answers, 0).field("category")).to_pylist()
    bounds = _list_bounds(answers)
    rows = zip(*(batch.column(name).to_pylist() for name in ("id", "document_id", "answer_in_passage")), strict=True)
    for index, (query_id, document_id, in_passage) in enumerate(rows):
        start, end = bounds[index], bounds[index + 1]
        answer_texts = texts[start:end]
        yield QueryTally(
            split,
            query_id,
            document_id,
            tuple(answer_texts),
            tuple(compress(answer_texts, from_dataset[start:end])),
            first_categories[index],
            in_passage,
        )


@dataclass
class DocumentTally:
    """What the card needs from ``clicr_documents`` but the passages, gathered in one streaming pass."""

    cases: int = 0
    without_learning_points: int = 0
    queries_removed: int = 0
    _shared: dict[str, str] = field(default_factory=dict, repr=False)
    """One string object per distinct entity text: millions of mentions share a few hundred thousand."""

    @classmethod
    def of(cls, release: ReleaseView) -> DocumentTally:
        tally = cls()
        columns = ["id", "learning_points", "repeated_queries_removed"]
        for batch in release.batches("clicr_documents", None, columns, DOCUMENT_BATCH, {"entities": {"text"}}):
            tally.add(batch)
        return tally

    def add(self, batch: pa.RecordBatch) -> None:
        """Count a batch of documents (columns ``id``, ``learning_points``, ``repeated_queries_removed`` and
        ``entities`` with their ``text`` only)."""
        _shared_texts(batch.column("entities").flatten().field("text"), self._shared)
        self.cases += batch.num_rows
        self.without_learning_points += pc.list_value_length(batch.column("learning_points")).to_pylist().count(0)
        self.queries_removed += sum(batch.column("repeated_queries_removed").to_pylist())

    @property
    def entity_types(self) -> int:
        """Distinct entity texts, lower-cased."""
        return len({text.lower() for text in self._shared})


class PassageTally(NamedTuple):
    """The passages' tokens, word types (lower-cased) and each passage's length in tokens."""

    tokens: int
    word_types: int
    lengths: tuple[int, ...]

    @classmethod
    def of(cls, release: ReleaseView) -> PassageTally:
        """Tokenise every passage, lower-cased, a batch of documents at a time."""
        lengths, types = [], set()
        for batch in release.batches("clicr_documents", columns=["passage"], batch_size=DOCUMENT_BATCH):
            for passage in batch.column("passage").to_pylist():
                found = token_strings(passage.lower())
                lengths.append(len(found))
                types.update(found)
        return cls(sum(lengths), len(types), tuple(lengths))


def query_lengths(release: ReleaseView) -> list[int]:
    """Each query's length in tokens (its placeholder one of them), read a batch of queries at a time."""
    return [
        len(token_strings(query))
        for split in release.splits("clicr")
        for batch in release.batches("clicr", split, ["query"], QUERY_BATCH)
        for query in batch.column("query").to_pylist()
    ]


def _shared_texts(texts: pa.Array, shared: dict[str, str]) -> list[str]:
    """``texts`` as Python strings, one object per distinct text (across calls sharing ``shared``)."""
    encoded = texts.dictionary_encode()
    distinct = [shared.setdefault(text, text) for text in encoded.dictionary.to_pylist()]
    return [distinct[index] for index in encoded.indices.to_pylist()]


def _list_bounds(lists: pa.Array) -> list[int]:
    """Where each list starts among the flattened values of ``lists``, then where the last ends."""
    return list(accumulate(pc.list_value_length(lists).to_pylist(), initial=0))


def _data_statistics(documents: DocumentTally, passages: PassageTally, queries: Sequence[QueryTally]) -> CardSection:
    """Šuster & Daelemans 2018, Table 2, on the lower-cased dataset."""
    per_split = Counter(query.split for query in queries)
    verbatim = 100 * sum(query.answer_in_passage for query in queries) / len(queries) if queries else 0.0
    rows: list[list[Cell]] = [
        ["cases", documents.cases],
        ["cases without Learning points (passage only)", documents.without_learning_points],
        ["queries in train/dev/test", "/".join(f"{per_split[split]:,}" for split, _ in SPLIT_PROPORTIONS)],
        ["queries removed (learning point repeats the passage)", documents.queries_removed],
        ["tokens in passages", passages.tokens],
        ["word types in passages", passages.word_types],
        ["entity types in passages", documents.entity_types],
        ["distinct answers", len({text.lower() for query in queries for text in query.dataset_answers})],
        ["distinct answers (incl. extended)", len({text.lower() for query in queries for text in query.answers})],
        ["answers verbatim in passage", verbatim],
    ]
    text = (
        "As Šuster & Daelemans 2018, Table 2, counted on the lower-cased dataset (each passage once). Tokens are "
        "`clinical_corpora.builders.contract.text_units` tokens; an answer is verbatim in the passage when one of "
        "its forms (original or UMLS synonym) occurs there as whole tokens, in any case."
    )
    values = _table_2_values(rows, per_split)
    rows[-1][1] = f"{verbatim:.1f}%"
    return CardSection("Data statistics", text, Table(["statistic", "value"], rows), values)


def _table_2_values(rows: list[list[Cell]], per_split: Mapping[str, int]) -> dict[str, float]:
    """The Data statistics rows by stable key (corpus.yaml ``published:``), the queries per split apart, the
    mean passage length (Šuster & Daelemans 2018, §4) and the share of queries removed (§3.1)."""
    numbers = {key: float(row[1]) for key, row in zip(TABLE_2_KEYS, rows, strict=True) if key}  # type: ignore[arg-type]
    queries = sum(per_split.values())
    removed = numbers["queries_removed"]
    return {
        **numbers,
        **{f"queries.{split}": float(per_split[split]) for split, _ in SPLIT_PROPORTIONS},
        "passage_tokens.mean": numbers["passage_tokens"] / numbers["cases"] if numbers["cases"] else 0.0,
        "queries_removed.percent": 100 * removed / (removed + queries) if removed + queries else 0.0,
    }


def _length_distributions(passages: PassageTally, queries: Sequence[int], tallies: Sequence[QueryTally]) -> CardSection:
    """Šuster & Daelemans 2018, Figure 2: passage and answer lengths in tokens; and query lengths."""
    answers = [len(token_strings(query.dataset_answers[0])) for query in tallies if query.dataset_answers]
    text = (
        "Lengths in tokens (as in Data statistics) of the passages (Šuster & Daelemans 2018, Figure 2a), of the "
        "queries (the placeholder one token) and of each query's original answer (Figure 2b)."
    )
    return CardSection(
        "Length distributions",
        text,
        figures=[
            BarChart.histogram("passage-lengths", "Passage length", passages.lengths, "tokens", "passages"),
            BarChart.histogram("query-lengths", "Query length", queries, "tokens", "queries"),
            BarChart.histogram("answer-lengths", "Answer length (original answers)", answers, "tokens", "answers"),
        ],
    )


def _answer_categories(queries: Sequence[QueryTally]) -> CardSection:
    """Šuster & Daelemans 2018, Table 3: the original answers' i2b2 categories."""
    categories = Counter(query.category for query in queries)
    total = sum(categories.values()) or 1
    rows: list[list[Cell]] = [
        [category, categories[category], f"{100 * categories[category] / total:.1f}%"] for category in CATEGORIES
    ]
    values = {f"answer_category.{category}.percent": 100 * categories[category] / total for category in CATEGORIES}
    chart = BarChart.counts(
        "answer-categories",
        "Answers per category",
        {category: categories[category] for category in CATEGORIES},
        "category",
        "answers",
    )
    return CardSection(
        "Answer categories", table=Table(["category", "answers", "share"], rows), values=values, figures=[chart]
    )
