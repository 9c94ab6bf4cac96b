"""Dictionary recogniser over the sample UMLS: filtering, longest match, refinements, cache, gold."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from clinical_corpora.builders.contract.text_units import split_sentences
from clinical_corpora.builders.sources.bmj_html import read_case_report
from clinical_corpora.builders.sources.brat.standoff import iter_brat_folder
from clinical_corpora.core.errors import SourceError
from clinical_corpora.corpora.clicr import index_cache
from clinical_corpora.corpora.clicr.entity_matcher import EntityMatcher, refine_span
from clinical_corpora.corpora.clicr.index_cache import load_or_build_index
from clinical_corpora.corpora.clicr.umls_index import FUNCTION_WORDS, UmlsIndex, build_index

SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "clicr" / "sample"
MRCONSO, MRSTY = SAMPLE / "umls" / "META" / "MRCONSO.RRF", SAMPLE / "umls" / "META" / "MRSTY.RRF"


@pytest.fixture(scope="module")
def index() -> UmlsIndex:
    return build_index(MRCONSO, MRSTY)


@pytest.fixture(scope="module")
def matcher(index: UmlsIndex) -> EntityMatcher:
    return EntityMatcher(index)


def _found(matcher: EntityMatcher, text: str) -> list[tuple[str, str, str]]:
    return [(entity.text, entity.cui, entity.category) for entity in matcher.find(text)]


def test_longest_match_on_token_boundaries_case_insensitive(matcher: EntityMatcher) -> None:
    text = "RIF pain settled on RIFAMPICIN; a CT of chest and a CT were done for FEVERISH ACUTE KIDNEY INJURY."
    assert _found(matcher, text) == [
        ("RIF pain", "C9000048", "problem"),  # longer than the rifampicin synonym "RIF"
        ("RIFAMPICIN", "C9000088", "treatment"),
        ("CT of chest", "C9000133", "test"),
        ("CT", "C9000134", "test"),
        ("ACUTE KIDNEY INJURY", "C9000028", "problem"),  # "FEVERISH" is not "fever"
    ]


def test_entities_carry_the_first_mapped_semantic_type(matcher: EntityMatcher) -> None:
    entities = {entity.text: entity for entity in matcher.find("Enuresis, insulin and contrast media.")}
    assert (entities["Enuresis"].sem_type, entities["Enuresis"].category) == (
        "Mental or Behavioral Dysfunction",
        "problem",
    )
    assert (entities["insulin"].sem_type, entities["insulin"].category) == ("Pharmacologic Substance", "treatment")
    assert entities["contrast media"].category == "treatment"  # T121 before T130 (test)


def test_only_english_unsuppressed_strings_of_mapped_concepts(matcher: EntityMatcher) -> None:
    assert _found(matcher, "Tuberkulose. Alcohol consumption. Both lungs. Fever NOS.") == [
        ("Fever", "C9000004", "problem")  # "Fever NOS" is suppressed, "Fever" alone is not
    ]


def test_frequent_words_and_determiner_keys_are_not_entities(matcher: EntityMatcher, index: UmlsIndex) -> None:
    assert _found(matcher, "All of them took the pill.") == []
    assert index.concept("all") is None and index.concept("the pill") is None
    assert index.concept("acute lymphoblastic leukaemia") == 9000062
    assert index.concept("acute lymphoblastic") is None  # a prefix of a key, not a key


def test_ambiguous_string_goes_to_lowest_cui_unless_preferred(matcher: EntityMatcher, tmp_path: Path) -> None:
    assert _found(matcher, "MS was diagnosed.") == [("MS", "C9000063", "problem")]
    conso, sty = tmp_path / "MRCONSO.RRF", tmp_path / "MRSTY.RRF"
    conso.write_text(
        "C0000100|ENG|S|L1|PF|S1|N|A1||||CHV|SY|1|Cold|0|N||\n"
        "C0000200|ENG|P|L1|PF|S1|Y|A2||||MTH|PN|2|Cold|0|N||\n"
        "C0000300|ENG|P|L2|PF|S2|Y|A3||||MTH|PN|3|Chill|0|N||\n",
        encoding="utf-8",
    )
    sty.write_text(
        "C0000100|T047|B|Disease or Syndrome|AT1||\nC0000200|T184|A|Sign or Symptom|AT2||\n"
        "C0000300|T023|A|Body Part, Organ, or Organ Component|AT3||\n",
        encoding="utf-8",
    )
    assert _found(EntityMatcher(build_index(conso, sty)), "Cold and chill.") == [("Cold", "C0000200", "problem")]


def test_refinements_on_dictionary_matches(matcher: EntityMatcher) -> None:
    text = "No recurrence of his deep vein thrombosis (DVT) was seen."
    assert _found(matcher, text) == [
        ("recurrence", "C9000009", "problem"),
        ("deep vein thrombosis", "C9000033", "problem"),  # matched as "deep vein thrombosis (dvt)"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the chronic cough", "chronic cough"),
        ("His severe headache", "severe headache"),
        ("heart failure (HF)", "heart failure"),
        ("this heart failure (HF) ", "heart failure"),
        ("renal failure (acute (AKI))", "renal failure"),
        ("(HF)", "(HF)"),
        ("fever (38.5)", "fever"),
        ("type 2 diabetes", "type 2 diabetes"),
    ],
)
def test_refine_span(text: str, expected: str) -> None:
    refined = refine_span(text, 0, len(text))
    assert refined is not None and text[refined[0] : refined[1]] == expected


def test_refine_span_of_only_function_words() -> None:
    assert refine_span("all of this", 7, 11) is None


def test_matches_stay_inside_sentences(matcher: EntityMatcher) -> None:
    assert _found(matcher, "Chest pain") == [("Chest pain", "C9000035", "problem")]
    assert _found(matcher, "Chest\n\npain was mild") == []


def test_synonyms_for_answer_expansion(index: UmlsIndex) -> None:
    assert index.synonyms("C9000001", "tuberculosis") == ["TB", "Tuberculosis infection", "Tuberculosis (disorder)"]
    assert index.synonyms("C9000001", "TB") == ["Tuberculosis", "Tuberculosis infection", "Tuberculosis (disorder)"]
    assert index.synonyms("C9000011", "enuresis") == ["Bedwetting", "Bed wetting"]  # no "Bed wetting NOS", no Dutch
    assert index.synonyms("C9000170") == []  # Mycobacterium tuberculosis: an organism, not indexed


def test_index_is_cached_by_file_hashes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = load_or_build_index(MRCONSO, MRSTY, tmp_path / "cache")
    assert len(list((tmp_path / "cache").glob("umls-index-*"))) == 1

    def must_not_build(*_: object) -> UmlsIndex:
        raise AssertionError("the cached index should have been loaded")

    monkeypatch.setattr(index_cache, "build_index", must_not_build)
    again = load_or_build_index(MRCONSO, MRSTY, tmp_path / "cache")
    assert again.entries == first.entries and again.concepts.names == first.concepts.names
    assert again.source_sha256["MRCONSO.RRF"] == first.source_sha256["MRCONSO.RRF"]

    changed = tmp_path / "MRCONSO.RRF"
    changed.write_text(MRCONSO.read_text(encoding="utf-8") + "C9999999|ENG|P|L1|PF|S1|Y|A1||||MTH|PN|1|Quinsy|0|N||\n")
    monkeypatch.undo()
    rebuilt = load_or_build_index(changed, MRSTY, tmp_path / "cache")
    assert len(list((tmp_path / "cache").glob("umls-index-*"))) == 2
    assert rebuilt.entries == first.entries  # the new concept has no semantic type, so nothing new is indexed


def test_damaged_or_truncated_cache_is_said_and_rebuilt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = load_or_build_index(MRCONSO, MRSTY, tmp_path)
    (cached,) = tmp_path.glob("umls-index-*")
    data = cached.read_bytes()
    for damaged in (data[: len(data) // 2], data[:-40] + bytes([data[-40] ^ 1]) + data[-39:]):
        cached.write_bytes(damaged)
        again = load_or_build_index(MRCONSO, MRSTY, tmp_path)
        assert "truncated or damaged" in capsys.readouterr().err
        assert again.entries == first.entries and again.untyped == first.untyped
        assert cached.read_bytes() == data  # written again, whole


def test_rrf_the_columnar_reader_cannot_vouch_for_gives_the_same_index(tmp_path: Path, index: UmlsIndex) -> None:
    crlf = tmp_path / "MRCONSO.RRF"  # carriage returns: read row by row
    crlf.write_bytes(MRCONSO.read_bytes().replace(b"\n", b"\r\n"))
    by_row = build_index(crlf, MRSTY)
    assert by_row.entries == index.entries and by_row.untyped == index.untyped
    assert by_row.concepts.names == index.concepts.names


def test_malformed_mrconso_line_is_named_by_the_index_build(tmp_path: Path) -> None:
    lines = MRCONSO.read_text(encoding="utf-8").splitlines(keepends=True)
    broken = tmp_path / "MRCONSO.RRF"
    broken.write_text("".join(lines[:4]) + lines[4].replace("|", "", 1) + "".join(lines[5:]), encoding="utf-8")
    with pytest.raises(SourceError, match="expected 18 fields") as caught:
        build_index(broken, MRSTY)
    assert caught.value.line == 5


def test_recogniser_against_hand_marked_gold(matcher: EntityMatcher) -> None:
    gold, found = set(), set()
    for case_id, text, document in iter_brat_folder(SAMPLE / "entity_gold"):
        assert text == read_case_report(SAMPLE / "bmj_html" / f"{case_id}.html").passage
        gold |= {(case_id, t.start, t.end, t.type) for t in document.textbounds}
        found |= {(case_id, e.start, e.end, e.category) for e in matcher.find(text)}
    precision, recall = len(gold & found) / len(found), len(gold & found) / len(gold)
    assert precision >= 0.85 and recall >= 0.7, (precision, recall)
    assert found - gold  # the gold is not the recogniser's own output


WORDS = ["fever", "chest", "pain", "the", "his", "acute", "kidney", "injury", "(", ")", "DVT", ".", "CT", "of", "no"]


@settings(max_examples=200)
@given(st.lists(st.sampled_from(WORDS), max_size=30), st.sampled_from([" ", "  ", "\n"]))
def test_entities_are_ordered_disjoint_spans_of_the_text(matcher: EntityMatcher, words: list[str], gap: str) -> None:
    text = gap.join(words)
    entities = matcher.find(text)
    previous_end = 0
    for entity in entities:
        assert previous_end <= entity.start < entity.end <= len(text)
        assert text[entity.start : entity.end] == entity.text
        assert entity.text.split()[0].lower() not in FUNCTION_WORDS
        assert not entity.text.endswith(")")
        previous_end = entity.end


CROSSING_NAMES = [
    "Crohn's disease",
    "pain. Fever",
    "Dr. Smith",
    "fever (high",
    "pain",
    "fever",
    "high fever",
    "pain' Fever",
]
"""Names whose keys span what can end a sentence, so that longest matches cross sentence boundaries."""


@pytest.fixture(scope="module")
def crossing_matcher(tmp_path_factory: pytest.TempPathFactory) -> EntityMatcher:
    meta = tmp_path_factory.mktemp("META")
    rows = [
        f"C{number:07d}|ENG|P|L{number}|PF|S{number}|Y|A{number}||||MTH|PN|{number}|{name}|0|N||\n"
        for number, name in enumerate(CROSSING_NAMES, 1)
    ]
    (meta / "MRCONSO.RRF").write_text("".join(rows), encoding="utf-8")
    types = [f"C{number:07d}|T047|B|Disease or Syndrome|AT{number}||\n" for number in range(1, len(CROSSING_NAMES) + 1)]
    (meta / "MRSTY.RRF").write_text("".join(types), encoding="utf-8")
    return EntityMatcher(build_index(meta / "MRCONSO.RRF", meta / "MRSTY.RRF"))


@settings(max_examples=300)
@given(
    st.lists(
        st.sampled_from(
            [
                " pain.",
                " pain'",
                " Fever",
                " fever",
                "Crohn's",
                " disease",
                " Dr.",
                " Smith",
                " (",
                " high",
                ")",
                ".",
                "'",
                " ",
                "\n\n",
                "\u2019",
                "\u200b",
                "-",
                "!",
                " The",
            ]
        ),  # fmt: skip
        max_size=30,
    ).map("".join)
)
@example(" pain. Fever")  # syntok splits it: "pain", "Fever"
@example("pain.\u200b Fever")
def test_matches_without_sentences_given_are_those_of_split_sentences(
    crossing_matcher: EntityMatcher, text: str
) -> None:
    assert crossing_matcher.find(text) == crossing_matcher.find(text, split_sentences(text))
