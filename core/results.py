"""A result record: a system's scores on one release, bound to the release's digest (``clincorp score --record``).

The digest is the one ``clincorp release`` prints (the sha256 of the release's manifest.json). A record is made on
a release that holds text (a full release, or one rehydrated byte for byte); a text-free release keeps its full
release's manifest in ``full/manifest.json``, so the digest of that file is the full release's and a record
made on either side is accepted on both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clinical_corpora.core.errors import SourceError

SHA256 = r"^[0-9a-f]{64}$"


class ResultRecord(BaseModel):
    """One system's scores on one release's config and split, with what makes them comparable."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    digest: str = Field(pattern=SHA256, description="the release's digest (sha256 of its manifest.json)")
    corpus: str
    version: str
    variant: str
    config: str | None
    split: str | None = Field(description="the split scored; None for every split")
    scorer: str
    scorer_version: str = Field(description="the clinical-corpora version whose scorer computed the metrics")
    system: str
    metrics: dict[str, float]
    made: str = Field(description="when the record was made, ISO 8601 in UTC")

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")


def read_record(path: Path) -> ResultRecord:
    """The result record in ``path``; a SourceError naming it and its first problem otherwise."""
    try:
        return ResultRecord.model_validate_json(path.read_bytes())
    except OSError as error:
        raise SourceError(path, f"cannot read: {error.strerror}") from error
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise SourceError(
            path,
            f"not a result record ({where + ': ' if where else ''}{first['msg']}): expected clincorp score --record",
        ) from error


HUB_DATASET_ID = r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$"
"""A Hugging Face Hub dataset id, ``owner/name``."""


def eval_results_entries(record: ResultRecord, dataset_id: str) -> list[dict[str, object]]:
    """The record as entries of the Hub's evaluation-results YAML (``.eval_results/*.yaml``: one entry per metric,
    ``dataset.id``/``task_id``, ``value``, ``date``, ``notes``). The Hub's format has no field for a release's
    digest, so ``notes`` carries it with everything else the record says: nothing of the record is lost."""
    task = f"{record.config or record.corpus}/{record.split or 'all'}"
    notes = (
        f"{record.system} scored by clincorp score {record.scorer} (clinical-corpora {record.scorer_version}) on "
        f"{record.corpus} {record.version} ({record.variant}), config {record.config or '-'}, split "
        f"{record.split or 'all'}; release digest sha256:{record.digest}"
    )
    return [
        {
            "dataset": {"id": dataset_id, "task_id": f"{task}/{metric}"},
            "value": value,
            "date": record.made,
            "notes": notes,
        }
        for metric, value in record.metrics.items()
    ]


BASELINE_NAME = r"^[a-z][a-z0-9-]*$"
METRIC_NAME = r"^[a-z][a-z0-9_.]*$"


class BaselineScore(BaseModel):
    """One baseline's scores on one split of a release, as ``clincorp release`` measures them for the card (and
    records them in validation.json, where a text-free release's card reads them): the metrics are those
    ``clincorp score`` reports for the baseline's predictions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    baseline: str = Field(pattern=BASELINE_NAME, max_length=64)
    split: str = Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)
    scorer: str = Field(pattern=BASELINE_NAME, max_length=64, description="the clincorp score NAME it is scored by")
    metrics: dict[Annotated[str, Field(pattern=METRIC_NAME, max_length=64)], float] = Field(max_length=20)
    seed: int | None = Field(default=None, description="a random baseline's seed")

    def keys(self) -> dict[str, float]:
        """Each metric under its key in corpus.yaml's ``published:`` (``baseline.<name>.<split>.<metric>``)."""
        return {f"baseline.{self.baseline}.{self.split}.{name}": value for name, value in self.metrics.items()}
