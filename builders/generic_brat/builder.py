"""The generic BRAT builder: a BRAT corpus configured in its corpus.yaml alone, no Python of its own.

corpus.yaml names ``builder: clinical_corpora.builders.generic_brat.builder:BratBuilder`` and declares, under
``brat:`` (``core/brat_declaration.py``), its entity types, relation types and entity attributes, and which
folder of its BRAT source holds which split. The builder releases one row per note (``records.py``: the model is
made from the declaration), quarantines every annotation outside the declaration or broken on its own (file,
line and reason; ``declared.py``), names each note's ``.txt`` for the text-free release and rehydration, and
draws the notes for ``clincorp view`` (entities as marks, relations as arcs).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from clinical_corpora.builders.contract.base import BuildContext, Builder, BuilderOptions, Row
from clinical_corpora.builders.contract.display import DocumentDisplay, Group, Mark, Member, Passage, RowReader
from clinical_corpora.builders.generic_brat.declared import declared_only
from clinical_corpora.builders.generic_brat.records import ATTRIBUTES, RELATIONS, note_model
from clinical_corpora.builders.sources.brat.annotations import BratDocument
from clinical_corpora.builders.sources.brat.folder import ANN_SUFFIX, TEXT_SUFFIX, brat_documents
from clinical_corpora.builders.sources.brat.standoff import read_brat_document
from clinical_corpora.builders.sources.discovery import Document
from clinical_corpora.builders.sources.documents import read_document_files
from clinical_corpora.core.brat_declaration import BINARY, BratDeclaration
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.core.locators import locator
from clinical_corpora.core.manifest import CorpusManifest


@dataclass(frozen=True)
class BratScheme:
    """A corpus's declaration with its source, config and split folders resolved."""

    declaration: BratDeclaration
    source: str
    config: str
    folders: Mapping[str, str]
    """Split → its folder inside the source."""


class BratBuilder(Builder):
    """Builds the BRAT corpus its corpus.yaml declares; :meth:`for_corpus` makes the corpus's own subclass."""

    SCHEME: ClassVar[BratScheme]

    @classmethod
    def for_corpus(cls, corpus: CorpusManifest, options: BuilderOptions) -> Builder:
        """This builder for ``corpus``, its record model made from the corpus's ``brat:`` declaration."""
        declaration = corpus.brat
        if declaration is None:
            raise ClincorpError(
                f"{corpus.name}: corpus.yaml names the generic BRAT builder but declares no brat: section (its "
                "entity types, relation types and attributes); docs/developing.md shows one"
            )
        config = declaration.config or corpus.default_config
        if set(corpus.configs) != {config}:
            raise ClincorpError(
                f"{corpus.name}: the generic BRAT builder releases one config, {config!r}; corpus.yaml declares "
                f"{sorted(corpus.configs)}"
            )
        source = declaration.source or next(iter(corpus.sources))
        folders = {split: declaration.folder_of(split) for split in corpus.configs[config].splits}
        scheme = BratScheme(declaration, source, config, folders)
        attributes = {
            "SCHEME": scheme,
            "CONFIGS": {config: note_model(corpus.name, declaration)},
            "RECORD_CONFIG": config,
            "DOCUMENTS": {source: " or ".join(f"{folder}/<note>.txt and .ann" for folder in folders.values())},
        }
        return type(f"{cls.__name__}[{corpus.name}]", (cls,), attributes)(options)

    def shards(self, ctx: BuildContext) -> dict[str, Any]:
        return {"documents": brat_documents(ctx.source(self.SCHEME.source))}

    def generate_shard(self, ctx: BuildContext, documents: Sequence[Document] = ()) -> Iterator[Row]:
        """One row per note; a broken or undeclared annotation fails the build or, quarantined, is left out of
        its note (with what depends on it) and the note released. A ``.txt`` without its ``.ann`` is a note
        without annotations, as brat shows it."""
        scheme, root = self.SCHEME, ctx.source(self.SCHEME.source)
        model = self.CONFIGS[scheme.config]

        def quarantine(error: SourceError) -> None:
            ctx.reject(error, "annotation")

        for document in documents:
            ann_path = document.paths.get(ANN_SUFFIX) or root / f"{document.id}{ANN_SUFFIX}"
            with ctx.record(str(ann_path)):
                split = self._split_of(document, ann_path)
                text, doc = read_brat_document(
                    document, text_without_ann=True, on_broken=quarantine, max_bytes=self.options.max_file_bytes
                )
                doc = declared_only(doc, ann_path, scheme.declaration, quarantine)
                yield Row(scheme.config, split, model.model_validate(note_fields(document.id, text, doc, scheme)))

    def _split_of(self, document: Document, path: Any) -> str:
        """The split whose folder holds ``document`` (the deepest, when folders nest)."""
        holding = [
            (folder, split) for split, folder in self.SCHEME.folders.items() if document.id.startswith(f"{folder}/")
        ]
        if not holding:
            expected = ", ".join(f"{folder}/ ({split})" for split, folder in self.SCHEME.folders.items())
            raise SourceError(path, f"expected the note inside a split's folder: {expected}")
        return max(holding)[1]

    def source_documents(self, ctx: BuildContext, config: str, row: Mapping[str, Any]) -> list[str]:
        return [locator(self.SCHEME.source, f"{row['id']}{TEXT_SUFFIX}")]

    def read_documents(self, ctx: BuildContext, locators: Collection[str]) -> Iterator[tuple[str, str]]:
        source = self.SCHEME.source
        documents = brat_documents(ctx.source(source), quiet=True)
        return read_document_files(source, documents, locators, self.options.max_file_bytes, ctx.encoding(source))

    def displays(self, rows: RowReader) -> Iterator[DocumentDisplay]:
        for split, note in rows(self.SCHEME.config, None):
            yield note_display(split, note, self.SCHEME.config)


