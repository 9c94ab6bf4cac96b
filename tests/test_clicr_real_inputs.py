"""Page and RRF variants the CliCR readers meet in real downloads (corpora/clicr/README.md, Real inputs).

Every page and row is invented.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from clinical_corpora.builders.sources.bmj_html import read_case_report
from clinical_corpora.builders.sources.umls import read_mrconso
from clinical_corpora.core.errors import SourceError
from clinical_corpora.corpora.clicr.index_cache import load_index

BODY = (
    "<h1>Sj\u00f6gren\u2019s syndrome presenting as fever</h1>"
    "<h2>Case presentation</h2><p>A woman with Sj\u00f6gren\u2019s syndrome had a fever of 39\u00b0C.</p>"
    "<h2>Learning points</h2><ul><li>Think of Sj\u00f6gren\u2019s syndrome.</li></ul>"
)


def _page(tmp_path: Path, head: str, encoding: str) -> Path:
    path = tmp_path / "bcr-2021-000001.html"
    path.write_bytes(f"<!DOCTYPE html><html><head>{head}</head><body>{BODY}</body></html>".encode(encoding))
    return path


@pytest.mark.parametrize(
    ("head", "encoding"),
    [
        ('<meta charset="utf-8">', "utf-8"),
        ('<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">', "cp1252"),
    ],
    ids=["utf-8-meta-charset", "windows-1252-http-equiv"],
)
def test_page_encoding_declared_in_the_page(tmp_path: Path, head: str, encoding: str) -> None:
    case = read_case_report(_page(tmp_path, head, encoding))
    assert case.title == "Sj\u00f6gren\u2019s syndrome presenting as fever"
    assert case.sections[0].paragraphs == ("A woman with Sj\u00f6gren\u2019s syndrome had a fever of 39\u00b0C.",)
    assert case.learning_points == ("Think of Sj\u00f6gren\u2019s syndrome.",)


def test_utf8_page_without_a_declared_charset(tmp_path: Path) -> None:
    case = read_case_report(_page(tmp_path, "", "utf-8"))
    assert case.title == "Sj\u00f6gren\u2019s syndrome presenting as fever"


@pytest.mark.parametrize("head", ['<meta charset="utf-8">', ""], ids=["declared-utf-8", "undeclared"])
def test_a_latin1_byte_in_a_utf8_page_is_an_error_not_a_replacement_character(tmp_path: Path, head: str) -> None:
    path = _page(tmp_path, head, "utf-8")
    path.write_bytes(path.read_bytes().replace("Sj\u00f6gren".encode(), b"Sj\xf6gren", 1))
    with pytest.raises(SourceError, match=r"expected UTF-8 text.*found byte 0xf6 at byte offset \d+"):
        read_case_report(path)


ROW = "C9100001|ENG|P|L9100001|PF|S9100001|Y|A9100001||||MTH|PN|D900001|Sj\u00f6gren syndrome|0|N|256|\n"


def test_rrf_utf8_row_with_crlf(tmp_path: Path) -> None:
    path = tmp_path / "MRCONSO.RRF"
    path.write_bytes(ROW.replace("\n", "\r\n").encode("utf-8"))
    (row,) = read_mrconso(path)
    assert (row.string, row.cvf) == ("Sj\u00f6gren syndrome", "256")


@pytest.mark.parametrize(
    "content", [ROW.encode("latin-1"), gzip.compress(ROW.encode("utf-8"))], ids=["latin-1", "gzip"]
)
def test_rrf_bytes_that_are_not_utf8_are_a_source_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "MRCONSO.RRF"
    path.write_bytes(content)
    with pytest.raises(SourceError, match="UTF-8"):
        list(read_mrconso(path))


def test_rrf_split_in_parts_is_reported_missing(tmp_path: Path) -> None:
    # Older releases ship MRCONSO.RRF.aa, MRCONSO.RRF.ab, … to be concatenated.
    (tmp_path / "MRCONSO.RRF.aa").write_text(ROW, encoding="utf-8")
    (tmp_path / "MRSTY.RRF").write_text("C9100001|T047|B2.2.1.2.1|Disease or Syndrome|AT9100001|3840|\n")
    with pytest.raises(SourceError, match="missing: the umls source is a META folder") as caught:
        load_index(tmp_path)
    assert caught.value.path == str(tmp_path / "MRCONSO.RRF")
