"""Coreference baselines on ODIE's gold markables, of the kind the i2b2/VA 2011 coreference papers report as
reference points (ours, not Savova et al. 2011's): exact-string links markables whose lower-cased text is equal;
head-match links markables whose last word (lower-cased, punctuation stripped) is equal, a discontinuous
markable's last word being its last fragment's. Each writes a CoNLL-2012 response per split for
``clincorp score coref``."""

from __future__ import annotations

import string

from clinical_corpora.builders.contract.baseline import BaselineRequest, held_splits
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.exporters.base import Record
from clinical_corpora.builders.exporters.conll2012_response import grouped_by, key_and_response, write_responses
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.corpora.odie_anaphora.exports import NOTE_CHAINS
from clinical_corpora.validation.metrics.coref import table_7_f1


def exact_text(markable: Record) -> str:
    return str(markable["text"]).lower()


def head_word(markable: Record) -> str:
    """The last word of the markable (of its last fragment), lower-cased, without surrounding punctuation."""
    fragments = markable.get("fragments") or [markable]
    words = str(fragments[-1]["text"]).split()
    return (words[-1] if words else "").strip(string.punctuation).lower()


def exact_string(request: BaselineRequest) -> list[str]:
    """Markables with equal lower-cased text form one chain."""
    return write_responses(request, NOTE_CHAINS, grouped_by(exact_text))


def head_match(request: BaselineRequest) -> list[str]:
    """Markables with equal head words form one chain."""
    return write_responses(request, NOTE_CHAINS, grouped_by(head_word))


def card_scores(view: ReleaseView) -> list[BaselineScore]:
    """exact-string and head-match on each split holding notes, scored as ``clincorp score coref`` scores them."""
    return [
        BaselineScore(
            baseline=name,
            split=split,
            scorer="coref",
            metrics=table_7_f1(*key_and_response(view, NOTE_CHAINS, grouped_by(match), split)),
        )
        for name, match in (("exact-string", exact_text), ("head-match", head_word))
        for split in held_splits(view, NOTE_CHAINS.config)
    ]
