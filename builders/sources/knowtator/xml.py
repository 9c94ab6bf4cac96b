"""Reading Knowtator XML files (the ODIE anaphora schema of Savova et al. 2011): each one's annotations over its text.

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
with `` ... `` in ``<spannedText>``.

Files written by eHOST (South et al. 2012) are read the way eHOST reads them: its
``<eHOST_Adjudication_Status>`` settings and ``suggestion`` slots carry no annotation and are
skipped; its fragments, ``spannedText`` and offsets line up with the text as
:mod:`builders.sources.knowtator.spans` reads them. Two annotations on one span are legal, as in
Knowtator, and both are read.

An annotator's files are those :mod:`builders.sources.knowtator.folder` finds, each read over the text its
``textSource`` names in the text folder. A whole file that cannot be read (not well-formed XML, a DOCTYPE; the
wrong root, a name that does not match its ``textSource``, a missing text) raises :class:`SourceError`. A broken
annotation does not: it is left out, with the pairs that need it, and listed in
:attr:`KnowtatorDocument.problems` as a :class:`SourceError` naming file and line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from lxml import etree

from clinical_corpora.builders.sources.discovery import split_suffix
from clinical_corpora.builders.sources.knowtator.document import (
    FRAGMENT_SEPARATOR,
    MARKABLE_CLASS,
    MARKABLE_STRING_SLOTS,
    PAIR_CLASS,
    PAIR_COMPLEX_SLOTS,
    PAIR_STRING_SLOTS,
    REQUIRED_SLOTS,
    Fragment,
    KnowtatorDocument,
    Markable,
    Pair,
)
from clinical_corpora.builders.sources.knowtator.folder import KNOWTATOR_SUFFIX, knowtator_files
from clinical_corpora.builders.sources.knowtator.spans import (
    OffsetCounting,
    WrittenAnnotation,
    joined_fragments,
    spanned_text_matches,
)
from clinical_corpora.builders.sources.text_lines import read_utf8
from clinical_corpora.core.errors import SourceError, excerpt
from clinical_corpora.core.file_limits import MAX_FILE_BYTES, check_file_size

IGNORED_ELEMENTS = {
    "eHOST_Adjudication_Status": "eHOST's adjudication settings (annotators and classes to compare)",
}
"""Top-level elements that carry no annotation, and what they hold."""
IGNORED_STRING_SLOTS = {"suggestion": "eHOST's verifier suggestions, which eHOST itself skips when reading"}


_Built = TypeVar("_Built", "Markable", "Pair")


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


def iter_knowtator_dir(
    annotation_dir: Path, text_dir: Path, *, max_bytes: int = MAX_FILE_BYTES
) -> Iterator[KnowtatorDocument]:
    """Read every ``*.knowtator.xml`` of one annotator's folder, in document-id order."""
    for xml_path in knowtator_files(annotation_dir).values():
        yield read_knowtator_file(xml_path, text_dir, max_bytes=max_bytes)


def read_knowtator_file(xml_path: Path, text_dir: Path, *, max_bytes: int = MAX_FILE_BYTES) -> KnowtatorDocument:
    """Read one Knowtator file; its text is ``text_dir / textSource``.

    Raises :class:`SourceError` when the file cannot be read at all (or it or its text holds more than
    ``max_bytes`` bytes: :mod:`core.file_limits`); its broken annotations are left out and listed
    in the document's ``problems`` instead.
    """
    check_file_size(xml_path, max_bytes)
    root = parse_xml_safely(xml_path)
    text_source = root.get("textSource")
    if root.tag != "annotations" or not text_source:
        raise SourceError(xml_path, 'expected a root <annotations textSource="<doc>.txt">', line=root.sourceline)
    named = split_suffix(xml_path.name, [KNOWTATOR_SUFFIX])
    stem = named[0] if named else ""
    if not (named and text_source.startswith(stem) and text_source[len(stem) :].lower() == ".txt"):
        raise SourceError(
            xml_path,
            f"file name does not match textSource {text_source!r}: expected {text_source}.knowtator.xml",
            line=root.sourceline,
        )
    text_path = text_dir / text_source
    if not text_path.is_file():
        raise SourceError(xml_path, f"text source {text_path} not found", line=root.sourceline)
    text = read_utf8(text_path, max_bytes)
    return document_from_xml(root, xml_path, text, Path(text_source).stem)


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


def document_from_xml(root: etree._Element, path: Path, text: str, doc_id: str) -> KnowtatorDocument:
    """The document the ``<annotations>`` root of the file at ``path`` annotates over ``text``; its broken
    annotations are left out and listed in the document's ``problems``."""
    return _KnowtatorFile(path, text).read(root, doc_id=doc_id)


