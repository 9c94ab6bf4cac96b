"""What a text-free release folder is called and holds, and the limits it is written to.

A text-free release ``<corpus>-<version>.text-free`` holds the full release's configs with every licensed text
replaced by a recipe, and the full release's own manifest, validation results, inputs and rejects in ``full/``.
"""

from __future__ import annotations

from typing import Final

from clinical_corpora.core.release_records import FULL_JSON_FILES

VARIANT: Final = "text-free"
TEXT_FREE_SUFFIX = ".text-free"
BATCH_ROWS = 1024
LEAK_LIMIT = 30
"""The longest run of a source document's characters any file of a text-free release may hold (the leak gate)."""


def is_full_file(name: str) -> bool:
    """Whether a file of the full release (a path relative to it) is kept in ``full/``: its JSON files. Its card,
    figures and croissant.json are descriptions of its rows, which ``clincorp rehydrate`` draws again."""
    return name in FULL_JSON_FILES
