"""BMJ Case Reports page reader: structure, boilerplate removal, jusText override, bad input."""

from __future__ import annotations

from pathlib import Path

import justext
import pytest

from clinical_corpora.builders.sources.bmj_html import read_case_report
from clinical_corpora.core.errors import SourceError

SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "clicr" / "sample" / "bmj_html"


def _page(tmp_path: Path, body: str, name: str = "bcr-2020-000001", head: str = "") -> Path:
    path = tmp_path / f"{name}.html"
    path.write_text(f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>", encoding="utf-8")
    return path


def test_sample_page_structure_and_metadata() -> None:
    case = read_case_report(SAMPLE / "bcr-2019-228101.html")
    assert case.case_id == "bcr-2019-228101"
    assert case.title == "Miliary tuberculosis unmasked by corticosteroid treatment in a young migrant"
    assert [(s.heading, s.level) for s in case.sections] == [
        ("Summary", 2),
        ("Background", 2),
        ("Case presentation", 2),
        ("Investigations", 2),
        ("Differential diagnosis", 2),
        ("Treatment", 2),
        ("Outcome and follow-up", 2),
        ("Discussion", 2),
    ]
    assert case.sections[2].paragraphs[1].startswith("On examination his temperature was 38.9°C")
    assert case.learning_points == (
        "Consider tuberculosis in any patient from a high-incidence country with fever and hilar "
        "lymphadenopathy before starting corticosteroids.",
        "If steroids are used, great caution should be exercised on their gradual tapering to avoid relapse.",
        "An HIV test should be offered to every patient with tuberculosis.",
    )
    assert case.metadata.series == ("Unusual presentation of more common disease/injury",)
    assert case.metadata.specialties == ("Infectious diseases", "Respiratory medicine")
    assert case.metadata.year == 2019


def test_boilerplate_and_references_are_dropped() -> None:
    passage = read_case_report(SAMPLE / "bcr-2019-228101.html").passage
    for boilerplate in (
        "Log in",  # header
        "Latest content",  # nav
        "Related articles",  # aside
        "RightsLink",  # aside, long enough for jusText to call it good
        "Copyright ©",  # footer
        "Smith J, Patel R",  # references
        "Google Scholar",
        "Competing interests",  # footnotes, short
        "Anna Kowalski",  # front matter before the first heading
        "Download figure",  # link-only paragraph inside a case section
        "dataLayer",  # script
        "Unusual presentation",  # series list is metadata, not text
    ):
        assert boilerplate not in passage


def test_short_case_paragraphs_are_kept_where_justext_drops_them() -> None:
    path = SAMPLE / "bcr-2019-228101.html"
    verdicts = {p.text: p.is_boilerplate for p in justext.justext(path.read_bytes(), justext.get_stoplist("English"))}
    assert verdicts["Sarcoidosis."] is True  # jusText alone would lose the differential diagnosis
    case = read_case_report(path)
    assert case.sections[4].paragraphs == ("Sarcoidosis.", "Lymphoma.", "Fungal infection.")


def test_passage_excludes_learning_points_and_separates_blocks() -> None:
    case = read_case_report(SAMPLE / "bcr-2019-228214.html")
    assert case.passage.startswith("Summary\n\nA 9-year-old boy with attention deficit")
    assert "Learning points" not in case.passage
    assert "Patients with ADHD have higher incidence of enuresis." not in case.passage
    assert case.learning_points[0] == "Patients with ADHD have higher incidence of enuresis."
    assert "\n\nBackground\n\nChildren with ADHD" in case.passage


def test_older_layout_with_h3_headings_and_paragraph_learning_points() -> None:
    case = read_case_report(SAMPLE / "bcr-2019-228467.html")
    assert {s.level for s in case.sections} == {3}
    assert case.metadata.year == 2009
    assert len(case.learning_points) == 2
    assert case.learning_points[1] == "Mechanic's hands are a clue to antisynthetase syndrome."


def test_page_without_learning_points_keeps_its_passage() -> None:
    case = read_case_report(SAMPLE / "bcr-2019-229047.html")
    assert case.learning_points == ()
    assert [s.heading for s in case.sections][:2] == ["Summary", "Case presentation"]
    assert "temporal artery biopsy confirmed giant cell arteritis" in case.passage


def test_every_sample_page_parses() -> None:
    cases = [read_case_report(path) for path in sorted(SAMPLE.glob("*.html"))]
    assert len(cases) == 10
    assert sum(1 for case in cases if not case.learning_points) == 1
    assert all(case.title and case.sections and case.metadata.specialties for case in cases)


def test_sub_sections_of_learning_points_and_later_sections(tmp_path: Path) -> None:
    body = (
        "<h1>T</h1><h2>Case presentation</h2><p>A man had a cough.</p>"
        "<h2>Learning points</h2><ul><li>Point one.</li></ul><h3>For patients</h3><p>Point two.</p>"
        "<h2>Patient's perspective</h2><p>I was scared.</p>"
    )
    case = read_case_report(_page(tmp_path, body))
    assert case.learning_points == ("Point one.", "Point two.")
    assert [s.heading for s in case.sections] == ["Case presentation", "Patient's perspective"]
    assert case.sections[1].paragraphs == ("I was scared.",)


def test_outside_case_sections_justext_decides(tmp_path: Path) -> None:
    long_text = (
        "This is a long paragraph written in plain English that describes the history of the "
        "hospital and the people who have worked there over the years, and it is not a link, "
        "which is why jusText, having counted its length and its many stop words, calls it good."
    )
    body = (
        f"<h1>T</h1><h2>Summary</h2><p>Fever.</p><h2>Acknowledgements</h2><p>{long_text}</p><h2>Share</h2><p>Tweet</p>"
    )
    case = read_case_report(_page(tmp_path, body))
    assert [s.heading for s in case.sections] == ["Summary", "Acknowledgements"]
    assert case.sections[0].paragraphs == ("Fever.",)
    assert case.sections[1].paragraphs == (long_text,)


def test_white_space_between_inline_elements_is_kept(tmp_path: Path) -> None:
    body = "<h1>T</h1><h2>Investigations</h2><p>Culture grew <i>Mycobacterium</i> <i>tuberculosis</i>.</p>"
    case = read_case_report(_page(tmp_path, body))
    assert case.sections[0].paragraphs == ("Culture grew Mycobacterium tuberculosis.",)


def test_title_falls_back_to_citation_meta(tmp_path: Path) -> None:
    head = '<meta name="citation_title" content="A  rare   case">'
    case = read_case_report(_page(tmp_path, "<h2>Summary</h2><p>Text.</p>", head=head))
    assert case.title == "A rare case"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "empty"),
        (b"  \n\t ", "empty"),
        (b'{"case": "not a page"}', "not an HTML page"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR<html>", "not an HTML page"),
        (
            b'<!DOCTYPE html [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><html><body><h1>&xxe;</h1></body></html>',
            "declares entities",
        ),
        (b"<html><body><h2>Summary</h2><p>No title anywhere.</p></body></html>", "no article title"),
    ],
)
def test_bad_input_names_the_file(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "bcr-2020-000002.html"
    path.write_bytes(content)
    with pytest.raises(SourceError, match=expected) as caught:
        read_case_report(path)
    assert caught.value.path == str(path)


def test_finished_paragraphs_keep_the_text_justext_computes() -> None:
    """Pins the jusText behaviour the reader relies on (pyproject pins jusText 3.x): a parsed paragraph's
    cached text is the text jusText's own ``Paragraph.text`` computes from its text nodes, and the copy holds
    every attribute jusText's paragraph has, with the same values."""
    from justext.core import ParagraphMaker, html_to_dom
    from justext.paragraph import Paragraph

    from clinical_corpora.builders.sources.bmj_html import _FinishedParagraph, _SpacePreservingParagraphMaker

    for page in sorted(SAMPLE.glob("*.html")):
        root = html_to_dom(page.read_bytes())
        paragraphs = _SpacePreservingParagraphMaker.make_paragraphs(root)
        assert paragraphs and all(type(paragraph) is _FinishedParagraph for paragraph in paragraphs)
        assert [paragraph.text for paragraph in paragraphs] == [Paragraph.text.fget(p) for p in paragraphs]
        parsed = ParagraphMaker.make_paragraphs(root)[0]
        copied = _FinishedParagraph(parsed)
        assert {k: v for k, v in vars(copied).items() if k != "text"} == vars(parsed)
