"""The two sides of a diff: a release given to ``clincorp diff`` (or ``release --previous``), opened through
the door (``report.open_release``) with its hashes checked beside the diff's reading, or the folder a run is
writing (its own output). Records are matched by the id field of the installed corpus's record models (nothing
the release names is imported), which the side is given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from clinical_corpora.builders.contract.release_view import ReleaseView, parquet_file
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.release_manifest import Variant

DEFAULT_ID = "id"


@dataclass
class OpenedRelease:
    """One side of a diff: its corpus, version, variant and data; ``release`` when it came through the door."""

    folder: Path
    corpus: str
    version: str
    variant: Variant
    digest: str | None
    id_fields: dict[str, str] = field(default_factory=dict)
    """Config → the field naming its records, as the installed corpus's record models say (default ``id``)."""
    confirmed: Callable[[], None] = lambda: None
    """Once the hashing of the release's files ends: a ClincorpError naming what differs from manifest.json."""
    view: ReleaseView = field(init=False)

    def __post_init__(self) -> None:
        self.view = ReleaseView(self.folder)

    def confirm(self) -> None:
        """Once the hashing of the release's files ends: a ClincorpError naming what differs from manifest.json
        (nothing read from the release may be reported before)."""
        self.confirmed()

    @property
    def text_free(self) -> bool:
        return self.variant == "text-free"

    def id_field(self, config: str) -> str:
        """The field naming a record of ``config``: the installed corpus's record model says which."""
        name = self.id_fields.get(config, DEFAULT_ID)
        if name not in self.view.features(config):
            raise ClincorpError(f"{self.folder}: config {config} has no id field {name!r} to match its records by")
        return str(name)

    def ids(self, config: str) -> tuple[pa.Array, pa.Array]:
        """Every record's id (as text) and split, in stored order; an error naming a repeated id."""
        name = self.id_field(config)
        ids = pc.cast(self.view.column(config, name, use_threads=False), pa.string()).combine_chunks()
        if pc.count_distinct(ids).as_py() != len(ids):
            split, _, record = self.view.repeated_ids(config, name)[0]
            raise ClincorpError(
                f"{self.folder}: config {config} holds record {record!r} twice ({split}): ids must be unique"
            )
        return ids, self.view.split_labels(config)

    def check_config(self, config: str) -> None:
        """Every parquet file of a config has the same features (a release made of mixed shards is refused)."""
        shards = self.view.shards(config)
        first = parquet_file(shards[0]).schema_arrow
        for shard in shards[1:]:
            if not parquet_file(shard).schema_arrow.equals(first, check_metadata=True):
                raise ClincorpError(f"{shard}: its features differ from those of {shards[0].name}")


def staged_release(folder: Path, corpus: str, version: str, id_fields: dict[str, str]) -> OpenedRelease:
    """The release a run is writing (its data only, before its manifest): this run's own output, trusted."""
    return OpenedRelease(folder, corpus, version, "full", None, id_fields)


def same_corpus(old: OpenedRelease, new: OpenedRelease) -> None:
    if old.corpus != new.corpus:
        raise ClincorpError(
            f"{old.folder} is a release of {old.corpus}, {new.folder} of {new.corpus}: "
            "diff compares two releases of one corpus"
        )
