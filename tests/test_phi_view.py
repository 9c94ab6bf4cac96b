"""The PHI gate over what a release shows besides its data: ``clincorp view``'s pages (text and attributes, a full
release's note text left out where the pages mark it licensed) and the text chunks of the card's PNG figures."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.release.phi import view_findings
from clinical_corpora.builders.view.reading import open_release
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.validation.phi_gate import scan_release
from tests.conftest import SampleVariant

NAME = "Ngozi Okafor"
SSN = "123-45-6789"


def _viewed(release: Path, out: Path) -> Path:
    assert main(["view", str(release), "--out", str(out)]) == 0
    return out


def _plant(page: Path, before: str, planted: str) -> int:
    """``planted`` put in ``page`` before the first ``before``; the line it lands on."""
    text = page.read_text(encoding="utf-8")
    at = text.index(before)
    page.write_text(text[:at] + planted + text[at:], encoding="utf-8")
    return text[:at].count("\n") + 1


def test_planted_phi_in_a_view_is_found_by_its_page_element_and_line(
    sample_variant: SampleVariant, tmp_path: Path
) -> None:
    full = sample_variant("sdoh", "full")
    pages = _viewed(full, tmp_path / "view")
    page = sorted((pages / "docs").glob("*.html"))[0]
    text_line = _plant(page, "</main>", f"<p>seen by {NAME}</p>\n")
    attribute_line = _plant(page, "</main>", f'<span title="SSN {SSN}">x</span>\n')
    _plant(page, "</main>", f"<p data-licensed>{NAME} said so</p>\n")
    findings = view_findings(pages, full, open_release(full).phi)
    places = {(f.file, f.field, f.line, f.category) for f in findings}
    name = page.relative_to(pages).as_posix()
    assert places == {(name, "p", text_line, "name"), (name, "span@title", attribute_line, "ssn")}


def test_view_refuses_pages_holding_phi_and_never_prints_it(
    sample_variant: SampleVariant, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from clinical_corpora.builders.view import writer

    render = writer.PageWriter.render

    def planted(self: writer.PageWriter, *args: object, **kwargs: object) -> tuple[str, writer.Entry]:
        page, entry = render(self, *args, **kwargs)  # type: ignore[arg-type]
        return page.replace("</main>", f"<p>call {NAME} at (617) 555-0142</p></main>"), entry

    monkeypatch.setattr(writer.PageWriter, "render", planted)
    status = main(["view", str(sample_variant("sdoh", "text-free")), "--out", str(tmp_path / "view")])
    printed = capsys.readouterr()
    assert status != 0 and "findings of the PHI gate and were not written" in printed.err
    assert "name (sha256" in printed.err and "phone (sha256" in printed.err
    assert NAME not in printed.out + printed.err and not (tmp_path / "view" / "index.html").exists()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def test_a_figures_text_chunks_are_read(sample_variant: SampleVariant, tmp_path: Path) -> None:
    full = sample_variant("sdoh", "full")
    figure = next(full.rglob("*.png")).read_bytes()
    end = figure.rindex(b"IEND") - 4
    folder = tmp_path / "figures"
    folder.mkdir()
    (folder / "untouched.png").write_bytes(figure)
    (folder / "author.png").write_bytes(figure[:end] + _chunk(b"tEXt", b"Author\0A. Person") + figure[end:])
    described = _chunk(b"zTXt", b"Description\0\0" + zlib.compress(f"drawn for {NAME}".encode()))
    (folder / "described.png").write_bytes(figure[:end] + described + figure[end:])
    scan = scan_release(folder, lambda file, field: False)
    found = {(f.file, f.field, f.category) for f in scan.findings}
    assert found == {("author.png", "tEXt:Author", "figure_text"), ("described.png", "zTXt:Description", "name")}
    assert scan.figures == 3


def test_a_file_named_png_that_is_none_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "figure.png").write_bytes(b"not a png")
    with pytest.raises(ClincorpError, match="figure.png: not a PNG image"):
        scan_release(tmp_path, lambda file, field: False)
