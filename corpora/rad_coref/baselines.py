"""``clincorp baseline rad_coref RELEASE --name string-match``: the string-match baseline of Datta et al. 2022
(§5.1, Table 7) on gold mentions, written as a CoNLL-2012 response per split for ``clincorp score coref``."""

from __future__ import annotations

from clinical_corpora.builders.contract.baseline import BaselineRequest
from clinical_corpora.builders.exporters.base import Record
from clinical_corpora.builders.exporters.conll2012_response import write_responses
from clinical_corpora.corpora.rad_coref.exports import PATIENT_CHAINS
from clinical_corpora.corpora.rad_coref.string_match import string_match_chains


def _string_match(mentions: list[Record]) -> list[list[str]]:
    return [
        [str(mention) for mention in chain] for chain in string_match_chains((m["id"], m["text"]) for m in mentions)
    ]


def string_match(request: BaselineRequest) -> list[str]:
    """A patient's mentions with one lower-cased string form one chain."""
    return write_responses(request, PATIENT_CHAINS, _string_match)
