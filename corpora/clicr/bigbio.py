"""The ``clicr_bigbio_qa`` config: CliCR's cloze queries in BigBio's ``qa`` schema.

``question`` is the learning point with its ``@placeholder``, ``context`` the passage, ``answer`` every
accepted answer (the original entity first, then its UMLS synonyms), ``type`` ``cloze`` and ``choices``
empty. The answers' CUIs, semantic types, categories and origins, the title and ``answer_in_passage``
stay in the ``clicr`` config.
"""

from __future__ import annotations

from clinical_corpora.corpora.clicr.records import ClicrQuery
from clinical_corpora.schemas.bigbio import QaRecord

CONFIG = "clicr_bigbio_qa"
QUESTION_TYPE = "cloze"


def qa_record(query: ClicrQuery) -> QaRecord:
    """The BigBio ``qa`` view of one cloze query."""
    return QaRecord(
        id=query.id,
        question_id=query.id,
        document_id=query.document_id,
        question=query.query,
        type=QUESTION_TYPE,
        choices=[],
        context=query.context,
        answer=[answer.text for answer in query.answers],
    )
