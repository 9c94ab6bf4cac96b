"""The ``odie_anaphora_bigbio_kb`` config: a note's markables, pairs and chains in BigBio's ``kb`` schema.

One passage (the note); each markable an entity typed by its semantic class, one text and offset pair
per fragment; each pair a relation (type the relation, ``arg1`` the anaphor, ``arg2`` its antecedent);
each identity chain a coreference. Ids are prefixed with the note id. Grammatical category, sentence
function, Bagga class, institution and note type stay in the ``odie_anaphora`` config.
"""

from __future__ import annotations

from clinical_corpora.corpora.odie_anaphora.records import OdieDocument
from clinical_corpora.schemas.bigbio import Coreference, KbDocument, Relation, entity_from_spans, laid_out

CONFIG = "odie_anaphora_bigbio_kb"


def kb_document(document: OdieDocument) -> KbDocument:
    """The BigBio ``kb`` view of one note."""
    prefix = f"{document.id}_"
    passages, _ = laid_out([(prefix + "text", "clinical note", document.text)])
    return KbDocument(
        id=document.id,
        document_id=document.id,
        passages=passages,
        entities=[
            entity_from_spans(prefix + markable.id, markable.semantic_class, markable.fragments)
            for markable in document.markables
        ],
        events=[],
        coreferences=[
            Coreference(id=prefix + chain.id, entity_ids=[prefix + markable for markable in chain.markable_ids])
            for chain in document.chains
        ],
        relations=[
            Relation(
                id=prefix + pair.id,
                type=pair.relation,
                arg1_id=prefix + pair.anaphor_id,
                arg2_id=prefix + pair.antecedent_id,
                normalized=[],
            )
            for pair in document.pairs
        ],
    )
