"""UMLS RRF readers: field layout, streaming, malformed lines named by file and line."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from clinical_corpora.builders.sources.umls import (
    MRCONSO_COLUMNS,
    MRSTY_COLUMNS,
    NotPlainRrf,
    file_sha256,
    read_mrconso,
    read_mrsty,
    rrf_batches,
)
from clinical_corpora.core.errors import SourceError

META = Path(__file__).resolve().parents[1] / "corpora" / "clicr" / "sample" / "umls" / "META"
CONSO_ROW = "C9100001|ENG|P|L9100001|PF|S9100001|Y|A9100001||||MSH|MH|D900001|Sugar diabetes|0|N|256|"


def test_mrconso_fields_by_name() -> None:
    rows = list(read_mrconso(META / "MRCONSO.RRF"))
    assert len(rows) == len((META / "MRCONSO.RRF").read_text(encoding="utf-8").splitlines())
    first = rows[0]
    assert (first.cui, first.lat, first.ts, first.stt, first.ispref) == ("C9000001", "ENG", "P", "PF", "Y")
    assert (first.sab, first.tty, first.string, first.suppress) == ("MTH", "PN", "Tuberculosis", "N")
    assert {row.lat for row in rows} == {"ENG", "FRE", "GER", "SPA", "DUT"}
    assert {row.suppress for row in rows} == {"N", "O", "E", "Y"}


def test_real_layout_row_with_empty_fields(tmp_path: Path) -> None:
    path = tmp_path / "MRCONSO.RRF"
    path.write_text(CONSO_ROW + "\r\n", encoding="utf-8")
    (row,) = read_mrconso(path)
    assert row.string == "Sugar diabetes"
    assert (row.saui, row.scui, row.sdui, row.code, row.cvf) == ("", "", "", "D900001", "256")


def test_mrsty_rows_and_several_types_per_concept() -> None:
    rows = list(read_mrsty(META / "MRSTY.RRF"))
    insulin = [row for row in rows if row.cui == "C9000108"]
    assert [(row.tui, row.sty) for row in insulin] == [
        ("T116", "Amino Acid, Peptide, or Protein"),
        ("T121", "Pharmacologic Substance"),
        ("T125", "Hormone"),
    ]


MALFORMED_LINES = [
    (CONSO_ROW[:-1], "found 17 '\\|', with text after the last one"),
    (CONSO_ROW + "extra|", "found 19 '\\|'"),
    (CONSO_ROW.replace("|Sugar diabetes|", "|Sugar|diabetes|"), "found 19 '\\|'"),
    ("C910000|" + CONSO_ROW[9:], "expected a CUI"),
    ("", "found 0 '\\|'"),
]


@pytest.mark.parametrize(("bad_line", "expected"), MALFORMED_LINES)
def test_malformed_mrconso_line_names_file_and_line(tmp_path: Path, bad_line: str, expected: str) -> None:
    path = tmp_path / "MRCONSO.RRF"
    path.write_text(f"{CONSO_ROW}\n{CONSO_ROW}\n{bad_line}\n{CONSO_ROW}\n", encoding="utf-8")
    rows = read_mrconso(path)
    assert next(rows).cui == next(rows).cui == "C9100001"  # streamed: good rows come before the error
    with pytest.raises(SourceError, match=expected) as caught:
        next(rows)
    assert (caught.value.path, caught.value.line) == (str(path), 3)
    assert str(caught.value).startswith(f"{path}:3: ")


def test_malformed_mrsty_tui(tmp_path: Path) -> None:
    path = tmp_path / "MRSTY.RRF"
    path.write_text("C9100001|T047|B2.2.1.2.1|Disease or Syndrome|AT9100001|3840|\nC9100001|47|B2|D|AT1||\n")
    with pytest.raises(SourceError, match="expected a TUI") as caught:
        list(read_mrsty(path))
    assert caught.value.line == 2


def test_file_sha256_matches_hashlib() -> None:
    path = META / "MRSTY.RRF"
    assert file_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_columnar_reader_gives_the_row_readers_fields_and_lines() -> None:
    rows = list(read_mrconso(META / "MRCONSO.RRF"))
    batches = list(rrf_batches(META / "MRCONSO.RRF", MRCONSO_COLUMNS, ["CUI", "STR", "SUPPRESS"]))
    assert batches[0][0] == 1 and sum(batch.num_rows for _, batch in batches) == len(rows)
    columns = {
        name: [value for _, batch in batches for value in batch.column(name).to_pylist()] for name in ["CUI", "STR"]
    }
    assert columns == {"CUI": [row.cui for row in rows], "STR": [row.string for row in rows]}
    ((_, types),) = rrf_batches(META / "MRSTY.RRF", MRSTY_COLUMNS, ["TUI"])
    assert types.column("TUI").to_pylist() == [row.tui for row in read_mrsty(META / "MRSTY.RRF")]


@pytest.mark.parametrize(
    "bad_line",
    [line for line, _ in MALFORMED_LINES]
    + [CONSO_ROW.replace("Sugar", "Su\rgar"), CONSO_ROW.replace("C91", "C\u0669\u0661")],
)
def test_columnar_reader_hands_rows_it_cannot_vouch_for_to_the_row_reader(tmp_path: Path, bad_line: str) -> None:
    path = tmp_path / "MRCONSO.RRF"
    path.write_text(f"{CONSO_ROW}\n{bad_line}\n{CONSO_ROW}\n", encoding="utf-8", newline="")
    with pytest.raises(NotPlainRrf):
        list(rrf_batches(path, MRCONSO_COLUMNS, ["CUI"]))
    for prefix in (b"\xef\xbb\xbf", b"\xff"):
        path.write_bytes(prefix + f"{CONSO_ROW}\n".encode())
        with pytest.raises(NotPlainRrf):
            list(rrf_batches(path, MRCONSO_COLUMNS, ["CUI"]))


def database_export(source: Path, target: Path, *, empty_cvf: bool = True) -> Path:
    """``source`` as a database export writes it: fields joined by ``|``, no trailing ``|``, CVF empty."""
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        fields = line.split("|")[:-1]
        if empty_cvf:
            fields[-1] = ""
        lines.append("|".join(fields) + "\n")
    target.write_text("".join(lines), encoding="utf-8")
    return target


def test_database_export_without_trailing_pipes_reads_like_metamorphosys(tmp_path: Path) -> None:
    """A MRCONSO/MRSTY subset as database exports write it (no trailing ``|``, empty CVF) was refused at line 1;
    its rows are now the MetamorphoSys file's, CVF aside, through the row and the columnar readers."""
    conso = database_export(META / "MRCONSO.RRF", tmp_path / "MRCONSO.RRF")
    sty = database_export(META / "MRSTY.RRF", tmp_path / "MRSTY.RRF")
    assert conso.read_text(encoding="utf-8").splitlines()[0].endswith("|N|")  # SUPPRESS, then the empty CVF
    assert [row._replace(cvf="") for row in read_mrconso(META / "MRCONSO.RRF")] == list(read_mrconso(conso))
    assert [row._replace(cvf="") for row in read_mrsty(META / "MRSTY.RRF")] == list(read_mrsty(sty))
    (_, names), (_, exported) = (
        next(iter(rrf_batches(path, MRCONSO_COLUMNS, ["CUI", "STR", "CVF"]))) for path in (META / "MRCONSO.RRF", conso)
    )
    assert exported.column("STR") == names.column("STR") and set(exported.column("CVF").to_pylist()) == {""}
    kept = database_export(META / "MRSTY.RRF", tmp_path / "kept.RRF", empty_cvf=False)
    assert list(read_mrsty(kept)) == list(read_mrsty(META / "MRSTY.RRF"))


def test_umls_index_of_a_database_export_equals_the_metamorphosys_one(tmp_path: Path) -> None:
    from clinical_corpora.corpora.clicr.umls_index import build_index

    exported = build_index(
        database_export(META / "MRCONSO.RRF", tmp_path / "MRCONSO.RRF"),
        database_export(META / "MRSTY.RRF", tmp_path / "MRSTY.RRF"),
    )
    original = build_index(META / "MRCONSO.RRF", META / "MRSTY.RRF")
    assert exported.entries == original.entries and len(exported.entries) > 0


def test_a_file_keeps_the_layout_of_its_first_line(tmp_path: Path) -> None:
    path = tmp_path / "MRCONSO.RRF"
    path.write_text(f"{CONSO_ROW[:-1]}\n{CONSO_ROW}\n", encoding="utf-8")
    row = next(read_mrconso(path))
    assert row.cvf == "256"
    with pytest.raises(SourceError, match="no trailing '\\|': the layout of line 1") as caught:
        list(read_mrconso(path))
    assert caught.value.line == 2
    with pytest.raises(NotPlainRrf):
        list(rrf_batches(path, MRCONSO_COLUMNS, ["CUI"]))
