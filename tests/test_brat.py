"""BRAT standoff reader/writer: round trip, error locations, folder pairing, the SDOH sample."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinical_corpora.builders.sources.brat.annotations import (
    Attribute,
    BratDocument,
    Equivalence,
    Event,
    Normalization,
    Note,
    Relation,
    TextBound,
)
from clinical_corpora.builders.sources.brat.folder import brat_document_ids
from clinical_corpora.builders.sources.brat.standoff import iter_brat_folder, parse_brat, read_brat, write_brat
from clinical_corpora.core.errors import SourceError

SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "sdoh" / "sample"

TEXT = "Pt smokes 1 ppd. Recreational drug (marijuana) use.\n"
#       0123456789012345678901234567890123456789012345678901
GOOD_ANN = (
    "T1\tTobacco 3 9\tsmokes\n"
    "T2\tStatusTime 3 9\tsmokes\n"
    "T3\tAmount 10 15\t1 ppd\n"
    "E1\tTobacco:T1 Status:T2 Amount:T3\n"
    "A1\tStatusTimeVal T2 current\n"
    "T4\tDrug 30 34;47 50\tdrug use\n"
    "T5\tType 36 45\tmarijuana\n"
    "E2\tDrug:T4 Type:T5 Type2:T3\n"
    "R1\tOverlap Arg1:T3 Arg2:T5\n"
    "#1\tAnnotatorNotes T3\tchain=E12\n"
    "*\tEquiv T1 T2\n"
)


def test_parse_reads_every_line_kind() -> None:
    doc = parse_brat(GOOD_ANN, TEXT, "note.ann")
    assert doc.textbounds[3] == TextBound("T4", "Drug", ((30, 34), (47, 50)), "drug use")
    assert (doc.textbounds[3].start, doc.textbounds[3].end) == (30, 50)
    assert doc.events == (
        Event("E1", "Tobacco", "T1", (("Status", "T2"), ("Amount", "T3"))),
        Event("E2", "Drug", "T4", (("Type", "T5"), ("Type2", "T3"))),
    )
    assert doc.attributes == (Attribute("A1", "StatusTimeVal", "T2", "current"),)
    assert doc.relations == (Relation("R1", "Overlap", (("Arg1", "T3"), ("Arg2", "T5"))),)
    assert doc.notes == (Note("#1", "AnnotatorNotes", "T3", "chain=E12"),)
    assert doc.equivalences == (Equivalence("Equiv", ("T1", "T2")),)


def test_parsing_leaves_no_reference_cycle_to_collect() -> None:
    """A parsed file's objects are freed when dropped, not left for the garbage collector (in a build of 50k
    notes, collecting them was a third of the time)."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(20):
            parse_brat(GOOD_ANN, TEXT, "note.ann")
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_binary_attribute_trailing_space_and_crlf_lines_are_accepted() -> None:
    ann = "T1\tDrug 30 34\tdrug\r\nE1\tDrug:T1 \r\nA1\tNegated E1\r\n\r\n"
    doc = parse_brat(ann, TEXT)
    assert doc.events == (Event("E1", "Drug", "T1", ()),)
    assert doc.attributes == (Attribute("A1", "Negated", "E1", None),)


def test_only_newline_ends_a_line(tmp_path: Path) -> None:
    text = "Lives\u2028alone\x0cat home\tnow\n"
    ann = "T1\tTypeLiving 0 19\tLives\u2028alone\x0cat home\n#1\tAnnotatorNotes T1\ta\tb\n"
    path = tmp_path / "doc.ann"
    path.write_bytes(ann.encode("utf-8"))
    doc = read_brat(path, text)
    assert doc.textbounds[0].text == "Lives\u2028alone\x0cat home"
    assert doc.notes[0].text == "a\tb"


