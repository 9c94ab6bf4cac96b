"""``snomed_el``'s released annotations read back as one table (never the note texts), for the gates and card."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.core.annotations import SpanAnnotation


def annotation_table(release: ReleaseView) -> pa.Table:
    """One row per released annotation: note_id, split, start, end, concept_id, fsn, hierarchy (ClassLabel id)."""
    notes = release.arrow("snomed_el", columns=["note_id", "annotations"])  # never the note texts
    annotations = notes.column("annotations").combine_chunks()
    parents = pc.list_parent_indices(annotations)
    items = pc.list_flatten(annotations)
    return pa.table(
        {
            "note_id": notes.column("note_id").take(parents),
            "split": release.split_labels("snomed_el").take(parents),
            **{name: items.field(name) for name in ("start", "end", "concept_id", "fsn", "hierarchy")},
        }
    )


def released_annotations(release: ReleaseView, notes: set[str] | None = None) -> list[SpanAnnotation]:
    """The released annotations (of ``notes`` only, when given: pairs of annotators compare the notes both
    annotated), as the reader's records (for agreement)."""
    table = annotation_table(release)
    if notes is not None:
        table = table.filter(pc.is_in(table.column("note_id"), value_set=pa.array(sorted(notes), pa.string())))
    return [
        SpanAnnotation(note_id, start, end, concept_id)
        for note_id, start, end, concept_id in zip(
            *(table.column(name).to_pylist() for name in ("note_id", "start", "end", "concept_id")), strict=True
        )
    ]


def concept_links(release: ReleaseView) -> pd.DataFrame:
    """Each annotation's concept checked against the ``concepts`` config (listed, same FSN and hierarchy)."""
    frame = annotation_table(release).to_pandas()
    concepts = release.arrow("concepts").select(["concept_id", "fsn", "hierarchy"]).to_pandas()
    merged = frame.merge(concepts, on="concept_id", how="left", suffixes=("", "_concept"), indicator=True)
    return pd.DataFrame(
        {
            "note_id": merged["note_id"],
            "concept_id": merged["concept_id"],
            "in_concepts": merged["_merge"] == "both",
            "same_fsn": merged["fsn"] == merged["fsn_concept"],
            "same_hierarchy": merged["hierarchy"] == merged["hierarchy_concept"],
        }
    )
