"""Reader for Knowtator XML anaphora annotations (the ODIE schema of Savova et al. 2011).

Knowtator writes one ``<doc>.txt.knowtator.xml`` per document and annotator::

    <annotations textSource="doc.txt">
      <annotation>
        <mention id="M1"/><annotator id="A">name</annotator>
        <span start="0" end="8"/><spannedText>the tumor</spannedText>
      </annotation>
      <classMention id="M1">
        <mentionClass id="Markable">the tumor</mentionClass>
        <hasSlotMention id="S1"/>
      </classMention>
      <stringSlotMention id="S1">
        <mentionSlot id="semantic_class"/><stringSlotMentionValue value="disease_or_syndrome"/>
      </stringSlotMention>
      <complexSlotMention id="S2">
        <mentionSlot id="anaphor"/><complexSlotMentionValue value="M1"/>
      </complexSlotMention>
    </annotations>

Class ``Markable`` carries string slots ``grammatical_category``, ``sentence_function`` and
``semantic_class``; class ``Pair`` carries complex slots ``anaphor`` and ``antecedent`` and
string slots ``bagga_class`` and ``relation_type``. Offsets are character offsets into the text,
end exclusive; a discontinuous span is several ``<span>`` elements whose texts Knowtator joins
with `` ... `` in ``<spannedText>``. Every inconsistency raises :class:`SourceError` naming the
file and line.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import get_args

from lxml import etree

from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.labels import (
    BaggaClass,
    GrammaticalCategory,
    RelationType,
    SemanticClass,
    SentenceFunction,
)
from clinical_corpora.core.union_find import UnionFind

MARKABLE_CLASS = "Markable"
PAIR_CLASS = "Pair"
FRAGMENT_SEPARATOR = " ... "
"""How Knowtator joins the texts of a discontinuous span in ``<spannedText>``."""

MARKABLE_STRING_SLOTS: Mapping[str, tuple[str, ...]] = {
    "grammatical_category": get_args(GrammaticalCategory),
    "sentence_function": get_args(SentenceFunction),
    "semantic_class": get_args(SemanticClass),
}
PAIR_STRING_SLOTS: Mapping[str, tuple[str, ...]] = {
    "bagga_class": get_args(BaggaClass),
    "relation_type": get_args(RelationType),
}
PAIR_COMPLEX_SLOTS = ("anaphor", "antecedent")
REQUIRED_SLOTS = {
    MARKABLE_CLASS: ("semantic_class",),
    PAIR_CLASS: ("relation_type", *PAIR_COMPLEX_SLOTS),
}

Fragment = tuple[int, int]
"""A ``(start, end)`` character span, end exclusive."""
MarkableKey = tuple[Fragment, ...]
"""A markable identified by its fragments: comparable across annotators' files."""


@dataclass(frozen=True)
class Markable:
    """A linguistic expression for a clinical concept taking part in anaphoric relations."""

    id: str
    fragments: tuple[Fragment, ...]
    text: str
    semantic_class: SemanticClass
    grammatical_category: GrammaticalCategory | None
    sentence_function: SentenceFunction | None

    @property
    def start(self) -> int:
        return self.fragments[0][0]

    @property
    def end(self) -> int:
        return self.fragments[-1][1]


@dataclass(frozen=True)
class Pair:
    """An anaphor linked to its immediately preceding antecedent."""

    id: str
    anaphor_id: str
    antecedent_id: str
    relation: RelationType
    bagga_class: BaggaClass | None


@dataclass(frozen=True)
class KnowtatorDocument:
    """One annotator's markables and pairs over one document text."""

    doc_id: str
    text: str
    annotators: tuple[str, ...]
    markables: tuple[Markable, ...]
    pairs: tuple[Pair, ...]

    def markable(self, markable_id: str) -> Markable:
        """The markable with this Knowtator mention id."""
        for markable in self.markables:
            if markable.id == markable_id:
                return markable
        raise KeyError(markable_id)

    def identity_chains(self) -> tuple[tuple[str, ...], ...]:
        """Markable ids linked by identity pairs, each chain in text order (grounding first)."""
        chains = UnionFind(m.id for m in self.markables)  # in text order: chains start with the grounding
        for pair in self.pairs:
            if pair.relation == "identity":
                chains.union(pair.anaphor_id, pair.antecedent_id)
        return tuple(tuple(ids) for ids in chains.groups() if len(ids) > 1)

    def semantic_classes_by_key(self) -> dict[Hashable, str]:
        """Each markable's semantic class, keyed by its fragments (a :data:`MarkableKey`)."""
        return {m.fragments: m.semantic_class for m in self.markables}

    def pair_keys(self) -> frozenset[tuple[MarkableKey, MarkableKey, str]]:
        """``(anaphor, antecedent, relation)`` with markables keyed by fragments."""
        fragments = {m.id: m.fragments for m in self.markables}
        return frozenset((fragments[p.anaphor_id], fragments[p.antecedent_id], p.relation) for p in self.pairs)


