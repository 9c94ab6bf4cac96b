"""``clincorp baseline rad_coref RELEASE --name string-match``: the string-match baseline of Datta et al. 2022
(§5.1, Table 7) on gold mentions, written as a CoNLL-2012 response per split for ``clincorp score coref``."""

from __future__ import annotations

from clinical_corpora.builders.contract.baseline import BaselineRequest, held_splits
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.exporters.base import Record
from clinical_corpora.builders.exporters.conll2012_response import key_and_response, write_responses
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.corpora.rad_coref.exports import PATIENT_CHAINS
from clinical_corpora.corpora.rad_coref.string_match import string_match_chains
from clinical_corpora.validation.metrics.coref import table_7_f1


def _string_match(mentions: list[Record]) -> list[list[str]]:
    return [
        [str(mention) for mention in chain] for chain in string_match_chains((m["id"], m["text"]) for m in mentions)
    ]


def string_match(request: BaselineRequest) -> list[str]:
    """A patient's mentions with one lower-cased string form one chain."""
    return write_responses(request, PATIENT_CHAINS, _string_match)


def card_scores(view: ReleaseView) -> list[BaselineScore]:
    """string-match on each split holding patients, scored as ``clincorp score coref`` scores its response."""
    return [
        BaselineScore(
            baseline="string-match",
            split=split,
            scorer="coref",
            metrics=table_7_f1(*key_and_response(view, PATIENT_CHAINS, _string_match, split)),
        )
        for split in held_splits(view, PATIENT_CHAINS.config)
    ]
