"""A system's coreference chains drawn against the gold in ``clincorp view --predictions``: the simple JSON
``clincorp score coref`` reads (``{"<patient id>": [[mention id, ...], ...]}``) over the released mention ids.
Each mention is labelled by the mention its chain links it to (``contract/display.linked_display``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.display import DocumentDisplay, Mark, RowReader, linked_display
from clinical_corpora.core.errors import SourceError
from clinical_corpora.corpora.rad_coref.display import patient_display
from clinical_corpora.validation.metrics.coref import load_chains_json


def prediction_displays(predictions: Path, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
    """The gold and the predicted chains of every released patient (a patient the file does not name has no
    predicted chain); a patient or mention id the release does not hold is an error naming it."""
    predicted = load_chains_json(predictions)
    gold: dict[str, DocumentDisplay] = {}
    system: dict[str, DocumentDisplay] = {}
    for split, patient in rows("rad_coref", None):
        mentions = {mention["id"] for mention in patient["mentions"]}
        chains = [[str(mention) for mention in chain] for chain in predicted.pop(patient["patient_id"], [])]
        unknown = sorted({mention for chain in chains for mention in chain} - mentions)
        if unknown:
            raise SourceError(
                predictions,
                f"mention id(s) {', '.join(unknown[:5])} are not mentions of this patient in the release",
                record=patient["patient_id"],
            )
        gold[patient["patient_id"]] = linked_display(
            patient_display(split, patient), [c["mention_ids"] for c in patient["chains"]], _where
        )
        system[patient["patient_id"]] = linked_display(patient_display(split, _without_chains(patient)), chains, _where)
    if predicted:
        raise SourceError(
            predictions, f"names patient(s) the release does not hold: {', '.join(sorted(predicted)[:5])}"
        )
    return {"gold": gold, "system": system}


def _without_chains(patient: dict[str, Any]) -> dict[str, Any]:
    return {**patient, "chains": []}


def _where(index: int, mark: Mark) -> str:
    start, end = mark.fragments[0]
    return f"report {index + 1} [{start}, {end})"
