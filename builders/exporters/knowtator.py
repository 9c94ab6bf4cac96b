"""Write Knowtator XML in the ODIE schema (``<doc>.txt.knowtator.xml``), as Knowtator and eHOST and
``builders.sources.knowtator.xml`` read it: one ``<annotation>`` per markable (a ``<span>`` per fragment) and per
pair (on its anaphor's span), a ``<classMention>`` for each, and its string and complex slot mentions."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from lxml import etree

from clinical_corpora.builders.sources.knowtator.document import (
    FRAGMENT_SEPARATOR,
    MARKABLE_CLASS,
    PAIR_CLASS,
    KnowtatorDocument,
    Markable,
)
from clinical_corpora.core.safe_names import inside

KNOWTATOR_SUFFIX = ".knowtator.xml"


def knowtator_xml(document: KnowtatorDocument, annotator: str) -> bytes:
    """The XML of one document (text source ``<doc_id>.txt``); every annotation is ``annotator``'s."""
    root = etree.Element("annotations", textSource=f"{document.doc_id}.txt")
    markables = {markable.id: markable for markable in document.markables}
    for markable in document.markables:
        _annotation(root, markable.id, markable, document.text, annotator)
    for pair in document.pairs:
        _annotation(root, pair.id, markables[pair.anaphor_id], document.text, annotator)
    slots: list[tuple[str, str, str, bool]] = []
    for markable in document.markables:
        values: dict[str, str | None] = {
            "semantic_class": markable.semantic_class,
            "grammatical_category": markable.grammatical_category,
            "sentence_function": markable.sentence_function,
        }
        slots += _class_mention(root, markable.id, MARKABLE_CLASS, markable.text, values, ())
    for pair in document.pairs:
        pair_values: dict[str, str | None] = {"relation_type": pair.relation, "bagga_class": pair.bagga_class}
        references = (("anaphor", pair.anaphor_id), ("antecedent", pair.antecedent_id))
        slots += _class_mention(root, pair.id, PAIR_CLASS, PAIR_CLASS, pair_values, references)
    for slot_id, name, value, complex_slot in slots:
        kind = "complexSlotMention" if complex_slot else "stringSlotMention"
        element = etree.SubElement(root, kind, id=slot_id)
        etree.SubElement(element, "mentionSlot", id=name)
        etree.SubElement(element, f"{kind}Value", value=value)
    etree.indent(root, space="  ")
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8") + b"\n"


def write_knowtator_file(folder: Path, document: KnowtatorDocument, annotator: str) -> Path:
    """Write ``folder/<doc_id>.txt.knowtator.xml``; returns its path."""
    path = inside(folder, document.doc_id, f".txt{KNOWTATOR_SUFFIX}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(knowtator_xml(document, annotator))
    return path


def _annotation(root: etree._Element, mention_id: str, markable: Markable, text: str, annotator: str) -> None:
    element = etree.SubElement(root, "annotation")
    etree.SubElement(element, "mention", id=mention_id)
    etree.SubElement(element, "annotator", id=annotator).text = annotator
    for start, end in markable.fragments:
        etree.SubElement(element, "span", start=str(start), end=str(end))
    spanned = FRAGMENT_SEPARATOR.join(text[start:end] for start, end in markable.fragments)
    etree.SubElement(element, "spannedText").text = spanned


def _class_mention(
    root: etree._Element,
    mention_id: str,
    mention_class: str,
    label: str,
    values: Mapping[str, str | None],
    references: tuple[tuple[str, str], ...],
) -> list[tuple[str, str, str, bool]]:
    """Add a ``<classMention>``; returns its slot mentions (id, slot, value, complex) to write after it."""
    element = etree.SubElement(root, "classMention", id=mention_id)
    etree.SubElement(element, "mentionClass", id=mention_class).text = label
    slots = [(f"{mention_id}.{name}", name, target, True) for name, target in references]
    slots += [(f"{mention_id}.{name}", name, value, False) for name, value in values.items() if value is not None]
    for slot_id, *_ in slots:
        etree.SubElement(element, "hasSlotMention", id=slot_id)
    return slots