def note_fields(note_id: str, text: str, doc: BratDocument, scheme: BratScheme) -> dict[str, Any]:
    """The fields of a note's record: its text, entities (with their attributes) and relations."""
    declared = scheme.declaration.attributes
    given: dict[str, dict[str, Any]] = {bound.id: {} for bound in doc.textbounds}
    for attribute in doc.attributes:
        given[attribute.target][attribute.name] = True if declared[attribute.name] == BINARY else attribute.value
    entities = []
    for bound in doc.textbounds:
        entity: dict[str, Any] = {"start": bound.start, "end": bound.end, "text": text[bound.start : bound.end]}
        pieces = bound.fragments if len(bound.fragments) > 1 else ()
        entity |= {"id": bound.id, "label": bound.type, "fragments": [_span(text, *piece) for piece in pieces]}
        if declared:
            entity[ATTRIBUTES] = given[bound.id]
        entities.append(entity)
    fields: dict[str, Any] = {"id": note_id, "text": text, "entities": entities}
    if scheme.declaration.relations:
        fields[RELATIONS] = [
            {
                "id": relation.id,
                "label": relation.type,
                "arg1": relation.arguments[0][1],
                "arg2": relation.arguments[1][1],
            }
            for relation in doc.relations
        ]
    return fields


def _span(text: str, start: int, end: int) -> dict[str, Any]:
    return {"start": start, "end": end, "text": text[start:end]}


def note_display(split: str, note: dict[str, Any], config: str) -> DocumentDisplay:
    """What ``clincorp view`` draws of a note: each entity a mark (its attributes as facts), each relation an arc."""
    marks = []
    for entity in note["entities"]:
        fragments = [(piece["start"], piece["end"]) for piece in entity["fragments"]] or [
            (entity["start"], entity["end"])
        ]
        attributes = entity.get(ATTRIBUTES) or {}
        facts = [("id", entity["id"])] + [(name, str(value)) for name, value in attributes.items() if value]
        marks.append(Mark(entity["id"], "entity", entity["label"], fragments, facts))
    groups = [
        Group(
            relation["id"],
            "pair",
            relation["label"],
            [Member(relation["arg1"], "Arg1"), Member(relation["arg2"], "Arg2")],
        )
        for relation in note.get(RELATIONS, [])
    ]
    labels = sorted({entity["label"] for entity in note["entities"]})
    passage = Passage("note", "Note", note["text"], marks)
    return DocumentDisplay(note["id"], split, labels, [passage], groups, records=[(config, note["id"])])
