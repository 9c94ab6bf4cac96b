"""Streaming MIMIC note readers and the challenge's annotation CSV, on files in the raw formats."""

from __future__ import annotations

import csv
import gzip
import io
import random
import re
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.sources.mimic import table_scan
from clinical_corpora.builders.sources.mimic.notes import (
    MIMIC_IV_NOTE_COLUMNS,
    NOTEEVENTS_COLUMNS,
    ChallengeNote,
    MimicIvNote,
    iter_challenge_notes,
    iter_mimic_iv_notes,
    iter_noteevents,
    iter_notes,
    read_span_annotations,
)
from clinical_corpora.core.errors import SourceError

SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "snomed_el" / "sample"


def _csv_lines(rows: list[list[object]], *, quoting: int = csv.QUOTE_MINIMAL, terminator: str = "\n") -> list[str]:
    """Each row serialised on its own, as the stdlib writer (and MIMIC's exports) quote it."""
    serialised = []
    for row in rows:
        buffer = io.StringIO()
        csv.writer(buffer, quoting=quoting, lineterminator=terminator).writerow(row)
        serialised.append(buffer.getvalue())
    return serialised


def _write(path: Path, chunks: list[str], *, compress: bool) -> Path:
    data = "".join(chunks).encode("utf-8")
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def _start_lines(chunks: list[str]) -> list[int]:
    """1-based physical line on which each serialised chunk starts."""
    starts, line = [], 1
    for chunk in chunks:
        starts.append(line)
        line += chunk.count("\n")
    return starts


def _discharge_row(note_id: str, text: str, hadm_id: object = 22595853) -> list[object]:
    subject_id = note_id.split("-")[0]
    return [note_id, subject_id, hadm_id, "DS", 21, "2180-05-07 00:00:00", "2180-05-09 15:26:00", text]


MULTILINE = (
    ' \nName:  ___   Unit No:   ___\n \nChief Complaint:\n"worst headache", nausea\n'
    " \nHistory of Present Illness:\n___ yo F\n"
)


@pytest.mark.parametrize("compress", [True, False])
def test_discharge_table_keeps_multiline_quoted_text_and_start_lines(tmp_path: Path, compress: bool) -> None:
    rows = [
        list(MIMIC_IV_NOTE_COLUMNS),
        _discharge_row("10000032-DS-21", MULTILINE),
        _discharge_row("10000032-DS-22", "one line, with a comma"),
        _discharge_row("10000084-DS-17", 'a "quoted"\r\nCRLF line\n', hadm_id=""),
    ]
    chunks = _csv_lines(rows)
    path = _write(tmp_path / ("discharge.csv.gz" if compress else "discharge.csv"), chunks, compress=compress)

    notes = list(iter_mimic_iv_notes(path))

    assert [note.note_id for note in notes] == ["10000032-DS-21", "10000032-DS-22", "10000084-DS-17"]
    assert notes[0].text == MULTILINE
    assert notes[2].text == 'a "quoted"\r\nCRLF line\n'
    assert [note.line for note in notes] == _start_lines(chunks)[1:] == [2, 11, 12]
    assert notes[0] == MimicIvNote(
        note_id="10000032-DS-21",
        subject_id=10000032,
        hadm_id=22595853,
        note_type="DS",
        note_seq=21,
        charttime=datetime(2180, 5, 7),
        storetime=datetime(2180, 5, 9, 15, 26),
        text=MULTILINE,
        line=2,
    )
    assert notes[2].hadm_id is None


def test_last_row_without_a_final_newline(tmp_path: Path) -> None:
    path = _write(tmp_path / "notes.csv", ["note_id,text\n", 'a-DS-1,"x\ny"\n', 'b-DS-1,"z\nw"'], compress=False)

    assert [(note.text, note.line) for note in iter_challenge_notes(path)] == [("x\ny", 2), ("z\nw", 4)]


