"""The ``rad_coref_bigbio_kb`` config: a patient's reports, mentions and chains in BigBio's ``kb`` schema.

One passage per report, in CHARTTIME order, placed as BigBio joins passages (one space between), so a
mention's offsets are its offsets into its report plus where the report's passage begins. Each mention
an entity typed ``Finding`` or ``Device``; each chain of two or more mentions a coreference (a mention in
no coreference is a singleton). Ids are prefixed with the patient id. Report dates, descriptions and
modalities stay in the ``rad_coref`` config.
"""

from __future__ import annotations

from clinical_corpora.corpora.rad_coref.records import Patient
from clinical_corpora.schemas.bigbio import Coreference, KbDocument, entity_from_spans, laid_out

CONFIG = "rad_coref_bigbio_kb"


def kb_document(patient: Patient) -> KbDocument:
    """The BigBio ``kb`` view of one patient."""
    prefix = f"{patient.patient_id}_"
    passages, starts = laid_out(
        [(f"{prefix}report_{report.row_id}", "radiology report", report.text) for report in patient.reports]
    )
    return KbDocument(
        id=patient.patient_id,
        document_id=patient.patient_id,
        passages=passages,
        entities=[
            entity_from_spans(prefix + mention.id, mention.type, [mention], shift=starts[mention.report_index])
            for mention in patient.mentions
        ],
        events=[],
        coreferences=[
            Coreference(id=f"{prefix}chain_{chain.id}", entity_ids=[prefix + mention for mention in chain.mention_ids])
            for chain in patient.chains
            if len(chain.mention_ids) > 1
        ],
        relations=[],
    )
