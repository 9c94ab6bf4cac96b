"""The ``snomed_el_bigbio_kb`` config: a discharge note and its concept links in BigBio's ``kb`` schema.

One passage (the note); each annotation an entity typed by its hierarchy (``finding``, ``procedure``,
``body_structure``) and normalised to ``{db_name: "SNOMEDCT", db_id: <concept id>}``. Entity ids are
``<note_id>_<start>-<end>`` (annotations never overlap). The concept's FSN and semantic tag stay in the
``snomed_el`` and ``concepts`` configs.
"""

from __future__ import annotations

from clinical_corpora.corpora.snomed_el.records import Note
from clinical_corpora.schemas.bigbio import KbDocument, Normalized, entity_from_spans, laid_out

CONFIG = "snomed_el_bigbio_kb"
DB_NAME = "SNOMEDCT"


def kb_document(note: Note) -> KbDocument:
    """The BigBio ``kb`` view of one note."""
    passages, _ = laid_out([(f"{note.note_id}_text", "discharge note", note.text)])
    return KbDocument(
        id=note.note_id,
        document_id=note.note_id,
        passages=passages,
        entities=[
            entity_from_spans(
                f"{note.note_id}_{span.start}-{span.end}",
                span.hierarchy,
                [span],
                normalized=[Normalized(db_name=DB_NAME, db_id=str(span.concept_id))],
            )
            for span in note.annotations
        ],
        events=[],
        coreferences=[],
        relations=[],
    )