def test_selection_yields_only_wanted_notes_in_file_order(tmp_path: Path) -> None:
    rows = [list(MIMIC_IV_NOTE_COLUMNS)] + [_discharge_row(f"1000{i:04d}-DS-1", f"note {i}\nline") for i in range(50)]
    chunks = _csv_lines(rows)
    path = _write(tmp_path / "discharge.csv.gz", chunks, compress=True)
    wanted = {"10000042-DS-1", "10000007-DS-1", "10000049-DS-1"}

    notes = list(iter_mimic_iv_notes(path, wanted, block_size=256))

    assert [note.note_id for note in notes] == ["10000007-DS-1", "10000042-DS-1", "10000049-DS-1"]
    assert [note.line for note in notes] == [_start_lines(chunks)[i] for i in (8, 43, 50)]
    assert [note.text for note in notes] == ["note 7\nline", "note 42\nline", "note 49\nline"]


def test_reading_stops_once_every_wanted_note_was_seen(tmp_path: Path) -> None:
    rows = [list(MIMIC_IV_NOTE_COLUMNS)] + [_discharge_row(f"100000{i:02d}-DS-1", "text\nmore") for i in range(40)]
    chunks = _csv_lines(rows)
    chunks.append("10000099-DS-1,broken row with too few fields\n")
    path = _write(tmp_path / "discharge.csv", chunks, compress=False)

    found = list(iter_mimic_iv_notes(path, {"10000001-DS-1"}, block_size=256))
    assert [note.note_id for note in found] == ["10000001-DS-1"]
    with pytest.raises(SourceError) as error:
        list(iter_mimic_iv_notes(path, {"10000001-DS-1", "10000098-DS-1"}, block_size=256))
    assert (error.value.path, error.value.line) == (str(path), _start_lines(chunks)[-1])
    assert "expected 8 fields, found 2" in str(error.value)


def test_malformed_row_after_multiline_rows_names_its_physical_line(tmp_path: Path) -> None:
    chunks = _csv_lines(
        [list(MIMIC_IV_NOTE_COLUMNS)] + [_discharge_row(f"1000000{i}-DS-1", MULTILINE) for i in range(3)]
    )
    chunks.append('10000009-DS-1,10000009,1,DS,1,2180-01-01 00:00:00,,"unterminated\nquote\n')
    path = _write(tmp_path / "discharge.csv.gz", chunks, compress=True)

    with pytest.raises(SourceError, match="the file ends inside a quoted field") as error:
        list(iter_mimic_iv_notes(path))
    assert (error.value.path, error.value.line) == (str(path), _start_lines(chunks)[-1])


def test_wrong_header_names_the_expected_columns(tmp_path: Path) -> None:
    path = _write(tmp_path / "discharge.csv", ["note_id,subject_id,text\n", "1,2,x\n"], compress=False)

    with pytest.raises(SourceError, match="expected the columns note_id,subject_id,hadm_id") as error:
        list(iter_mimic_iv_notes(path))
    assert error.value.line == 1


def test_bad_field_value_names_column_and_line(tmp_path: Path) -> None:
    rows = [list(MIMIC_IV_NOTE_COLUMNS), _discharge_row("10000001-DS-1", "ok")]
    bad = _discharge_row("10000002-DS-1", "text")
    bad[1] = "not-a-number"
    path = _write(tmp_path / "discharge.csv", _csv_lines([*rows, bad]), compress=False)

    with pytest.raises(SourceError, match="column subject_id: expected an integer") as error:
        list(iter_mimic_iv_notes(path))
    assert error.value.line == 3


def test_duplicate_wanted_note_id_is_an_error(tmp_path: Path) -> None:
    rows = [
        list(MIMIC_IV_NOTE_COLUMNS),
        _discharge_row("10000001-DS-1", "a"),
        _discharge_row("10000001-DS-1", "b"),
    ]
    path = _write(tmp_path / "discharge.csv", _csv_lines(rows), compress=False)

    with pytest.raises(SourceError, match=r"duplicate note_id '10000001-DS-1' \(first at line 2\)") as error:
        list(iter_mimic_iv_notes(path, {"10000001-DS-1", "10000002-DS-1"}))
    assert error.value.line == 3


def test_gz_name_without_gzip_content_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "discharge.csv.gz", _csv_lines([list(MIMIC_IV_NOTE_COLUMNS)]), compress=False)

    with pytest.raises(SourceError, match="not gzip-compressed"):
        list(iter_mimic_iv_notes(path))