@dataclass(frozen=True)
class _Annotation:
    fragments: tuple[Fragment, ...]
    spanned_text: str
    annotator: str | None
    line: int


@dataclass(frozen=True)
class _ClassMention:
    id: str
    mention_class: str
    slot_ids: tuple[tuple[str, int], ...]
    line: int


@dataclass(frozen=True)
class _SlotMention:
    slot: str
    values: tuple[tuple[str, int], ...]
    is_complex: bool
    line: int


def iter_knowtator_dir(annotation_dir: Path, text_dir: Path) -> Iterator[KnowtatorDocument]:
    """Read every ``*.knowtator.xml`` of one annotator's folder, in file-name order."""
    for xml_path in sorted(annotation_dir.glob("*.knowtator.xml")):
        yield read_knowtator_file(xml_path, text_dir)


def read_knowtator_file(xml_path: Path, text_dir: Path) -> KnowtatorDocument:
    """Read one Knowtator file; its text is ``text_dir / textSource``."""
    root = parse_xml_safely(xml_path)
    text_source = root.get("textSource")
    if root.tag != "annotations" or not text_source:
        raise SourceError(xml_path, 'expected a root <annotations textSource="<doc>.txt">', line=root.sourceline)
    if xml_path.name != f"{text_source}.knowtator.xml":
        raise SourceError(
            xml_path,
            f"file name does not match textSource {text_source!r}: expected {text_source}.knowtator.xml",
            line=root.sourceline,
        )
    text_path = text_dir / text_source
    if not text_path.is_file():
        raise SourceError(xml_path, f"text source {text_path} not found", line=root.sourceline)
    with text_path.open(encoding="utf-8", newline="") as handle:
        text = handle.read()
    return _KnowtatorFile(xml_path, text).read(root, doc_id=Path(text_source).stem)


