"""Every row a rehydration writes, checked against its record model before anything is published: a span whose
text is not the slice of its document its offsets name (a recipe shifted by one character) is never written."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from datasets import Features
from pydantic import BaseModel, ValidationError

from clinical_corpora.core.errors import record_name
from clinical_corpora.core.release_manifest import first_problem
from clinical_corpora.schemas.features import LabelIdError, row_decoder
from clinical_corpora.schemas.licensed import holds_lost, licensed_tree


class RestoredRows:
    """Checks the restored rows of one config against its record model."""

    def __init__(self, model: type[BaseModel], features: Features) -> None:
        self.model = model
        self.tree = licensed_tree(model)
        self.decode = row_decoder(features)
        self.id_field: str = getattr(model, "id_field", "id")

    def problems(self, batch: pa.RecordBatch) -> list[tuple[int, str]]:
        """(position, why) of each row of a restored batch that is not a valid record; a row holding a string
        re-anchoring lost (null) was checked as the probe re-anchoring placed it, and is not checked again."""
        rows = enumerate(batch.to_pylist())
        found = [(position, self.problem(row)) for position, row in rows if not holds_lost(row, self.tree)]
        return [(position, problem) for position, problem in found if problem is not None]

    def problem(self, row: dict[str, Any]) -> str | None:
        """Why a restored row (as stored) is not a valid record, or None."""
        try:
            self.model.model_validate(self.decode(row))
        except LabelIdError as error:
            return f"field {error.field}: {error.problem}"
        except ValidationError as error:
            return first_problem(error)
        return None

    def record(self, batch: pa.RecordBatch, position: int) -> str:
        """The id of a row, cut short: an id that is not a valid record's may hold anything."""
        return str(record_name(batch.column(self.id_field)[position].as_py()))

    def without(self, batch: pa.RecordBatch, positions: list[int]) -> pa.RecordBatch:
        """``batch`` without the rows at ``positions``."""
        dropped = set(positions)
        return batch.filter(pa.array([position not in dropped for position in range(batch.num_rows)]))
