"""BMJ pages within bounds (issue 16): deep nesting fails naming the page instead of losing the Learning
points, a page over the size limit fails naming it, and page cleaning is jusText's classification in
linear time (the same classes, checked against jusText's own function)."""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace

import justext.core
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from justext.paragraph import Paragraph

from clinical_corpora.builders.sources.bmj_html import read_case_report
from clinical_corpora.builders.sources.boilerplate import revise_paragraph_classification
from clinical_corpora.core.errors import SourceError

SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "clicr" / "sample" / "bmj_html" / "bcr-2019-228101.html"
LEARNING_POINTS = "    <h2>Learning points</h2>"


def _nested(tmp_path: Path, depth: int) -> Path:
    page = SAMPLE.read_text(encoding="utf-8")
    at = page.index(LEARNING_POINTS)
    path = tmp_path / SAMPLE.name
    path.write_text(page[:at] + "<div>" * depth + "deep" + "</div>" * depth + page[at:], encoding="utf-8")
    return path


def test_moderate_nesting_keeps_the_learning_points(tmp_path: Path) -> None:
    assert len(read_case_report(_nested(tmp_path, 100)).learning_points) == 3


@pytest.mark.parametrize("depth", [300, 5000])
def test_deep_nesting_fails_naming_the_page_instead_of_dropping_the_learning_points(tmp_path: Path, depth: int) -> None:
    with pytest.raises(SourceError, match="Learning points included, would be lost") as raised:
        read_case_report(_nested(tmp_path, depth))
    assert raised.value.path.endswith(SAMPLE.name) and raised.value.line is not None


def test_a_page_over_the_size_limit_fails_naming_it(tmp_path: Path) -> None:
    path = tmp_path / SAMPLE.name
    path.write_bytes(SAMPLE.read_bytes())
    assert read_case_report(path).learning_points
    with pytest.raises(SourceError, match="over the 1,000-byte limit") as raised:
        read_case_report(path, max_bytes=1000)
    assert raised.value.path == str(path)


def _paragraph(cf_class: str, heading: bool, length: int) -> Paragraph:
    paragraph = Paragraph(SimpleNamespace(dom="body.p", xpath="/body/p"))
    paragraph.text_nodes = ["x" * length]
    paragraph.cf_class, paragraph.heading = cf_class, heading
    return paragraph


PARAGRAPHS = st.lists(
    st.tuples(
        st.sampled_from(["short", "neargood", "good", "bad"]), st.booleans(), st.sampled_from([0, 3, 40, 150, 260])
    ),
    max_size=40,
)


@settings(max_examples=300)
@given(PARAGRAPHS)
def test_linear_revision_gives_justext_classes(specs: list[tuple[str, bool, int]]) -> None:
    ours = [_paragraph(*spec) for spec in specs]
    theirs = copy.deepcopy(ours)
    revise_paragraph_classification(ours)
    justext.core.revise_paragraph_classification(theirs)
    assert [p.class_type for p in ours] == [p.class_type for p in theirs]


def test_linear_revision_on_the_sample_pages() -> None:
    for page in sorted(SAMPLE.parent.iterdir()):
        root = justext.core.html_to_dom(page.read_bytes())
        ours = justext.core.ParagraphMaker.make_paragraphs(root)
        justext.core.classify_paragraphs(ours, justext.get_stoplist("English"))
        theirs = copy.deepcopy(ours)
        revise_paragraph_classification(ours)
        justext.core.revise_paragraph_classification(theirs)
        assert [p.class_type for p in ours] == [p.class_type for p in theirs], page.name
