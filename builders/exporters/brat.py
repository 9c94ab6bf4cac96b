"""Write BRAT standoff folders: ``<root>/<doc id>.txt`` and ``<doc id>.ann``, as brat and our reader read them."""

from __future__ import annotations

from pathlib import Path

from clinical_corpora.builders.exporters.base import write_text
from clinical_corpora.builders.sources.brat.annotations import BratDocument
from clinical_corpora.builders.sources.brat.folder import ANN_SUFFIX, TEXT_SUFFIX
from clinical_corpora.builders.sources.brat.standoff import write_brat
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.safe_names import inside


def write_brat_document(root: Path, doc_id: str, text: str, annotations: BratDocument | None) -> None:
    """One document; ``annotations`` None writes the ``.txt`` alone (a text brat shows unannotated)."""
    if annotations is not None:
        try:
            content = write_brat(annotations)
        except ValueError as error:
            raise ClincorpError(f"{doc_id}: {error}") from error
        write_text(inside(root, doc_id, ANN_SUFFIX), content)
    write_text(inside(root, doc_id, TEXT_SUFFIX), text)
