"""CliCR's sim-entity baseline (Šuster & Daelemans 2018, §5.1, equation 1, Table 4).

As the authors' ``baselines.py`` computes it on the CliCR JSON (``clincorp export clicr-json``): each entity
occurrence of a case (title, newline, marked passage, line by line) is represented by the sum of the vectors of
the 3 words before and the 3 after it on its line (marks removed), the query by the 3 words either side of
``@placeholder``; the answer is the entity of highest cosine with the query (the first of equals). Their
vocabulary's quirks are kept: a word without a vector, and each missing window position, takes the vectors
file's first row. Words are looked up lower-cased when every word of the vectors is lower case (the authors'
``-downcase``). The vectors are ``--word-vectors FILE``, or trained on the release's train split
(:mod:`clinical_corpora.corpora.clicr.trained_vectors`); ``embeddings.json`` beside the predictions says which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from clinical_corpora.builders.contract.baseline import BaselineRequest, write_json
from clinical_corpora.core.hashing import sha256_file
from clinical_corpora.corpora.clicr.clicr_json import ENTITY_CLOSE, ENTITY_OPEN, marked_case, tokenized_query
from clinical_corpora.corpora.clicr.records import PLACEHOLDER
from clinical_corpora.corpora.clicr.released_rows import query_rows
from clinical_corpora.corpora.clicr.trained_vectors import (
    TRAINING_SPLIT,
    description,
    settings_for,
    train_word2vec,
    training_lines,
    word2vec_text,
)
from clinical_corpora.validation.metrics.clicr import WordVectors, read_word_vectors

WINDOW = 3
"""Words each side (the authors' ``-win_size``, 3 at prediction time)."""
PADDING = 0
"""The row a missing word or window position takes (the authors' index 0)."""
SAVED_VECTORS = "word_vectors.txt"


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


def word_vectors(request: BaselineRequest) -> tuple[WordVectors, list[str]]:
    """``--word-vectors``, or vectors trained on the release's train split; the lines saying which (also written
    to ``embeddings.json`` beside the predictions, with the trained vectors when ``--save-word-vectors``)."""
    if request.word_vectors is not None:
        read = read_word_vectors(request.word_vectors)
        used: dict[str, object] = {
            "embeddings": "file",
            "file": request.word_vectors.name,
            "sha256": sha256_file(request.word_vectors),
        }
        summary = [f"embeddings: the file {request.word_vectors} (sha256 {used['sha256']})"]
    else:
        settings = settings_for(request.training, request.seed)
        lines = training_lines(request.release.view)
        words, matrix = train_word2vec(lines, settings)
        text, read = word2vec_text(words, matrix)
        used = description(settings, len(lines), len(words))
        summary = [
            f"embeddings: word2vec trained with gensim on this release's {TRAINING_SPLIT} split ({len(lines)} lines, "
            f"{len(words)} words): {settings.summary()}"
        ]
        if request.training.save:
            saved = request.out / SAVED_VECTORS
            saved.parent.mkdir(parents=True, exist_ok=True)
            saved.write_text("\n".join(text) + "\n", encoding="utf-8")
            summary.append(f"{saved} (word2vec text format)")
    summary.append(write_json(request.out / "embeddings.json", {**used, "release_digest": request.release.digest}))
    return read, summary


def sim_entity(request: BaselineRequest) -> list[str]:
    """sim-entity: one ``<split>.json`` ``{query id: answer}`` per split, and what vectors it used."""
    request.release.of("clicr", "clicr")
    read, summary = word_vectors(request)
    vectors = Vectors(read, all(word == word.lower() for word in read.index))
    view = request.release.view
    cases = {row["id"]: entity_contexts(marked_case(row), vectors) for _, row in view.rows("clicr_documents")}
    written = []
    for split in request.splits("clicr"):
        predictions = {}
        for _, query in query_rows(view, ["id", "document_id", "query"], split):
            entities, contexts = cases.get(query["document_id"], ([], None))
            if contexts is not None:
                vector = query_vector(tokenized_query(query["query"]), vectors)
                predictions[query["id"]] = best_entity(entities, contexts, vector)
        written.append(write_json(request.out / f"{split}.json", predictions))
    return [*written, *summary]