def test_gzip_content_is_detected_whatever_the_name(tmp_path: Path) -> None:
    chunks = _csv_lines([["note_id", "text"], ["10000001-DS-1", "x\ny"]])
    path = _write(tmp_path / "notes.csv", chunks, compress=True)

    assert list(iter_challenge_notes(path)) == [ChallengeNote("10000001-DS-1", "x\ny", 2)]


def test_iter_notes_reads_either_layout_by_header(tmp_path: Path) -> None:
    challenge = _write(
        tmp_path / "mimic-iv_notes_training_set.csv",
        _csv_lines([["note_id", "text"], ["a-DS-1", "t"]]),
        compress=False,
    )
    other = _write(tmp_path / "other.csv", _csv_lines([["id", "body"], ["a", "t"]]), compress=False)

    assert [type(note) for note in iter_notes(challenge)] == [ChallengeNote]
    assert [note.note_id for note in iter_notes(SAMPLE / "discharge.csv.gz", {"19990003-DS-2"})] == ["19990003-DS-2"]
    with pytest.raises(SourceError, match=r"expected the columns .*MIMIC-IV-Note.* or note_id,text"):
        iter_notes(other)


def test_sample_discharge_notes_are_mimic_iv_shaped() -> None:
    notes = list(iter_mimic_iv_notes(SAMPLE / "discharge.csv.gz"))

    assert len(notes) == 12
    assert all(note.note_type == "DS" and note.note_id.startswith(f"{note.subject_id}-DS-") for note in notes)
    assert all("Chief Complaint:" in note.text and "___" in note.text for note in notes)


def _noteevents_chunks() -> list[str]:
    rows: list[list[object]] = [
        list(NOTEEVENTS_COLUMNS),
        [
            174,
            22532,
            167853,
            "2151-08-04",
            "",
            "",
            "Discharge summary",
            "Report",
            "",
            "",
            "Admission Date:  [**2151-7-16**]\n",
        ],
        [
            175,
            13702,
            107527,
            "2118-06-14",
            "2118-06-14 10:15:00",
            "2118-06-14 11:00:00",
            "Radiology",
            "CHEST (PA & LAT)",
            18765,
            "",
            'FINDINGS:\n"No" effusion.\n',
        ],
        [
            176,
            13702,
            "",
            "2118-06-15",
            "2118-06-15 08:00:00",
            "",
            "Radiology",
            "CT HEAD W/O CONTRAST",
            "",
            1,
            "IMPRESSION: none\n",
        ],
        [177, 99999, 100001, "2118-06-16", "", "", "Nursing", "Generic Note", 14, "", "stable"],
    ]
    return _csv_lines(rows, quoting=csv.QUOTE_NONNUMERIC)


def test_noteevents_quoted_header_selection_and_types(tmp_path: Path) -> None:
    chunks = _noteevents_chunks()
    path = _write(tmp_path / "NOTEEVENTS.csv.gz", chunks, compress=True)

    radiology = list(iter_noteevents(path, categories={"Radiology"}))
    by_row = list(iter_noteevents(path, row_ids=[176, 174]))

    assert [(event.row_id, event.line) for event in radiology] == [
        (175, _start_lines(chunks)[2]),
        (176, _start_lines(chunks)[3]),
    ]
    assert radiology[0].text == 'FINDINGS:\n"No" effusion.\n'
    assert radiology[0].cgid == 18765 and radiology[0].iserror is False
    assert radiology[1].iserror is True and radiology[1].hadm_id is None and radiology[1].storetime is None
    assert radiology[1].chartdate == date(2118, 6, 15) and radiology[1].charttime == datetime(2118, 6, 15, 8)
    assert [event.row_id for event in by_row] == [174, 176]
    assert by_row[0].category == "Discharge summary" and by_row[0].chartdate == date(2151, 8, 4)
    assert [event.row_id for event in iter_noteevents(path, row_ids=[175, 176], categories={"Nursing"})] == []


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(
        st.text(alphabet=st.sampled_from(list('ab ,"\n\r_é😀')), max_size=60),
        min_size=1,
        max_size=25,
    ),
    data=st.data(),
)
def test_any_quoted_text_round_trips_with_its_line(tmp_path: Path, texts: list[str], data: st.DataObject) -> None:
    rows = [["note_id", "text"]] + [[f"n{i}", text] for i, text in enumerate(texts)]
    chunks = _csv_lines(rows, terminator="\r\n")
    path = _write(tmp_path / "notes.csv.gz", chunks, compress=True)
    wanted = data.draw(st.sets(st.sampled_from([f"n{i}" for i in range(len(texts))])))

    notes = list(iter_challenge_notes(path, wanted, block_size=512))

    expected = [
        (f"n{i}", text, line)
        for i, (text, line) in enumerate(zip(texts, _start_lines(chunks)[1:], strict=True))
        if f"n{i}" in wanted
    ]
    assert [(note.note_id, note.text, note.line) for note in notes] == expected