def parse_xml_safely(path: Path) -> etree._Element:
    """Parse XML with entity resolution and network access off; refuse entity declarations."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        tree = etree.parse(str(path), parser)
    except etree.XMLSyntaxError as error:
        raise SourceError(path, f"XML is not well formed: {error.msg}", line=error.lineno) from None
    docinfo = tree.docinfo
    declares_entities = docinfo.internalDTD is not None and any(True for _ in docinfo.internalDTD.iterentities())
    if declares_entities or docinfo.system_url or docinfo.public_id:
        raise SourceError(
            path,
            f"refusing DOCTYPE {docinfo.doctype!r}: it declares entities or an external DTD "
            "(possible XXE); Knowtator files carry no DOCTYPE",
            line=1,
        )
    return tree.getroot()


class _KnowtatorFile:
    """Cross-references the elements of one file and checks them against its text."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.text = text
        self.annotations: dict[str, _Annotation] = {}
        self.class_mentions: dict[str, _ClassMention] = {}
        self.slot_mentions: dict[str, _SlotMention] = {}

    def error(self, message: str, where: etree._Element | int) -> SourceError:
        line = where if isinstance(where, int) else where.sourceline
        return SourceError(self.path, message, line=line)

    def read(self, root: etree._Element, doc_id: str) -> KnowtatorDocument:
        readers = {
            "annotation": self._read_annotation,
            "classMention": self._read_class_mention,
            "stringSlotMention": self._read_slot_mention,
            "complexSlotMention": self._read_slot_mention,
        }
        for element in root.iterchildren(etree.Element):
            reader = readers.get(element.tag)
            if reader is None:
                raise self.error(
                    f"unsupported element <{element.tag}>; expected one of {sorted(readers)}",
                    element,
                )
            reader(element)
        self._check_references()
        markables = self._markables()
        pairs = self._pairs({m.id: _position(m) for m in markables})
        annotators = {a.annotator for a in self.annotations.values() if a.annotator}
        return KnowtatorDocument(
            doc_id=doc_id,
            text=self.text,
            annotators=tuple(sorted(annotators)),
            markables=tuple(markables),
            pairs=tuple(pairs),
        )

    def _markables(self) -> list[Markable]:
        """Markables in text order; two markables on the same span are an error."""
        markables = sorted(map(self._markable, self._mentions_of(MARKABLE_CLASS)), key=_position)
        seen: dict[MarkableKey, str] = {}
        for markable in markables:
            if markable.fragments in seen:
                raise self.error(
                    f"markables {seen[markable.fragments]!r} and {markable.id!r} cover the same "
                    f"span {markable.fragments}; other annotators' pairs could not tell them apart",
                    self.class_mentions[markable.id].line,
                )
            seen[markable.fragments] = markable.id
        return markables

    def _pairs(self, position_of: Mapping[str, tuple[int, int, str]]) -> list[Pair]:
        """Pairs ordered by anaphor then antecedent position; a repeated pair is an error."""
        pairs = sorted(
            map(self._pair, self._mentions_of(PAIR_CLASS)),
            key=lambda p: (position_of[p.anaphor_id], position_of[p.antecedent_id], p.id),
        )
        seen: dict[tuple[str, str, str], str] = {}
        for pair in pairs:
            triple = (pair.anaphor_id, pair.antecedent_id, pair.relation)
            if triple in seen:
                raise self.error(
                    f"Pair {pair.id!r} repeats Pair {seen[triple]!r} "
                    f"({pair.relation} from {pair.anaphor_id!r} to {pair.antecedent_id!r})",
                    self.class_mentions[pair.id].line,
                )
            seen[triple] = pair.id
        return pairs

    def _register(self, table: dict, key: str | None, value: object, element: etree._Element) -> None:
        if not key:
            raise self.error(f"<{element.tag}> without an id", element)
        if key in table:
            raise self.error(f"duplicate <{element.tag}> id {key!r}", element)
        table[key] = value

    def _read_annotation(self, element: etree._Element) -> None:
        mention = element.find("mention")
        if mention is None:
            raise self.error("<annotation> without <mention id>", element)
        fragments = tuple(self._fragment(span) for span in element.findall("span"))
        spanned = element.find("spannedText")
        spanned_text = (spanned.text or "") if spanned is not None else ""
        if fragments:
            if spanned is None:
                raise self.error("<annotation> with <span> but no <spannedText>", element)
            self._check_spanned_text(fragments, spanned_text, spanned)
        annotator = (element.findtext("annotator") or "").strip() or None
        annotation = _Annotation(fragments, spanned_text, annotator, element.sourceline)
        self._register(self.annotations, mention.get("id"), annotation, mention)

    def _fragment(self, span: etree._Element) -> Fragment:
        try:
            start, end = int(span.get("start", "")), int(span.get("end", ""))
        except ValueError:
            raise self.error(f"<span> needs integer start and end, got {dict(span.attrib)}", span) from None
        if not 0 <= start < end <= len(self.text):
            raise self.error(f"span {start}-{end} lies outside the text (0-{len(self.text)}) or is empty", span)
        return start, end

    def _check_spanned_text(self, fragments: tuple[Fragment, ...], spanned_text: str, element: etree._Element) -> None:
        if any(a[1] > b[0] for a, b in pairwise(fragments)):
            raise self.error(f"spans {fragments} overlap or are out of order", element)
        # XML parsing turns CR LF into LF, so compare the document text the same way.
        expected = FRAGMENT_SEPARATOR.join(self.text[s:e] for s, e in fragments).replace("\r\n", "\n")
        if spanned_text != expected:
            raise self.error(
                f"spannedText {spanned_text!r} does not match the text at {fragments}: {expected!r}",
                element,
            )

    def _read_class_mention(self, element: etree._Element) -> None:
        mention_class = element.find("mentionClass")
        if mention_class is None or not mention_class.get("id"):
            raise self.error("<classMention> without <mentionClass id>", element)
        slot_ids = tuple((slot.get("id", ""), slot.sourceline) for slot in element.findall("hasSlotMention"))
        class_mention = _ClassMention(element.get("id", ""), mention_class.get("id", ""), slot_ids, element.sourceline)
        self._register(self.class_mentions, element.get("id"), class_mention, element)

    def _read_slot_mention(self, element: etree._Element) -> None:
        is_complex = element.tag == "complexSlotMention"
        slot = element.find("mentionSlot")
        if slot is None or not slot.get("id"):
            raise self.error(f"<{element.tag}> without <mentionSlot id>", element)
        value_tag = "complexSlotMentionValue" if is_complex else "stringSlotMentionValue"
        values = tuple((v.get("value", ""), v.sourceline) for v in element.findall(value_tag))
        if len(values) != 1:
            raise self.error(
                f"slot {slot.get('id')!r} needs exactly one <{value_tag}>, found {len(values)}",
                element,
            )
        mention = _SlotMention(slot.get("id", ""), values, is_complex, element.sourceline)
        self._register(self.slot_mentions, element.get("id"), mention, element)

    def _check_references(self) -> None:
        for mention_id, annotation in self.annotations.items():
            if mention_id not in self.class_mentions:
                raise self.error(f"annotation mention {mention_id!r} has no <classMention>", annotation.line)
        used: set[str] = set()
        for mention in self.class_mentions.values():
            if mention.id not in self.annotations:
                raise self.error(f"classMention {mention.id!r} has no <annotation>", mention.line)
            if mention.mention_class not in REQUIRED_SLOTS:
                raise self.error(
                    f"unsupported mentionClass {mention.mention_class!r}; "
                    f"expected {MARKABLE_CLASS!r} or {PAIR_CLASS!r}",
                    mention.line,
                )
            for slot_id, line in mention.slot_ids:
                if slot_id not in self.slot_mentions:
                    raise self.error(f"hasSlotMention names missing slot mention {slot_id!r}", line)
                used.add(slot_id)
        for slot_id, slot in self.slot_mentions.items():
            if slot_id not in used:
                raise self.error(f"slot mention {slot_id!r} belongs to no classMention", slot.line)

    def _mentions_of(self, mention_class: str) -> list[_ClassMention]:
        return [m for m in self.class_mentions.values() if m.mention_class == mention_class]

    def _slots(
        self,
        mention: _ClassMention,
        string_slots: Mapping[str, tuple[str, ...]],
        complex_slots: tuple[str, ...] = (),
    ) -> dict[str, tuple[str, int]]:
        """Slot name → (value, line), checked against the class's slots and value sets."""
        found: dict[str, tuple[str, int]] = {}
        for slot_id, _ in mention.slot_ids:
            slot = self.slot_mentions[slot_id]
            allowed_here = complex_slots if slot.is_complex else tuple(string_slots)
            if slot.slot not in allowed_here:
                kind = "complex" if slot.is_complex else "string"
                raise self.error(
                    f"{mention.mention_class} {mention.id!r} has unsupported {kind} slot "
                    f"{slot.slot!r}; expected one of {list(allowed_here)}",
                    slot.line,
                )
            if slot.slot in found:
                raise self.error(f"{mention.mention_class} {mention.id!r} repeats slot {slot.slot!r}", slot.line)
            value, line = slot.values[0]
            if not slot.is_complex and value not in string_slots[slot.slot]:
                raise self.error(
                    f"slot {slot.slot!r} has value {value!r}; expected one of {list(string_slots[slot.slot])}",
                    line,
                )
            found[slot.slot] = (value, line)
        for required in REQUIRED_SLOTS[mention.mention_class]:
            if required not in found:
                raise self.error(
                    f"{mention.mention_class} {mention.id!r} lacks the required slot {required!r}",
                    mention.line,
                )
        return found

    def _markable(self, mention: _ClassMention) -> Markable:
        annotation = self.annotations[mention.id]
        if not annotation.fragments:
            raise self.error(f"Markable {mention.id!r} has no <span>", mention.line)
        slots = self._slots(mention, MARKABLE_STRING_SLOTS)
        value = {name: slots[name][0] if name in slots else None for name in MARKABLE_STRING_SLOTS}
        return Markable(
            id=mention.id,
            fragments=annotation.fragments,
            text=annotation.spanned_text,
            semantic_class=value["semantic_class"],  # type: ignore[arg-type]
            grammatical_category=value["grammatical_category"],  # type: ignore[arg-type]
            sentence_function=value["sentence_function"],  # type: ignore[arg-type]
        )

    def _pair(self, mention: _ClassMention) -> Pair:
        slots = self._slots(mention, PAIR_STRING_SLOTS, PAIR_COMPLEX_SLOTS)
        ends = {}
        for role in PAIR_COMPLEX_SLOTS:
            target, line = slots[role]
            referenced = self.class_mentions.get(target)
            if referenced is None or referenced.mention_class != MARKABLE_CLASS:
                raise self.error(
                    f"Pair {mention.id!r} names {role} {target!r}, which is not a Markable in this file",
                    line,
                )
            ends[role] = target
        if ends["anaphor"] == ends["antecedent"]:
            raise self.error(f"Pair {mention.id!r} links markable {ends['anaphor']!r} to itself", mention.line)
        bagga = slots.get("bagga_class")
        return Pair(
            id=mention.id,
            anaphor_id=ends["anaphor"],
            antecedent_id=ends["antecedent"],
            relation=slots["relation_type"][0],  # type: ignore[arg-type]
            bagga_class=bagga[0] if bagga else None,  # type: ignore[arg-type]
        )


def _position(markable: Markable) -> tuple[int, int, str]:
    return markable.start, markable.end, markable.id