def test_crlf_text_offsets_count_carriage_returns(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_bytes(b"SOCIAL HISTORY:\r\nSmokes daily.\r\n")
    (tmp_path / "n.ann").write_bytes(b"T1\tTobacco 17 23\tSmokes\n")
    [(doc_id, text, doc)] = list(iter_brat_folder(tmp_path))
    assert doc_id == "n"
    assert text[17:23] == "Smokes"
    assert doc.textbounds[0].fragments == ((17, 23),)


# --- round trip -------------------------------------------------------------------------

NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,8}", fullmatch=True)
FREE_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=12)


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, BratDocument]:
    text = draw(
        st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
                min_size=1, max_size=60)
    )  # fmt: skip
    textbounds = []
    for number in range(1, draw(st.integers(0, 5)) + 1):
        cuts = draw(st.lists(st.integers(0, len(text)), min_size=2, max_size=6))  # equal cuts: empty fragments
        cuts = sorted(cuts)[: len(cuts) // 2 * 2]
        fragments = tuple(zip(cuts[0::2], cuts[1::2], strict=True))
        textbounds.append(TextBound.from_offsets(f"T{number}", draw(NAMES), fragments, text))
    events = []
    for number in range(1, len(textbounds) + 1):
        if draw(st.booleans()):
            trigger = draw(st.sampled_from(textbounds))
            targets = [t.id for t in textbounds] + [e.id for e in events]
            arguments = draw(st.lists(st.tuples(NAMES, st.sampled_from(targets)), max_size=3))
            events.append(Event(f"E{number}", trigger.type, trigger.id, tuple(arguments)))
    annotated = [t.id for t in textbounds] + [e.id for e in events]
    attributes, relations, notes, equivalences, normalizations = [], [], [], [], []
    if annotated:
        for number in range(1, draw(st.integers(0, 3)) + 1):
            value = draw(st.none() | NAMES)
            prefix = draw(st.sampled_from("AM"))
            target = draw(st.sampled_from(annotated))
            attributes.append(Attribute(f"{prefix}{number}", draw(NAMES), target, value))
        for number in range(1, draw(st.integers(0, 2)) + 1):
            pair = draw(st.lists(st.sampled_from(annotated), min_size=2, max_size=2))
            relations.append(Relation(f"R{number}", draw(NAMES), (("Arg1", pair[0]), ("Arg2", pair[1]))))
        every_id = annotated + [a.id for a in attributes] + [r.id for r in relations]
        for number in range(1, draw(st.integers(0, 2)) + 1):
            notes.append(
                Note(f"#{number}", "AnnotatorNotes", draw(st.sampled_from(every_id)),
                     draw(FREE_TEXT))
            )  # fmt: skip
        for _ in range(draw(st.integers(0, 2))):
            members = draw(st.lists(st.sampled_from(annotated), min_size=2, max_size=4))
            equivalences.append(Equivalence(draw(NAMES), tuple(members)))
        for number in range(1, draw(st.integers(0, 2)) + 1):
            normalizations.append(
                Normalization(f"N{number}", draw(NAMES), draw(st.sampled_from(annotated)), draw(NAMES),
                              draw(st.from_regex(r"[A-Za-z0-9_.:-]{1,8}", fullmatch=True)), draw(FREE_TEXT))
            )  # fmt: skip
    doc = BratDocument(
        tuple(textbounds), tuple(events), tuple(attributes), tuple(relations), tuple(notes),
        tuple(equivalences), tuple(normalizations),
    )  # fmt: skip
    return text, doc


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_write_then_read_gives_the_same_annotations(case: tuple[str, BratDocument]) -> None:
    text, doc = case
    written = write_brat(doc)
    assert parse_brat(written, text) == doc
    assert write_brat(parse_brat(written, text)) == written


# --- errors name file:line --------------------------------------------------------------

BAD_INPUTS = {
    "malformed id": ("T1 Tobacco 3 9 smokes\n", 1, "followed by a tab"),
    "unknown kind": ("T1\tTobacco 3 9\tsmokes\nX1\tReference T1 Wiki:1\tx\n", 2, "T, E, A, M, N, R"),
    "missing offsets": ("T1\tTobacco\tsmokes\n", 1, "malformed text-bound"),
    "missing text field": ("T1\tTobacco 3 9\n", 1, "malformed text-bound"),
    "bad offset": ("T1\tTobacco 3 x9\tsmokes\n", 1, "malformed text-bound"),
    "past the end": ("T1\tAmount 10 15\t1 ppd\nT2\tType 50 60\tx\n", 2, "past the end"),
    "reversed fragment": ("T1\tTobacco 9 3\tsmokes\n", 1, "expected start <= end"),
    "text differs": ("T1\tTobacco 3 9\tsmoke\n", 1, "differs from the .txt"),
    "discontinuous text": ("T1\tDrug 30 34;47 50\tdrug  use\n", 1, "differs from the .txt"),
    "E names missing T": ("T1\tTobacco 3 9\tsmokes\nE1\tTobacco:T1 Status:T7\n", 2, "T7"),
    "E trigger missing": ("E1\tTobacco:T1\n", 1, "not a text-bound"),
    "E type mismatch": ("T1\tTobacco 3 9\tsmokes\nE1\tAlcohol:T1\n", 2, "same type"),
    "malformed E": ("T1\tTobacco 3 9\tsmokes\nE1\tTobacco:T1 Status\n", 2, "malformed event"),
    "A on missing id": ("T1\tTobacco 3 9\tsmokes\nA1\tStatusTimeVal T2 current\n", 2, "T2"),
    "malformed A": ("T1\tTobacco 3 9\tsmokes\nA1\tStatusTimeVal\n", 2, "malformed attribute"),
    "R on missing id": ("T1\tTobacco 3 9\tsmokes\nR1\tOverlap Arg1:T1 Arg2:T9\n", 2, "T9"),
    "malformed R": ("R1\tOverlap Arg1:T1\n", 1, "malformed relation"),
    "note on missing id": ("#1\tAnnotatorNotes T3\tchain=E12\n", 1, "T3"),
    "malformed note": ("#1\tAnnotatorNotes\tx\n", 1, "malformed note"),
    "equivalence on missing id": ("T1\tTobacco 3 9\tsmokes\n*\tEquiv T1 T4\n", 2, "T4"),
    "malformed equivalence": ("T1\tTobacco 3 9\tsmokes\n*\tEquiv T1\n", 2, "malformed equiv"),
    "N on missing id": ("N1\tReference T3 Wikipedia:534366\tBarack Obama\n", 1, "T3"),
    "malformed N": ("T1\tTobacco 3 9\tsmokes\nN1\tReference T1 Wikipedia\tx\n", 2, "malformed normalisation"),
    "duplicate id": (
        "T1\tTobacco 3 9\tsmokes\n\nT1\tAmount 10 15\t1 ppd\n",
        3,
        "duplicate id T1 (first defined on line 1)",
    ),
}


@pytest.mark.parametrize("ann, line, expected", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_names_file_and_line(tmp_path: Path, ann: str, line: int, expected: str) -> None:
    path = tmp_path / "0001.ann"
    path.write_text(ann, encoding="utf-8")
    with pytest.raises(SourceError) as raised:
        read_brat(path, TEXT)
    assert raised.value.path == str(path)
    assert raised.value.line == line
    assert str(raised.value).startswith(f"{path}:{line}: ")
    assert expected in raised.value.message


def test_folder_lists_unpaired_files(tmp_path: Path) -> None:
    (tmp_path / "train" / "uw").mkdir(parents=True)
    (tmp_path / "train" / "uw" / "0001.txt").write_text("x\n")
    (tmp_path / "train" / "uw" / "0002.ann").write_text("")
    (tmp_path / "train" / "uw" / "0003.txt").write_text("y\n")
    (tmp_path / "train" / "uw" / "0003.ann").write_text("")
    with pytest.raises(SourceError, match=r"unpaired: train/uw/0001\.txt, train/uw/0002\.ann"):
        brat_document_ids(tmp_path)


def test_non_utf8_file_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "0001.txt").write_bytes(b"caf\xe9\n")
    (tmp_path / "0001.ann").write_text("")
    with pytest.raises(SourceError, match="expected UTF-8") as raised:
        list(iter_brat_folder(tmp_path))
    assert raised.value.path == str(tmp_path / "0001.txt")


def test_writer_refuses_line_breaks() -> None:
    doc = BratDocument(notes=(Note("#1", "AnnotatorNotes", "T1", "two\nlines"),))
    with pytest.raises(ValueError, match="line break"):
        write_brat(doc)


# --- the embedded SDOH sample ------------------------------------------------------------


def _sample_documents() -> list[tuple[str, str, BratDocument]]:
    return [
        *iter_brat_folder(SAMPLE / "shac"),
        *((f"double/{doc_id}", text, doc) for doc_id, text, doc in iter_brat_folder(SAMPLE / "shac_double")),
    ]


def test_sample_reads_in_sorted_order_with_shac_layout() -> None:
    main = [doc_id for doc_id, _, _ in iter_brat_folder(SAMPLE / "shac")]
    assert main == sorted(main)
    assert {tuple(doc_id.split("/")[:2]) for doc_id in main} == {
        (split, source) for split in ("train", "dev", "test") for source in ("mimic", "uw")
    }
    assert len(main) == 12
    double = [doc_id for doc_id, _, _ in iter_brat_folder(SAMPLE / "shac_double")]
    assert sorted(d.replace("annotator_a", "X") for d in double if "annotator_a" in d) == sorted(
        d.replace("annotator_b", "X") for d in double if "annotator_b" in d
    )
    assert len(double) == 6


def test_sample_covers_every_event_argument_and_subtype() -> None:
    event_types, argument_types, values, roles = set(), set(), set(), set()
    kinds = {"discontinuous": 0, "unused": 0, "relations": 0, "notes": 0, "mimic brackets": 0}
    for doc_id, text, doc in _sample_documents():
        types = {t.id: t.type for t in doc.textbounds}
        used = {e.trigger for e in doc.events} | {t for e in doc.events for _, t in e.arguments}
        event_types |= {e.type for e in doc.events}
        argument_types |= {types[t] for e in doc.events for _, t in e.arguments}
        roles |= {role for e in doc.events for role, _ in e.arguments}
        values |= {(a.name, a.value) for a in doc.attributes}
        kinds["discontinuous"] += sum(len(t.fragments) > 1 for t in doc.textbounds)
        kinds["unused"] += len(types.keys() - used)
        kinds["relations"] += len(doc.relations)
        kinds["notes"] += len(doc.notes)
        kinds["mimic brackets"] += "/mimic/" in f"/{doc_id}" and "[**" in text
    assert {"Alcohol", "Drug", "Tobacco", "Employment", "LivingStatus"} <= event_types
    assert event_types - {"Alcohol", "Drug", "Tobacco", "Employment", "LivingStatus"}
    assert {"StatusTime", "StatusEmploy", "TypeLiving", "Amount", "Duration", "Frequency",
            "History", "Type", "Method"} <= argument_types  # fmt: skip
    assert {"Type2"} <= roles
    expected_values = (
        [("StatusTimeVal", v) for v in ("none", "current", "past", "future")]
        + [("StatusEmployVal", v) for v in
           ("employed", "unemployed", "retired", "on_disability", "student", "homemaker")]
        + [("TypeLivingVal", v) for v in ("alone", "with_family", "with_others", "homeless")]
    )  # fmt: skip
    assert set(expected_values) <= values
    assert all(count > 0 for count in kinds.values()), kinds


# --- real-input variants (issue 11): read as brat reads them --------------------------------

SHAC_LIKE_TEXT = "Social History: Drinks wine at dinner, quit [** 2 **] years ago.\n"
#                 0         1         2         3         4         5         6
#                 01234567890123456789012345678901234567890123456789012345678901234


def test_zero_length_fragments_are_read_and_written_back() -> None:
    # The SHAC pattern "StatusTime 228 231;232 232;233 242": an empty middle fragment. brat joins
    # fragment texts with one space each, so the text has two spaces where the empty one sits.
    ann = "T1\tAlcohol 16 22\tDrinks\nT2\tStatusTime 39 43;43 43;44 47\tquit  [**\nT3\tAmount 22 22\t\n"
    doc = parse_brat(ann, SHAC_LIKE_TEXT)
    assert doc.textbounds[1].fragments == ((39, 43), (43, 43), (44, 47))
    assert doc.textbounds[1].text == "quit  [**"
    assert (doc.textbounds[2].start, doc.textbounds[2].end, doc.textbounds[2].text) == (22, 22, "")
    assert write_brat(doc) == ann


def test_normalisation_lines_are_read_and_written_back() -> None:
    text = "Barack Obama visited.\n"
    ann = (
        "T1\tPerson 0 12\tBarack Obama\n"
        "N1\tReference T1 Wikipedia:534366\tBarack Obama\n"
        "N2\tReference T1 GO:GO:0005634\n"  # no text; the entry keeps every colon after the first
    )
    doc = parse_brat(ann, text)
    assert doc.normalizations == (
        Normalization("N1", "Reference", "T1", "Wikipedia", "534366", "Barack Obama"),
        Normalization("N2", "Reference", "T1", "GO", "GO:0005634", ""),
    )
    assert write_brat(doc) == ann.replace("GO:0005634\n", "GO:0005634\t\n")
    assert parse_brat(write_brat(doc), text) == doc


def test_bionlp_st_2013_normalisation_form_is_read_as_brat_reads_it() -> None:
    text = "Barack Obama visited.\n"
    ann = "T1\tPerson 0 12\tBarack Obama\nN1\tReference Referent:Wikipedia:534366 Annotation:T1\n"
    [normalization] = parse_brat(ann, text).normalizations
    assert (normalization.target, normalization.resource, normalization.entry) == ("T1", "Wikipedia", "534366")


def test_text_without_ann_is_a_document_without_annotations_when_asked(tmp_path: Path) -> None:
    (tmp_path / "0001.txt").write_text("Lives alone.\n", encoding="utf-8")
    (tmp_path / "0002.txt").write_text("Smokes.\n", encoding="utf-8")
    (tmp_path / "0002.ann").write_text("T1\tTobacco 0 6\tSmokes\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"unpaired: 0001\.txt"):
        brat_document_ids(tmp_path)
    assert brat_document_ids(tmp_path, text_without_ann=True) == ["0001", "0002"]
    from clinical_corpora.builders.sources.brat.folder import brat_documents
    from clinical_corpora.builders.sources.brat.standoff import read_brat_document

    alone = brat_documents(tmp_path)[0]
    assert read_brat_document(alone, text_without_ann=True) == ("Lives alone.\n", BratDocument())
    with pytest.raises(SourceError, match=r"0001\.txt has no companion 0001\.ann"):
        read_brat_document(alone)
    (tmp_path / "0003.ann").write_text("", encoding="utf-8")
    with pytest.raises(SourceError, match=r"unpaired: 0003\.ann"):
        brat_document_ids(tmp_path, text_without_ann=True)


# --- broken annotations: left out with what depends on them, each reported once -------------

BROKEN = (
    "T1\tAlcohol 16 22\tDrinks\n"  # 1
    "T2\tStatusTime 39 99\tquit\n"  # 2 past the end of the text
    "T3\tType 23 27\twine\n"  # 3
    "E1\tAlcohol:T1 Status:T2 Type:T3\n"  # 4 keeps T3, loses the argument on T2
    "A1\tStatusTimeVal T2 past\n"  # 5 on T2: goes with it
    "T4\tDrug 9 3\tx\n"  # 6 reversed fragment
    "E2\tDrug:T4\n"  # 7 triggered by T4: goes with it
    "#1\tAnnotatorNotes E2\tcheck\n"  # 8 note on E2: goes with it
    "E3\tAlcohol:T1 Type:T9\n"  # 9 T9 is defined nowhere: the argument goes, E3 stays
    "R1\tOverlap Arg1:T3 Arg2:E2\n"  # 10 on E2: goes with it
    "*\tEquiv T1 T3 T4\n"  # 11 loses T4, keeps two members
    "N1\tReference T3 Wikipedia:1\twine\n"  # 12 kept
    "A2\tNegated E1\n"  # 13 kept
)


def test_broken_annotations_are_left_out_with_their_dependents() -> None:
    errors: list[SourceError] = []
    doc = parse_brat(BROKEN, SHAC_LIKE_TEXT, "n.ann", on_broken=errors.append)
    assert [(error.line, error.message) for error in errors] == [
        (2, "T2 offsets 39-99 run past the end of the text (length 65); "
            "depending on it: E1 argument Status:T2 (line 4), A1 (line 5)"),
        (6, "T4 has fragment 9-3: expected start <= end; depending on it: E2 (line 7), "
            "R1 (line 10), Equiv equivalence (line 11), #1 (line 8)"),
        (9, "E3 argument Type:T9 refers to T9, which is not a text-bound or event in this file"),
    ]  # fmt: skip
    assert [t.id for t in doc.textbounds] == ["T1", "T3"]
    assert doc.events == (
        Event("E1", "Alcohol", "T1", (("Type", "T3"),)),
        Event("E3", "Alcohol", "T1", ()),
    )
    assert doc.attributes == (Attribute("A2", "Negated", "E1", None),)
    assert (doc.relations, doc.notes) == ((), ())
    assert doc.equivalences == (Equivalence("Equiv", ("T1", "T3")),)
    assert [n.id for n in doc.normalizations] == ["N1"]
    assert doc.lines["N1"] == 12 and "T2" not in doc.lines


def test_without_on_broken_the_first_broken_line_fails_the_read(tmp_path: Path) -> None:
    path = tmp_path / "n.ann"
    path.write_text(BROKEN, encoding="utf-8")
    with pytest.raises(SourceError) as raised:
        read_brat(path, SHAC_LIKE_TEXT)
    assert raised.value.location == f"{path}:2"
    assert raised.value.message.startswith("T2 offsets 39-99 run past the end of the text (length 65)")
