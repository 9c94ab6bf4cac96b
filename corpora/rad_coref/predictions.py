"""A system's coreference chains drawn against the gold in ``clincorp view --predictions``: the simple JSON
``clincorp score coref`` reads (``{"<patient id>": [[mention id, ...], ...]}``) over the released mention ids.
Each mention is labelled by the mention its chain links it to (the one before it), so a mention both link alike
reads as a match on the text, and one linked elsewhere as a label that differs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.display import DocumentDisplay, Group, Mark, Member, RowReader
from clinical_corpora.core.errors import SourceError
from clinical_corpora.corpora.rad_coref.display import patient_display
from clinical_corpora.validation.metrics.coref import load_chains_json

Chains = list[list[str]]


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
        gold[patient["patient_id"]] = _linked(
            patient_display(split, patient), [c["mention_ids"] for c in patient["chains"]]
        )
        system[patient["patient_id"]] = _linked(patient_display(split, _without_chains(patient)), chains)
    if predicted:
        raise SourceError(
            predictions, f"names patient(s) the release does not hold: {', '.join(sorted(predicted)[:5])}"
        )
    return {"gold": gold, "system": system}


def _without_chains(patient: dict[str, Any]) -> dict[str, Any]:
    return {**patient, "chains": []}


def _linked(display: DocumentDisplay, chains: Chains) -> DocumentDisplay:
    """``display`` with ``chains`` as its groups and each mention labelled by its antecedent."""
    marks = {mark.key: (index, mark) for index, passage in enumerate(display.passages) for mark in passage.marks}
    for _, unlinked in marks.values():
        unlinked.label = "no chain"
    groups = []
    for number, chain in enumerate(chains):
        ordered = sorted((m for m in chain if m in marks), key=lambda m: (marks[m][0], marks[m][1].fragments))
        for earlier, later in zip([None, *ordered], ordered, strict=False):
            marks[later][1].label = "new entity" if earlier is None else f"→ {_where(*marks[earlier])}"
        groups.append(Group(f"chain{number}", "chain", f"{len(chain)} mention(s)", [Member(m) for m in chain]))
    display.groups = groups
    return display


def _where(index: int, mark: Mark) -> str:
    start, end = mark.fragments[0]
    return f"report {index + 1} [{start}, {end})"
