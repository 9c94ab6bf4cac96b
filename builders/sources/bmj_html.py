"""BMJ Case Reports article pages (one HTML file per case) → case structure.

A page carries site navigation, header, footer, sharing widgets and references around the
article. The reader parses the page with lxml (network off, no entity expansion, DOCTYPEs that
declare entities rejected), removes ``nav``/``header``/``footer``/``aside``, scripts, forms and
the references, then lets jusText split the rest into paragraphs and classify them. jusText alone
drops short paragraphs and list items on sparse pages, so its verdict is overridden inside the
article's case-report sections (:data:`CASE_REPORT_HEADINGS` and their sub-headings): there every
paragraph is kept. Outside them a paragraph is kept only when jusText calls it good.

Result: the title, the sections in page order (heading, level 2–6 from ``h2``–``h6``,
paragraphs), the Learning points as a list of items (one per list item or paragraph, an empty
list when the page has none) and metadata (series from ``<ul class="series-titles">``,
specialties from ``<meta name="DC.subject" content="A; B">``, year from the publication date
metas). The Learning points section, and its sub-sections, are not in ``sections``, so the
sections are the passage (:attr:`CaseReport.passage`). A folder of pages is listed by :func:`case_pages`.

The paragraph maker relies on jusText 3.x (pyproject pins ``>=3.0,<4``): its parsed paragraphs are copied
into a subclass that computes ``Paragraph.text`` once; tests/test_bmj_html.py pins that the text and the
attributes are jusText's own.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import justext
import lxml.html
from justext.core import MAX_LINK_DENSITY_DEFAULT, ParagraphMaker, classify_paragraphs
from justext.paragraph import Paragraph
from justext.utils import is_blank
from lxml import etree

from clinical_corpora.builders.sources.boilerplate import revise_paragraph_classification
from clinical_corpora.builders.sources.discovery import is_hidden, walk_files, warn_left_out
from clinical_corpora.core.errors import EncodingError, SourceError
from clinical_corpora.core.file_limits import read_bounded

CASE_REPORT_HEADINGS = frozenset(
    {
        "summary",
        "abstract",
        "background",
        "introduction",
        "case presentation",
        "case report",
        "case description",
        "investigations",
        "differential diagnosis",
        "treatment",
        "outcome and follow-up",
        "outcome and follow up",
        "discussion",
        "conclusion",
        "conclusions",
        "learning points",
        "patient's perspective",
        "global health problem list",
    }
)
"""Headings (lower case, curly quotes straightened) of BMJ Case Reports' article sections."""

LEARNING_POINTS_HEADING = "learning points"
REFERENCES_HEADINGS = frozenset({"references", "reference"})
PASSAGE_SEPARATOR = "\n\n"
MAX_PAGE_BYTES = 5_000_000
"""Largest page read (a BMJ Case Reports page is about 100 KB; a bigger file is not one case)."""
MAX_NESTING = 255
"""Elements libxml2 nests before it stops reading a page (without its unsafe ``huge_tree`` option)."""

_REMOVED_TAGS = ("nav", "header", "footer", "aside", "script", "style", "noscript", "form", "template")
_REMOVED_XPATH = (
    "//*[contains(concat(' ', normalize-space(@class), ' '), ' ref-list ')]"
    " | //*[@role='navigation' or @role='banner' or @role='contentinfo' or @role='complementary']"
    " | //ul[contains(concat(' ', normalize-space(@class), ' '), ' series-titles ')]"
)
_ENTITY_DECLARATION = re.compile(rb"<!DOCTYPE[^>\[]*\[[^\]]*<!ENTITY", re.IGNORECASE)
_HTML_ELEMENT = re.compile(rb"<(?:html|body)[\s>]", re.IGNORECASE)
_DECLARED_CHARSET = re.compile(rb"<meta[^>]*charset\s*=\s*[\"']?\s*([-\w.:]+)", re.IGNORECASE)
_UTF8_NAMES = {"utf-8", "utf8"}
_HEADING_TAG = re.compile(r"h([1-6])")
_YEAR = re.compile(r"\b(19|20)\d\d\b")
_DATE_METAS = ("citation_publication_date", "citation_date", "DC.Date", "dc.date")
_STOPLIST = justext.get_stoplist("English")


@dataclass(frozen=True, slots=True)
class Section:
    """A section of the article: its heading, level (2 for ``h2`` … 6) and paragraphs."""

    heading: str
    level: int
    paragraphs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CaseMetadata:
    """Series the case belongs to, its specialties and its publication year (None if absent)."""

    series: tuple[str, ...]
    specialties: tuple[str, ...]
    year: int | None


