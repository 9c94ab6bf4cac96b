"""CliCR's sim-entity baseline (Šuster & Daelemans 2018, §5.1, equation 1, Table 4), given word vectors.

As the authors' ``baselines.py`` computes it on the CliCR JSON (``clincorp export clicr-json``): each entity
occurrence of a case (title, newline, marked passage, line by line) is represented by the sum of the vectors of
the 3 words before and the 3 after it on its line (marks removed), the query by the 3 words either side of
``@placeholder``; the answer is the entity of highest cosine with the query (the first of equals). Their
vocabulary's quirks are kept: a word without a vector, and each missing window position, takes the vectors
file's first row. Words are looked up lower-cased when every word of the vectors is lower case (the authors'
``-downcase``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from clinical_corpora.builders.contract.baseline import BaselineRequest, write_json
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.corpora.clicr.clicr_json import ENTITY_CLOSE, ENTITY_OPEN, marked_context, tokenized_query
from clinical_corpora.corpora.clicr.records import PLACEHOLDER
from clinical_corpora.corpora.clicr.released_rows import query_rows
from clinical_corpora.validation.metrics.clicr import WordVectors, read_word_vectors

WINDOW = 3
"""Words each side (the authors' ``-win_size``, 3 at prediction time)."""
PADDING = 0
"""The row a missing word or window position takes (the authors' index 0)."""


@dataclass(frozen=True)
class Vectors:
    """Word vectors as the authors' ``VocabBuild`` looks words up."""

    vectors: WordVectors
    lowercased: bool

    def row(self, word: str) -> int:
        return self.vectors.index.get(word.lower() if self.lowercased else word, PADDING)

    def window_sum(self, words: list[str], position: int) -> np.ndarray:
        """The sum of the vectors of ``words[position - 3 : position + 3]``, padded to 6 rows."""
        rows = [self.row(word) for word in words[max(0, position - WINDOW) : min(len(words), position + WINDOW)]]
        rows += [PADDING] * (2 * WINDOW - len(rows))
        return np.asarray(self.vectors.matrix[rows].sum(axis=0))


def _unmarked(word: str) -> str:
    return word.replace(ENTITY_OPEN, "").replace(ENTITY_CLOSE, "")


def entity_contexts(text: str, vectors: Vectors) -> tuple[list[str], np.ndarray | None]:
    """Each entity occurrence of a marked text and its context vector (None when the text has no entity)."""
    entities, rows = [], []
    for line in text.split("\n"):
        starts = [match.start() for match in re.finditer(ENTITY_OPEN, line)]
        ends = [match.end() for match in re.finditer(ENTITY_CLOSE, line)]
        for start, end in zip(starts, ends, strict=False):
            left, right = line[:start].split(), line[end:].split()
            entities.append(line[start + len(ENTITY_OPEN) : end - len(ENTITY_CLOSE)])
            rows.append(vectors.window_sum([_unmarked(word) for word in left + right], len(left)))
    return entities, np.vstack(rows) if rows else None


def query_vector(query: str, vectors: Vectors) -> np.ndarray:
    """The sum of the vectors of the words around ``@placeholder`` in a tokenized query."""
    left, _, right = query.partition(PLACEHOLDER)
    words = left.split() + right.split()
    return vectors.window_sum(words, len(left.split()))


def best_entity(entities: list[str], contexts: np.ndarray, query: np.ndarray) -> str:
    """The entity whose context has the highest cosine with the query (the first of equals)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        cosines = contexts @ query / (np.linalg.norm(contexts, axis=1) * np.linalg.norm(query))
    return entities[int(np.argmax(cosines))]


def sim_entity(request: BaselineRequest) -> list[str]:
    """sim-entity with ``--word-vectors``: one ``<split>.json`` ``{query id: answer}`` per split."""
    if request.word_vectors is None:
        raise ClincorpError(
            "clicr sim-entity needs word vectors: give --word-vectors FILE (word2vec text format, as the "
            "authors trained on the CliCR training split; Šuster & Daelemans 2018, appendix)"
        )
    read = read_word_vectors(request.word_vectors)
    vectors = Vectors(read, all(word == word.lower() for word in read.index))
    request.release.of("clicr", "clicr")
    view = request.release.view
    cases = {}
    for _, row in view.rows("clicr_documents"):
        marked = marked_context(row["passage"], [(e["start"], e["end"]) for e in row["entities"]])
        cases[row["id"]] = entity_contexts(row["title"] + "\n" + marked, vectors)
    written = []
    for split in request.splits("clicr"):
        predictions = {}
        for _, query in query_rows(view, ["id", "document_id", "query"], split):
            entities, contexts = cases.get(query["document_id"], ([], None))
            if contexts is not None:
                vector = query_vector(tokenized_query(query["query"]), vectors)
                predictions[query["id"]] = best_entity(entities, contexts, vector)
        written.append(write_json(request.out / f"{split}.json", predictions))
    return written