def test_span_annotations_are_typed_with_lines() -> None:
    annotations = read_span_annotations(SAMPLE / "train_annotations.csv")

    assert len(annotations) == 156
    first = annotations[0]
    assert (first.note_id, first.line) == ("19990001-DS-4", 2)
    assert first.end - first.start == len("chest pain")


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ("note_id,begin,end,concept_id\n", 1, "expected the header note_id,start,end,concept_id"),
        (
            "note_id,start,end,concept_id\na,0,4,22298006\na,4,x,22298006\n",
            3,
            "column end: expected an integer",
        ),
        ("note_id,start,end,concept_id\na,5,5,22298006\n", 2, "expected 0 <= start < end"),
        ("note_id,start,end,concept_id\na,0,4\n", 2, "expected 4 fields"),
        ('note_id,start,end,concept_id\n"a"b,0,4,1\n', 2, "malformed CSV"),
    ],
)
def test_bad_annotation_rows_name_file_and_line(tmp_path: Path, content: str, line: int, message: str) -> None:
    path = tmp_path / "train_annotations.csv"
    path.write_text(content)

    with pytest.raises(SourceError, match=message) as error:
        read_span_annotations(path)
    assert (error.value.path, error.value.line) == (str(path), line)


def test_quote_inside_an_unquoted_field_is_rejected(tmp_path: Path) -> None:
    chunks = ["note_id,text\n", "a-DS-1,x\n", "b-DS-1,height 5'6\" tall\n", "c-DS-1,y\n"]
    path = _write(tmp_path / "notes.csv", chunks, compress=False)

    with pytest.raises(SourceError, match="RFC 4180 quoting expected") as error:
        list(iter_challenge_notes(path))
    assert error.value.line == 3


