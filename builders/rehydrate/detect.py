"""Which encoding a user's copy that is not UTF-8 is in, as charset-normalizer guesses it from its first bytes: what
``clincorp rehydrate --check`` tells the user to name with ``--source-encoding``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clinical_corpora.builders.sources.mimic.csv_files import open_binary
from clinical_corpora.core.errors import EncodingError, SourceError

SAMPLE_BYTES = 1 << 20


def guessed_encodings(path: Path) -> list[str]:
    """The encodings charset-normalizer finds the first megabyte of ``path`` (gunzipped) may be in, its best
    guess first (none: it found none)."""
    from charset_normalizer import from_bytes

    try:
        with open_binary(path) as stream:
            sample = stream.read(SAMPLE_BYTES)
    except (OSError, EOFError, SourceError):
        return []
    best = from_bytes(sample).best()
    if best is None:
        return []
    return list(dict.fromkeys([str(best.encoding), *map(str, best.could_be_from_charset)]))


def encoding_problem(error: EncodingError, sources: dict[str, Path | None]) -> dict[str, Any]:
    """What ``--check`` says of a copy it cannot read as text: its source, file, the reader's words and the
    encoding it seems to be in, with the option that reads it."""
    path = Path(error.path)
    source = next(
        (name for name, root in sources.items() if root is not None and (path == root or root in path.parents)),
        None,
    )
    guesses = guessed_encodings(path)
    problem: dict[str, Any] = {
        "source": source,
        "file": error.path,
        "problem": error.message,
        "encoding": guesses[0] if guesses else None,
        "could_be": guesses[1:],
    }
    if guesses and source is not None:
        problem["option"] = f"--source-encoding {source}={guesses[0]}"
    return problem
