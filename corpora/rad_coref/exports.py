"""rad_coref's exports: each patient's chains over its reports, one after the other, as CoNLL-2012."""

from __future__ import annotations

from clinical_corpora.builders.exporters.conll2012 import ChainLayout, Conll2012Export, Record


def report_texts(patient: Record) -> list[str]:
    return [report["text"] for report in patient["reports"]]


def report_index(mention: Record) -> int:
    return int(mention["report_index"])


PATIENT_CHAINS = ChainLayout(
    config="rad_coref",
    id_field="patient_id",
    mentions_field="mentions",
    members_field="mention_ids",
    texts=report_texts,
    text_index=report_index,
)
conll2012 = Conll2012Export(PATIENT_CHAINS)
