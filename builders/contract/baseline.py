"""What a corpus's baseline is given and writes: ``clincorp baseline CORPUS RELEASE --name NAME --out DIR``.

A baseline reads a release opened through the door (a :class:`GivenRelease`) and writes, for each split asked
for, predictions in the format its corpus's ``clincorp score`` reads; it returns the files written. A random
baseline draws from ``random.Random(seed)`` only, so one seed gives one set of predictions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from clinical_corpora.builders.contract.release_view import GivenRelease, ReleaseView


@dataclass(frozen=True)
class BaselineRequest:
    """A baseline run: the release, the baseline's name, its seed, the split (None: every split), ``--out`` and
    ``--word-vectors``."""

    release: GivenRelease
    name: str
    seed: int
    split: str | None
    out: Path
    word_vectors: Path | None = None
    """Word vectors (word2vec text format) for an embedding baseline."""

    def splits(self, config: str) -> list[str]:
        """The splits of ``config`` to predict (an unknown ``--split`` is an error naming the known ones)."""
        return self.release.splits(config, self.split)


Baseline = Callable[[BaselineRequest], list[str]]
"""A registered baseline: the request in, a line per file written out."""


def write_json(path: Path, predictions: Mapping[str, object]) -> str:
    """``predictions`` as one JSON object in ``path`` (folders made); the path, for the command's report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(predictions, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return str(path)


def held_splits(view: ReleaseView, config: str) -> list[str]:
    """The splits of ``config`` holding rows, in the release's order: those a card's baseline is scored on."""
    return [split for split in view.splits(config) if view.split_rows(config, split)]