def test_truncated_gzip_is_an_error(tmp_path: Path) -> None:
    rng = random.Random(3)
    texts = ["".join(rng.choices("abcdefghij \n", k=5000)) for _ in range(800)]  # ~4 MB, barely compressible
    rows = [list(MIMIC_IV_NOTE_COLUMNS)] + [_discharge_row(f"1{i:07d}-DS-1", text) for i, text in enumerate(texts)]
    data = gzip.compress("".join(_csv_lines(rows)).encode())
    path = tmp_path / "discharge.csv.gz"
    path.write_bytes(data[: len(data) // 2])

    with pytest.raises(SourceError, match="the gzip data ends early") as error:
        list(iter_mimic_iv_notes(path))
    assert error.value.path == str(path)
    message = str(error.value)
    assert "\n" not in message and f"after {len(data) // 2} compressed bytes" in message
    read, lines = map(int, re.search(r", (\d+) uncompressed bytes \((\d+) lines\)", message).groups())
    assert 0 < read < len(gzip.decompress(data)) and error.value.line == lines + 1 > 2


# The MIMIC-III demo release writes NOTEEVENTS with a lower-case, unquoted header.
DEMO_NOTEEVENTS = (
    "row_id,subject_id,hadm_id,chartdate,charttime,storetime,category,description,cgid,iserror,text\n"
    '1201,10006,142345,2164-10-23,,,Discharge summary,Report,,,"Admission Date:  [**2164-10-23**]\n'
    'Service: MEDICINE\n"\n'
    "1202,10011,105331,2126-08-28,2126-08-28 09:15:00,2126-08-28 09:20:00,Nursing,Nursing Progress Note,"
    '17345,,"Pt alert.\n"\n'
)


def test_demo_noteevents_lower_case_header(tmp_path: Path) -> None:
    path = _write(tmp_path / "NOTEEVENTS.csv", [DEMO_NOTEEVENTS], compress=False)

    events = list(iter_noteevents(path))
    assert [(event.row_id, event.category, event.line) for event in events] == [
        (1201, "Discharge summary", 2),
        (1202, "Nursing", 5),
    ]
    assert events[0].text == "Admission Date:  [**2164-10-23**]\nService: MEDICINE\n"
    assert events[1].cgid == 17345 and events[1].charttime == datetime(2126, 8, 28, 9, 15)
    assert [event.row_id for event in iter_noteevents(path, categories={"Nursing"})] == [1202]


@pytest.mark.parametrize(
    ("header", "read"),
    [
        ("NOTE_ID,SUBJECT_ID,HADM_ID,NOTE_TYPE,NOTE_SEQ,CHARTTIME,STORETIME,TEXT", iter_mimic_iv_notes),
        ('"Note_Id","Text"', iter_challenge_notes),
        ("\ufeffNOTE_ID,TEXT", iter_notes),
        ("Note_id,Subject_id,Hadm_id,Note_type,Note_seq,Charttime,Storetime,Text", iter_notes),
    ],
    ids=["mimic-iv-upper", "challenge-quoted-mixed", "challenge-bom-upper", "iter-notes-mimic-iv-mixed"],
)
def test_any_header_case_for_every_notes_layout(tmp_path: Path, header: str, read: object) -> None:
    row = ["10000032-DS-21", "a note"] if header.count(",") == 1 else _discharge_row("10000032-DS-21", "a note")
    path = _write(tmp_path / "notes.csv", [header + "\n", *_csv_lines([row])], compress=False)

    (note,) = read(path)  # type: ignore[operator]
    assert (note.note_id, note.text, note.line) == ("10000032-DS-21", "a note", 2)


def test_lower_case_span_annotation_header(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "train_annotations.csv", ["NOTE_ID,START,END,CONCEPT_ID\n", "n1,0,5,22298006\n"], compress=False
    )

    assert [(a.note_id, a.concept_id, a.line) for a in read_span_annotations(path)] == [("n1", 22298006, 2)]


@pytest.mark.parametrize("compress", [False, True])
def test_latin1_byte_names_line_and_byte_offset(tmp_path: Path, compress: bool) -> None:
    # A note re-encoded as Latin-1 somewhere in its history: "café" is the byte 0xe9.
    data = DEMO_NOTEEVENTS.replace("Pt alert.", "Pt alert, caf\u00e9.").encode("latin-1")
    path = tmp_path / ("NOTEEVENTS.csv.gz" if compress else "NOTEEVENTS.csv")
    path.write_bytes(gzip.compress(data) if compress else data)

    with pytest.raises(SourceError, match=r"expected UTF-8 text, found byte 0xe9 at byte offset (\d+)") as error:
        list(iter_noteevents(path))
    assert error.value.line == 5  # row 1202 starts there, its text on the same line
    offset = data.index(bytes([0xE9]))
    assert f"byte offset {offset} " in str(error.value)
    assert "\n" not in str(error.value)


def test_latin1_byte_in_the_header_or_annotations(tmp_path: Path) -> None:
    notes = tmp_path / "notes.csv"
    notes.write_bytes(b"note_id,text\xe9\n")
    with pytest.raises(SourceError, match="found byte 0xe9 at byte offset 12") as error:
        iter_notes(notes)
    assert error.value.line == 1
    annotations = tmp_path / "train_annotations.csv"
    annotations.write_bytes(b"note_id,start,end,concept_id\nn1,0,5,1\nn\xe92,0,5,1\n")
    with pytest.raises(SourceError, match="found byte 0xe9 at byte offset 39") as error:
        read_span_annotations(annotations)
    assert error.value.line == 3


def test_gzip_truncated_within_the_header_read(tmp_path: Path) -> None:
    # Small enough that the whole file is inflated by the first read: the failure surfaced as
    # a bare EOFError traceback before.
    data = gzip.compress(DEMO_NOTEEVENTS.encode())
    path = tmp_path / "NOTEEVENTS.csv.gz"
    path.write_bytes(data[:-12])

    with pytest.raises(SourceError, match=rf"ends early \(truncated\?\) after {len(data) - 12} compressed bytes"):
        list(iter_noteevents(path))
    corrupt = bytearray(data)
    corrupt[-6] ^= 0xFF  # the stored length no longer matches
    path.write_bytes(bytes(corrupt))
    with pytest.raises(SourceError, match="corrupt gzip data"):
        list(iter_noteevents(path))


def test_radiology_table_reads_like_discharge(tmp_path: Path) -> None:
    # MIMIC-IV-Note radiology.csv.gz: the discharge columns, note_type RR.
    row = [
        "10000032-RR-14",
        10000032,
        22595853,
        "RR",
        14,
        "2180-05-06 21:19:00",
        "",
        "EXAMINATION:  CHEST (PA AND LAT)\n",
    ]
    path = _write(tmp_path / "radiology.csv.gz", _csv_lines([list(MIMIC_IV_NOTE_COLUMNS), row]), compress=True)

    (note,) = iter_notes(path)
    assert isinstance(note, MimicIvNote)
    assert (note.note_type, note.note_seq, note.storetime, note.line) == ("RR", 14, None, 2)


@pytest.mark.parametrize(("bad_line", "block_size"), [(5, 256), (151, 256), (151, 1 << 20)])
def test_invalid_utf8_inside_a_multiline_note_names_its_own_line(
    tmp_path: Path, bad_line: int, block_size: int
) -> None:
    # Notes of 20 lines each: the bad byte sits on a line well after its row's first line.
    text = "\n".join(f"line {k}" for k in range(20))
    chunks = _csv_lines([list(MIMIC_IV_NOTE_COLUMNS)] + [_discharge_row(f"1{i:07d}-DS-1", text) for i in range(12)])
    data = "".join(chunks).encode()
    lines = data.split(b"\n")
    lines[bad_line - 1] += b" caf\xe9"
    data = b"\n".join(lines)
    path = tmp_path / "discharge.csv.gz"
    path.write_bytes(gzip.compress(data))

    with pytest.raises(SourceError, match="expected UTF-8 text, found byte 0xe9") as error:
        list(iter_mimic_iv_notes(path, block_size=block_size))
    assert error.value.line == bad_line
    assert f"byte offset {data.index(bytes([0xE9]))} " in str(error.value)


def test_a_character_cut_between_reads_is_located_exactly(tmp_path: Path) -> None:
    # "é" (2 bytes) straddles the first 1 MiB read; the invalid byte follows it.
    head = "note_id,text\n" + 'a-DS-1,"' + "x" * ((1 << 20) - 23) + "\n"
    data = head.encode() + "é".encode() + b'\xff"\n'
    assert data.index("é".encode()) == (1 << 20) - 1
    path = tmp_path / "notes.csv"
    path.write_bytes(data)

    with pytest.raises(SourceError, match=rf"found byte 0xff at byte offset {(1 << 20) + 1} ") as error:
        list(iter_challenge_notes(path))
    assert error.value.line == 3


def test_a_row_longer_than_the_block_is_a_clear_error(tmp_path: Path) -> None:
    chunks = _csv_lines([["note_id", "text"], ["a-DS-1", "short"], ["b-DS-1", "long " * 400]])
    path = _write(tmp_path / "notes.csv.gz", chunks, compress=True)

    with pytest.raises(SourceError, match="a row is longer than the block of 512 bytes"):
        list(iter_challenge_notes(path, block_size=512))
    assert [note.note_id for note in iter_challenge_notes(path, block_size=4096)] == ["a-DS-1", "b-DS-1"]


def test_a_table_left_half_read_lets_the_interpreter_exit(tmp_path: Path) -> None:
    # pyarrow's threads read ahead through Python; a generator still open at exit must not hang it.
    chunks = _csv_lines(
        [list(MIMIC_IV_NOTE_COLUMNS)] + [_discharge_row(f"1{i:07d}-DS-1", "t\n" * 50) for i in range(3000)]
    )
    path = _write(tmp_path / "discharge.csv.gz", chunks, compress=True)
    script = (
        "import sys\n"
        "from clinical_corpora.builders.sources.mimic.notes import iter_mimic_iv_notes\n"
        "notes = iter_mimic_iv_notes(sys.argv[1], block_size=4096)\n"
        "print(next(notes).note_id)\n"
    )

    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "10000000-DS-1")


def test_pyarrow_holds_no_bytes_object_read_from_a_table() -> None:
    # What read() returns is copied into pyarrow's own buffers at once: a pyarrow thread letting go of a
    # Python object while the interpreter exits aborts it ("terminate called without an active exception").
    data = "".join(_csv_lines([_discharge_row(f"1{i:07d}-DS-1", "t\n" * 50) for i in range(3000)])).encode()

    class Recorded(io.BytesIO):
        chunks: list[bytes] = []

        def read(self, size: int | None = -1) -> bytes:
            chunk = super().read(size)
            self.chunks.append(chunk)
            return chunk

    source = Recorded(data)
    rows = table_scan._CountingStream(Path("discharge.csv"), source)
    rows.reader = table_scan._open_csv(Path("discharge.csv"), rows, MIMIC_IV_NOTE_COLUMNS, 4096)
    while len(source.chunks) < 3:  # pyarrow reads ahead of the batches it hands out
        assert rows.reader.read_next_batch().num_rows > 0
    source.chunks.append(bytes(bytearray(b"held by the list alone")))
    counts = [sys.getrefcount(chunk) for chunk in source.chunks if chunk]
    rows.finish()
    assert set(counts) == {counts[-1]}


@pytest.mark.parametrize(
    "header",
    [
        ",".join(f'"{name}"' for name in NOTEEVENTS_COLUMNS) + "\n",
        ",".join(f'"{name.lower()}"' for name in NOTEEVENTS_COLUMNS) + "\n",
        ",".join(NOTEEVENTS_COLUMNS),
    ],
    ids=["quoted-upper", "quoted-lower-demo", "no-final-newline"],
)
@pytest.mark.parametrize("compress", [False, True], ids=["csv", "gz"])
def test_header_only_noteevents_is_an_empty_table(tmp_path: Path, header: str, compress: bool) -> None:
    """The MIMIC-III demo's two header-only ``NOTEEVENTS.csv`` (one with a lower-case quoted header) hold no
    rows: read as an empty table, not "a row is longer than the block"; asked for ROW_IDs, it says it has no
    rows instead of naming a ROW_ID as missing."""
    path = _write(tmp_path / "NOTEEVENTS.csv", [header], compress=compress)
    assert list(iter_noteevents(path)) == []
    with pytest.raises(SourceError, match=r"the table has no rows .*expected the rows of 2 ROW_ID\(s\) \(174, 175\)"):
        list(iter_noteevents(path, row_ids=[175, 174]))


@pytest.mark.parametrize(
    ("corpus", "source", "name", "columns", "samples"),
    [
        ("rad_coref", "noteevents", "NOTEEVENTS.csv.gz", NOTEEVENTS_COLUMNS, ["annotations"]),
        ("snomed_el", "notes", "discharge.csv.gz", MIMIC_IV_NOTE_COLUMNS, ["annotations", "terminology"]),
    ],
)
def test_a_build_on_a_header_only_note_table_says_the_table_has_no_rows(
    corpus: str,
    source: str,
    name: str,
    columns: tuple[str, ...],
    samples: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every builder reading a MIMIC note table, given one with a header and no rows (a download cut after its
    first line, the MIMIC-III demo's NOTEEVENTS.csv), names the file and says it has no rows, rather than
    naming the first annotated ROW_ID as missing."""
    table = _write(tmp_path / name, [",".join(f'"{column}"' for column in columns) + "\n"], compress=True)
    argv = ["release", corpus, "--source", f"{source}={table}", "--out", str(tmp_path / "out")]
    assert main([*argv, *(option for sample in samples for option in ("--sample", sample))]) == 1
    error = capsys.readouterr().err
    assert f"error: {table}:2: the table has no rows (a header and nothing after it): expected the rows of" in error
    assert "is not in NOTEEVENTS" not in error and "Traceback" not in error
    assert not (tmp_path / "out" / corpus).exists()