@dataclass(frozen=True, slots=True)
class CaseReport:
    """One case: id (the file stem), title, passage sections, learning points, metadata."""

    case_id: str
    title: str
    sections: tuple[Section, ...]
    learning_points: tuple[str, ...]
    metadata: CaseMetadata

    @property
    def passage(self) -> str:
        """The case without its Learning points: headings and paragraphs, blank-line separated."""
        blocks = []
        for section in self.sections:
            if section.heading:
                blocks.append(section.heading)
            blocks.extend(section.paragraphs)
        return PASSAGE_SEPARATOR.join(blocks)


def read_case_report(path: str | Path, *, max_bytes: int = MAX_PAGE_BYTES, encoding: str | None = None) -> CaseReport:
    """Parse one BMJ Case Reports page; the file stem is the case id. A page over ``max_bytes`` is a
    SourceError naming it, its size and the limit (:mod:`core.file_limits`; a real page is well
    under 1 MB). ``encoding`` (the user's copy's, ``--source-encoding``) overrides the charset the page declares."""
    path = Path(path)
    raw = read_bounded(path, max_bytes)
    root = _parse_page(path, raw if encoding is None else _recoded(path, raw, encoding), recoded=encoding is not None)
    metadata = _metadata(root)
    for element in root.xpath(_REMOVED_XPATH) + [el for tag in _REMOVED_TAGS for el in root.iter(tag)]:
        if element.getparent() is not None:  # not already dropped (matched twice)
            element.drop_tree()
    title, sections = _title_and_sections(path, root)
    passage_sections, learning_points = _split_learning_points(sections)
    return CaseReport(path.stem, title, passage_sections, learning_points, metadata)


def case_pages(folder: Path, *, quiet: bool = False) -> list[Path]:
    """The case pages of a folder: every file under it (linked folders followed) but hidden ones,
    which are counted in a warning."""
    pages: list[Path] = []
    hidden: list[Path] = []
    for path in walk_files(folder):
        (hidden if is_hidden(path.relative_to(folder).as_posix()) else pages).append(path)
    if hidden and not quiet:
        warn_left_out(folder, [path.relative_to(folder).as_posix() for path in hidden], "a BMJ Case Reports page")
    return pages


def _recoded(path: Path, raw: bytes, encoding: str) -> bytes:
    """A page in ``encoding`` as UTF-8 bytes."""
    try:
        return raw.decode(encoding).encode("utf-8")
    except UnicodeDecodeError as error:
        raise EncodingError(
            path,
            f"expected {encoding} text (as --source-encoding says), found byte 0x{raw[error.start]:02x} at byte "
            f"offset {error.start}",
        ) from None


def _parse_page(path: Path, raw: bytes, recoded: bool = False) -> etree._Element:
    if not raw.strip():
        raise SourceError(path, "file is empty, expected a BMJ Case Reports HTML page")
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise EncodingError(path, "expected UTF-8 text, found a UTF-16 byte-order mark at byte offset 0")
    if b"\x00" in raw or not _HTML_ELEMENT.search(raw):
        raise SourceError(path, "not an HTML page: expected an <html> or <body> element")
    if _ENTITY_DECLARATION.search(raw):
        raise SourceError(path, "the DOCTYPE declares entities, which are refused (expected plain HTML)")
    parser = lxml.html.HTMLParser(
        encoding="utf-8" if recoded else _utf8_unless_declared(path, raw),
        no_network=True,
        remove_comments=True,
        remove_pis=True,
    )
    root = lxml.html.document_fromstring(raw, parser=parser)
    for error in parser.error_log:
        if error.type_name == "ERR_RESOURCE_LIMIT":  # libxml2 stops reading the page there
            raise SourceError(
                path,
                f"the page exceeds the HTML parser's limits ({error.message.split(',')[0]}): the rest of the page, "
                "its Learning points included, would be lost; expected a page nested at most "
                f"{MAX_NESTING} elements deep",
                line=error.line,
            )
    if root.find("body") is None:
        raise SourceError(path, "not an HTML page: no <body> element")
    return root


def _utf8_unless_declared(path: Path, raw: bytes) -> str | None:
    """``utf-8`` for a page that declares UTF-8 or no charset (BMJ serves UTF-8; libxml2 would guess
    Latin-1), None to let a page's other declared charset decide. A byte that is not UTF-8 in such a page
    is an error naming its offset: characters are never replaced."""
    declared = _DECLARED_CHARSET.search(raw)
    if declared and declared.group(1).decode("ascii", "replace").lower() not in _UTF8_NAMES:
        return None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise EncodingError(
            path,
            f"expected UTF-8 text{' (as the page declares)' if declared else ''}, found byte "
            f"0x{raw[error.start]:02x} at byte offset {error.start}; a page in another encoding must declare "
            "its charset in a <meta> element",
        ) from None
    return "utf-8"


