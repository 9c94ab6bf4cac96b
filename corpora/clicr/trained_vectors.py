"""sim-entity's word vectors trained on a clicr release's own train split, with gensim's Word2Vec.

Šuster & Daelemans 2018 (appendix A; their ``run_emb_baseline.py``) train the word2vec tool with CBOW, a window
of 5 words, words seen at least 200 times, 750 dimensions and 5 negative samples, on the lower-cased CliCR
training split together with PubMed abstracts and PMC articles (over 9 billion words). Here the corpus is the
release's train split alone (PubMed is no part of a release, so the vectors are weaker than theirs), each case
read as sim-entity reads it (title and marked passage, a line a sentence, marks removed), lower-cased; the
tool's other defaults are kept (5 epochs, learning rate 0.05 for CBOW, downsampling 1e-3, the mean of the
context's vectors). As in the tool's output, the first row is ``</s>``, the row a word without a vector and a
missing window position take: the tool never trains it (it keeps a tiny random start), here it is zero.
Training is deterministic: one worker thread, ``--seed``, and a word hash that is not Python's salted one.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace

import numpy as np

from clinical_corpora.builders.contract.embedding_training import EmbeddingTraining
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.corpora.clicr.clicr_json import ENTITY_CLOSE, ENTITY_OPEN, marked_case
from clinical_corpora.validation.metrics.clicr import WordVectors

TRAINING_SPLIT = "train"
PADDING_WORD = "</s>"
"""The word2vec tool's first word (its end of line), which it never trains."""


@dataclass(frozen=True)
class Word2VecSettings:
    """word2vec's settings: the paper's (appendix A) unless ``--embedding-dimension``/``--embedding-min-count``."""

    dimension: int = 750
    window: int = 5
    min_count: int = 200
    negative: int = 5
    epochs: int = 5
    learning_rate: float = 0.05
    downsampling: float = 1e-3
    seed: int = 0

    def summary(self) -> str:
        return (
            f"CBOW, {self.dimension} dimensions, window {self.window}, min count {self.min_count}, "
            f"{self.negative} negative samples, {self.epochs} epochs, seed {self.seed}, 1 worker"
        )


def settings_for(training: EmbeddingTraining, seed: int) -> Word2VecSettings:
    """The paper's settings with what the command changed, and its ``--seed``."""
    paper = Word2VecSettings()
    return replace(
        paper,
        dimension=training.dimension or paper.dimension,
        min_count=training.min_count or paper.min_count,
        seed=seed,
    )


class TrainingLines:
    """The training split's lines, words split afresh on each pass (gensim reads a corpus once per epoch)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def __iter__(self) -> Iterator[list[str]]:
        return (line.split() for line in self.lines)


def training_lines(view: ReleaseView) -> list[str]:
    """Each non-empty line of the train split's cases, entity marks removed, lower-cased."""
    if TRAINING_SPLIT not in view.splits("clicr_documents"):
        raise ClincorpError(f"{view.folder} has no {TRAINING_SPLIT} split to train sim-entity's word vectors on")
    lines: list[str] = []
    for _, row in view.rows("clicr_documents", TRAINING_SPLIT):
        text = marked_case(row).replace(ENTITY_OPEN, "").replace(ENTITY_CLOSE, "").lower()
        lines.extend(line for line in text.split("\n") if line.split())
    return lines


def word_hash(word: str) -> int:
    """A hash of a word that is the same in every process (Python's ``hash`` of a str is salted)."""
    return zlib.crc32(word.encode("utf-8"))


def train_word2vec(lines: list[str], settings: Word2VecSettings) -> tuple[list[str], np.ndarray]:
    """The words (``</s>`` first) and their vectors, trained on ``lines`` with gensim's Word2Vec."""
    try:
        from gensim.models import Word2Vec  # imported lazily: only training needs it
    except ImportError as error:
        raise ClincorpError(
            "sim-entity trains word vectors with gensim when no --word-vectors FILE is given; install it with: "
            "pip install 'clinical-corpora[embeddings]'"
        ) from error
    corpus = TrainingLines(lines)
    model = Word2Vec(
        vector_size=settings.dimension,
        window=settings.window,
        min_count=settings.min_count,
        sg=0,
        cbow_mean=1,
        hs=0,
        negative=settings.negative,
        alpha=settings.learning_rate,
        sample=settings.downsampling,
        epochs=settings.epochs,
        seed=settings.seed,
        workers=1,
        hashfxn=word_hash,
    )
    model.build_vocab(corpus)
    if not len(model.wv):
        raise ClincorpError(
            f"no word of the {TRAINING_SPLIT} split ({len(lines)} lines) occurs {settings.min_count} times or more: "
            "give a lower --embedding-min-count (the paper's 200 suits the full CliCR)"
        )
    model.train(corpus, total_examples=model.corpus_count, epochs=model.epochs)
    padding = np.zeros((1, settings.dimension), dtype=model.wv.vectors.dtype)
    return [PADDING_WORD, *model.wv.index_to_key], np.vstack([padding, model.wv.vectors])


def word2vec_text(words: list[str], matrix: np.ndarray) -> tuple[list[str], WordVectors]:
    """The vectors as lines of the word2vec text format, and as read back from those lines (so that predictions
    made now equal those made with the saved file)."""
    lines = [f"{len(words)} {matrix.shape[1]}"]
    lines += [
        word + " " + " ".join(f"{value:.9g}" for value in row.tolist()) for word, row in zip(words, matrix, strict=True)
    ]
    read_back = np.array([line.split(" ")[1:] for line in lines[1:]], dtype=np.float64)
    return lines, WordVectors({word: row for row, word in reversed(list(enumerate(words)))}, read_back)


def gensim_version() -> str:
    from gensim import __version__

    return str(__version__)


def description(settings: Word2VecSettings, lines: int, words: int) -> dict[str, object]:
    """What the trained vectors are, for ``embeddings.json``."""
    return {
        "embeddings": "trained",
        "library": f"gensim {gensim_version()} Word2Vec",
        "split": TRAINING_SPLIT,
        "lines": lines,
        "words": words,
        "settings": {"model": "cbow", **asdict(settings)},
        "paper": "Šuster & Daelemans 2018, appendix A: CBOW, 750 dimensions, window 5, min count 200, "
        "5 negative samples, on the CliCR training split and PubMed/PMC",
    }