class _KnowtatorFile:
    """Cross-references the elements of one file and checks them against its text.

    A broken annotation becomes a problem (a :class:`SourceError` naming its line) and is left out
    with everything that needs it; the rest of the file is read.
    """

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.text = text
        self.annotations: dict[str, WrittenAnnotation] = {}
        self.class_mentions: dict[str, _ClassMention] = {}
        self.slot_mentions: dict[str, _SlotMention] = {}
        self.problems: list[SourceError] = []
        self.left_out: dict[str, SourceError] = {}
        self.offsets = OffsetCounting(text)

    def error(self, message: str, where: etree._Element | int) -> SourceError:
        line = where if isinstance(where, int) else where.sourceline
        return SourceError(self.path, message, line=line)

    def problem(self, message: str, where: etree._Element | int, mention_id: str | None = None) -> None:
        """Record a broken annotation; ``mention_id`` (if any) is left out of the document."""
        error = self.error(message, where)
        self.problems.append(error)
        if mention_id:
            self.left_out.setdefault(mention_id, error)

    def read(self, root: etree._Element, doc_id: str) -> KnowtatorDocument:
        readers = {
            "annotation": self._read_annotation,
            "classMention": self._read_class_mention,
            "stringSlotMention": self._read_slot_mention,
            "complexSlotMention": self._read_slot_mention,
        }
        for element in root.iterchildren(etree.Element):
            if element.tag in IGNORED_ELEMENTS:
                continue
            if element.tag == "adjudicating":
                raise self.error(
                    "<adjudicating> is eHOST's working copy of an unfinished adjudication (its saved/ "
                    "folder); give the files eHOST writes to its adjudication/ folder instead",
                    element,
                )
            reader = readers.get(element.tag)
            if reader is None:
                self.problem(
                    f"unsupported element <{element.tag}>; expected one of {sorted(readers)} "
                    f"(or {sorted(IGNORED_ELEMENTS)}, which carry no annotations)",
                    element,
                )
                continue
            reader(element)
        self.offsets = OffsetCounting.matching(self.text, self.annotations.values())
        self._check_references()
        markables = self._build(self._mentions_of(MARKABLE_CLASS), self._markable)
        markables.sort(key=_position)
        pairs = self._build(self._mentions_of(PAIR_CLASS), self._pair)
        position_of = {m.id: _position(m) for m in markables}
        pairs.sort(key=lambda p: (position_of[p.anaphor_id], position_of[p.antecedent_id], p.id))
        annotators = {a.annotator for a in self.annotations.values() if a.annotator}
        return KnowtatorDocument(
            doc_id=doc_id,
            text=self.text,
            annotators=tuple(sorted(annotators)),
            markables=tuple(markables),
            pairs=tuple(pairs),
            crlf_as_one=self.offsets.crlf_as_one,
            problems=tuple(sorted(self.problems, key=lambda p: p.line or 0)),
        )

    def _build(self, mentions: list[_ClassMention], build: Callable[[_ClassMention], _Built]) -> list[_Built]:
        """Build every mention not already left out; one that fails is recorded and left out."""
        built = []
        for mention in mentions:
            if mention.id in self.left_out:
                continue
            try:
                built.append(build(mention))
            except SourceError as error:
                self.problems.append(error)
                self.left_out[mention.id] = error
        return built

    def _register(self, table: dict, key: str | None, value: object, element: etree._Element) -> None:
        if not key:
            self.problem(f"<{element.tag}> without an id", element)
        elif key in table:
            self.problem(f"duplicate <{element.tag}> id {key!r}; the first one is read", element)
        else:
            table[key] = value

    def _read_annotation(self, element: etree._Element) -> None:
        mention = element.find("mention")
        if mention is None:
            self.problem("<annotation> without <mention id>", element)
            return
        spanned = element.find("spannedText")
        fragments: list[tuple[int, int, int]] = []
        broken = None
        for span in element.findall("span"):
            try:
                fragments.append((int(span.get("start", "")), int(span.get("end", "")), span.sourceline))
            except ValueError:
                broken = self.error(f"<span> needs integer start and end, got {dict(span.attrib)}", span)
        if fragments and spanned is None:
            broken = self.error("<annotation> with <span> but no <spannedText>", element)
        annotation = WrittenAnnotation(
            written=tuple(fragments),
            spanned_text=(spanned.text or "") if spanned is not None else "",
            annotator=(element.findtext("annotator") or "").strip() or None,
            line=element.sourceline,
            spanned_line=spanned.sourceline if spanned is not None else element.sourceline,
            broken=broken,
        )
        self._register(self.annotations, mention.get("id"), annotation, mention)

    def _fragments(self, mention: _ClassMention) -> tuple[Fragment, ...]:
        """The annotation's fragments as offsets into the released text: sorted, repeats dropped,
        overlapping ones joined; its spans and spannedText checked against the text."""
        annotation = self.annotations[mention.id]
        if annotation.broken is not None:
            raise annotation.broken
        text = self.offsets.text
        for start, end, line in annotation.written:
            if not 0 <= start < end <= len(text):
                raise self.error(f"span {start}-{end} lies outside the text (0-{len(text)}) or is empty", line)
        written = [(start, end) for start, end, _ in annotation.written]
        if written and not spanned_text_matches(annotation.spanned_text, written, text):
            expected = FRAGMENT_SEPARATOR.join(text[s:e] for s, e in sorted(written))
            raise self.error(
                f"spannedText {excerpt(annotation.spanned_text)} does not match the text at {sorted(set(written))}: "
                f"{excerpt(expected)} (whitespace aside)",
                annotation.spanned_line,
            )
        return tuple((self.offsets.released(s), self.offsets.released(e)) for s, e in joined_fragments(written))

    def _read_class_mention(self, element: etree._Element) -> None:
        mention_class = element.find("mentionClass")
        if mention_class is None or not mention_class.get("id"):
            self.problem("<classMention> without <mentionClass id>", element, element.get("id"))
            return
        slot_ids = tuple((slot.get("id", ""), slot.sourceline) for slot in element.findall("hasSlotMention"))
        class_mention = _ClassMention(element.get("id", ""), mention_class.get("id", ""), slot_ids, element.sourceline)
        self._register(self.class_mentions, element.get("id"), class_mention, element)

    def _read_slot_mention(self, element: etree._Element) -> None:
        is_complex = element.tag == "complexSlotMention"
        slot = element.find("mentionSlot")
        if slot is None or not slot.get("id"):
            self.problem(f"<{element.tag}> without <mentionSlot id>", element, element.get("id"))
            return
        value_tag = "complexSlotMentionValue" if is_complex else "stringSlotMentionValue"
        values = tuple((v.get("value", ""), v.sourceline) for v in element.findall(value_tag))
        if len(values) != 1:
            self.problem(
                f"slot {slot.get('id')!r} needs exactly one <{value_tag}>, found {len(values)}",
                element,
                element.get("id"),
            )
            return
        mention = _SlotMention(slot.get("id", ""), values, is_complex, element.sourceline)
        self._register(self.slot_mentions, element.get("id"), mention, element)

    def _check_references(self) -> None:
        for mention_id, annotation in self.annotations.items():
            if mention_id not in self.class_mentions and mention_id not in self.left_out:
                self.problem(f"annotation mention {mention_id!r} has no <classMention>", annotation.line)
        used: set[str] = set()
        for mention in self.class_mentions.values():
            if mention.id not in self.annotations:
                self.problem(f"classMention {mention.id!r} has no <annotation>", mention.line, mention.id)
            elif mention.mention_class not in REQUIRED_SLOTS:
                self.problem(
                    f"unsupported mentionClass {mention.mention_class!r}; "
                    f"expected {MARKABLE_CLASS!r} or {PAIR_CLASS!r}",
                    mention.line,
                    mention.id,
                )
            for slot_id, line in mention.slot_ids:
                used.add(slot_id)
                if slot_id not in self.slot_mentions and slot_id not in self.left_out:
                    self.problem(f"hasSlotMention names missing slot mention {slot_id!r}", line, mention.id)
                elif slot_id in self.left_out:
                    cause = self.left_out[slot_id]
                    self.problem(
                        f"{mention.mention_class} {mention.id!r} names slot mention {slot_id!r}, which is "
                        f"left out (line {cause.line}: {cause.message})",
                        line,
                        mention.id,
                    )
        for slot_id, slot in self.slot_mentions.items():
            if slot_id not in used:
                self.problem(f"slot mention {slot_id!r} belongs to no classMention", slot.line)

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
            if not slot.is_complex and slot.slot in IGNORED_STRING_SLOTS:
                continue
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
        if not self.annotations[mention.id].written and self.annotations[mention.id].broken is None:
            raise self.error(f"Markable {mention.id!r} has no <span>", mention.line)
        fragments = self._fragments(mention)
        slots = self._slots(mention, MARKABLE_STRING_SLOTS)
        value = {name: slots[name][0] if name in slots else None for name in MARKABLE_STRING_SLOTS}
        return Markable(
            id=mention.id,
            fragments=fragments,
            text=FRAGMENT_SEPARATOR.join(self.text[start:end] for start, end in fragments),
            semantic_class=value["semantic_class"],  # type: ignore[arg-type]
            grammatical_category=value["grammatical_category"],  # type: ignore[arg-type]
            sentence_function=value["sentence_function"],  # type: ignore[arg-type]
        )

    def _pair(self, mention: _ClassMention) -> Pair:
        self._fragments(mention)  # a Pair's spans are checked, not used
        slots = self._slots(mention, PAIR_STRING_SLOTS, PAIR_COMPLEX_SLOTS)
        ends = {}
        for role in PAIR_COMPLEX_SLOTS:
            target, line = slots[role]
            referenced = self.class_mentions.get(target)
            if target in self.left_out:
                cause = self.left_out[target]
                raise self.error(
                    f"Pair {mention.id!r} names {role} {target!r}, which is left out "
                    f"(line {cause.line}: {cause.message})",
                    line,
                )
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