def _metadata(root: etree._Element) -> CaseMetadata:
    series = tuple(
        _normalize_space(item.text_content())
        for item in root.xpath("//ul[contains(concat(' ', normalize-space(@class), ' '), ' series-titles ')]/li")
        if item.text_content().strip()
    )
    specialties = tuple(
        part.strip()
        for content in root.xpath("//meta[@name='DC.subject']/@content")
        for part in content.split(";")
        if part.strip()
    )
    dates = [content for name in _DATE_METAS for content in root.xpath(f"//meta[@name='{name}']/@content")]
    years = (int(found.group()) for content in dates if (found := _YEAR.search(content)))
    return CaseMetadata(series, specialties, next(years, None))


class _FinishedParagraph(Paragraph):
    """A parsed paragraph whose text nodes are complete: its normalised text is computed once.

    jusText's ``Paragraph.text`` joins and normalises the text nodes on every read, and classifying a
    paragraph reads it about ten times (half of the reader's time on a case report). Made from a parsed
    paragraph by copying jusText 3's public paragraph attributes (its own constructor wants the parser's path).
    """

    def __init__(self, parsed: Paragraph) -> None:
        self.dom_path, self.xpath = parsed.dom_path, parsed.xpath
        self.text_nodes = parsed.text_nodes
        self.chars_count_in_links, self.tags_count = parsed.chars_count_in_links, parsed.tags_count
        self.class_type = parsed.class_type

    @cached_property
    def text(self) -> str:
        return Paragraph.text.fget(self)


class _SpacePreservingParagraphMaker(ParagraphMaker):
    """jusText's paragraph maker, keeping white space between inline elements; its paragraphs come out finished.

    jusText skips white-space-only text nodes, which glues ``<i>a</i> <i>b</i>`` into ``ab``.
    """

    @classmethod
    def make_paragraphs(cls, root: etree._Element) -> list[Paragraph]:
        parsed: list[Paragraph] = super().make_paragraphs(root)
        return [_FinishedParagraph(paragraph) for paragraph in parsed]  # parsed: no text node is added from here on

    def characters(self, content: str) -> None:
        if is_blank(content):
            if self.paragraph.text_nodes:
                self.paragraph.append_text(" ")
            return
        super().characters(content)


@dataclass(slots=True)
class _OpenSection:
    heading: str
    level: int
    in_case_report: bool
    paragraphs: list[str]


def _title_and_sections(path: Path, root: etree._Element) -> tuple[str, list[_OpenSection]]:
    paragraphs = _SpacePreservingParagraphMaker.make_paragraphs(root)
    classify_paragraphs(paragraphs, _STOPLIST)
    revise_paragraph_classification(paragraphs)
    title = ""
    sections: list[_OpenSection] = []
    case_report_level: int | None = None  # level of the enclosing case-report heading, if any
    for paragraph in paragraphs:
        tags = paragraph.dom_path.split(".")
        heading_level = next((int(m.group(1)) for tag in tags if (m := _HEADING_TAG.fullmatch(tag))), None)
        text = paragraph.text
        if heading_level == 1:
            title = title or text
            continue
        if heading_level is not None:
            name = _heading_key(text)
            if case_report_level is not None and heading_level <= case_report_level:
                case_report_level = None
            if name in CASE_REPORT_HEADINGS and case_report_level is None:
                case_report_level = heading_level
            sections.append(_OpenSection(text, heading_level, case_report_level is not None, []))
            continue
        if not sections:
            sections.append(_OpenSection("", 0, False, []))
        section = sections[-1]
        mostly_links = paragraph.links_density() > MAX_LINK_DENSITY_DEFAULT
        if text and (not paragraph.is_boilerplate or (section.in_case_report and not mostly_links)):
            section.paragraphs.append(text)
    if not title:
        title = _normalize_space("".join(root.xpath("//meta[@name='citation_title']/@content")))
    if not title:
        raise SourceError(path, "no article title: expected an <h1> or <meta name='citation_title'>")
    has_case_report_headings = any(section.in_case_report for section in sections)
    kept = [
        section
        for section in sections
        if (section.paragraphs or section.in_case_report)
        and _heading_key(section.heading) not in REFERENCES_HEADINGS
        and not (has_case_report_headings and section.level == 0)  # front matter: authors, DOI
    ]
    return title, kept


def _split_learning_points(sections: list[_OpenSection]) -> tuple[tuple[Section, ...], tuple[str, ...]]:
    passage: list[Section] = []
    learning_points: list[str] = []
    learning_level: int | None = None
    for section in sections:
        if learning_level is not None and section.level <= learning_level:
            learning_level = None
        if _heading_key(section.heading) == LEARNING_POINTS_HEADING and learning_level is None:
            learning_level = section.level
        if learning_level is not None:
            learning_points.extend(section.paragraphs)
        elif section.heading or section.paragraphs:
            passage.append(Section(section.heading, section.level, tuple(section.paragraphs)))
    return tuple(passage), tuple(learning_points)


def _heading_key(heading: str) -> str:
    return _normalize_space(heading).lower().replace("\u2019", "'").rstrip(":")


def _normalize_space(text: str) -> str:
    return " ".join(text.split())
