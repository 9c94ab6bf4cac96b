"""i2b2/VA 2011 coreference reader and writer: the sample, round trips and bad input."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clinical_corpora.builders.sources.i2b2.coref import (
    Chain,
    Concept,
    CorefPair,
    I2b2CorefDocument,
    from_knowtator,
    i2b2_files,
    iter_i2b2_documents,
    read_i2b2_document,
    read_i2b2_files,
    write_i2b2_document,
)
from clinical_corpora.builders.sources.knowtator.xml import iter_knowtator_dir, read_knowtator_file
from clinical_corpora.core.errors import SourceError

SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "odie_anaphora" / "sample"
I2B2 = SAMPLE / "i2b2"


def test_line_token_positions_become_character_offsets() -> None:
    document = read_i2b2_document(I2B2, "mayo_p_01")
    first = document.concepts[0]
    # c="colon , sigmoid" 1:2 1:4 -- "SPECIMEN : Colon , sigmoid , resection ."
    assert (first.start, first.end) == (len("SPECIMEN : "), len("SPECIMEN : Colon , sigmoid"))
    assert first.text == "Colon , sigmoid"
    assert first.type == "anatomical site"
    for concept in document.concepts:
        assert document.text[concept.start : concept.end] == concept.text


def test_chains_and_pairs_of_the_sample() -> None:
    document = read_i2b2_document(I2B2, "upmc_er_01")
    patient = next(c for c in document.chains if c.concepts[0].text == "The patient")
    assert patient.type == "people"
    assert [c.text for c in patient.concepts] == [
        "The patient",
        "a 54 year old man",
        "He",
        "his",
        "He",
        "his",
        "he",
        "Mr. Smith",
    ]
    assert ("The patient", "a 54 year old man") in [(p.antecedent.text, p.anaphor.text) for p in document.pairs]
    # set/subset pairs (Lead III of the inferior leads) have no place in the i2b2/VA files.
    assert all(c.text != "Lead III" for chain in document.chains for c in chain.concepts)
    assert any(c.text == "Lead III" for c in document.concepts)


def test_sample_i2b2_copy_equals_the_knowtator_gold() -> None:
    gold = {d.doc_id: from_knowtator(d) for d in iter_knowtator_dir(SAMPLE / "gold", SAMPLE / "text")}
    assert {d.doc_id: d for d in iter_i2b2_documents(I2B2)} == gold


def test_write_then_read_round_trips(tmp_path: Path) -> None:
    for document in iter_i2b2_documents(I2B2):
        write_i2b2_document(tmp_path, document)
        assert read_i2b2_document(tmp_path, document.doc_id) == document
        for folder, suffix in (
            ("concepts", ".txt.con"),
            ("chains", ".txt.chains"),
            ("pairs", ".txt.pairs"),
        ):
            written = (tmp_path / folder / f"{document.doc_id}{suffix}").read_bytes()
            assert written == (I2B2 / folder / f"{document.doc_id}{suffix}").read_bytes()


def test_discontinuous_markables_cannot_be_converted() -> None:
    annotator_b = read_knowtator_file(SAMPLE / "annotator_b" / "upmc_rad_01.txt.knowtator.xml", SAMPLE / "text")
    with pytest.raises(ValueError, match="discontinuous"):
        from_knowtator(annotator_b)


def small_document(root: Path, text: str, concepts: str, chains: str, pairs: str | None = None) -> None:
    for folder, name, content in (
        ("docs", "note.txt", text),
        ("concepts", "note.txt.con", concepts),
        ("chains", "note.txt.chains", chains),
        ("pairs", "note.txt.pairs", pairs),
    ):
        if content is not None:
            (root / folder).mkdir(parents=True, exist_ok=True)
            (root / folder / name).write_text(content, encoding="utf-8")


TEXT = "Patient has chest\npain  today .\nThe pain is better .\n"
CONCEPTS = 'c="chest pain" 1:2 2:0||t="sign or symptom"\nc="the pain" 3:0 3:1||t="sign or symptom"\n'
CHAINS = 'c="chest pain" 1:2 2:0||c="the pain" 3:0 3:1||t="coref sign or symptom"\n'


def test_concept_across_lines_and_case_insensitive_text(tmp_path: Path) -> None:
    small_document(tmp_path, TEXT.replace("chest", "CHEST"), CONCEPTS, CHAINS)
    document = read_i2b2_document(tmp_path, "note")
    assert [c.text for c in document.concepts] == ["CHEST\npain", "The pain"]
    assert (document.concepts[0].start, document.concepts[1].start) == (12, 32)
    assert document.chains == (Chain("sign or symptom", document.concepts),)
    assert document.pairs == ()


@pytest.mark.parametrize(
    ("folder", "name", "content", "line", "phrase"),
    [
        (
            "concepts",
            "note.txt.con",
            CONCEPTS + 'c="the pain" 3:x 3:1||t="sign or symptom"\n',
            3,
            "cannot parse",
        ),
        (
            "concepts",
            "note.txt.con",
            'c="today ." 2:1 2:3||t="other"\n' + CONCEPTS,
            1,
            "does not exist",
        ),
        ("concepts", "note.txt.con", 'c="pain" 9:0 9:0||t="other"\n', 1, "line 9 does not exist"),
        (
            "concepts",
            "note.txt.con",
            CONCEPTS + 'c="the ache" 3:0 3:1||t="other"\n',
            3,
            "'The pain'",
        ),
        (
            "concepts",
            "note.txt.con",
            CONCEPTS + 'c="pain is" 3:2 3:1||t="other"\n',
            3,
            "lies after",
        ),
        (
            "concepts",
            "note.txt.con",
            CONCEPTS + CONCEPTS.splitlines()[1].replace("sign or symptom", "other") + "\n",
            3,
            "listed twice, as 'sign or symptom' and as 'other'",
        ),
        (
            "chains",
            "note.txt.chains",
            "\n" + CHAINS.replace("3:0 3:1", "3:0 3:2").replace("the pain", "the pain is"),
            2,
            "not listed",
        ),
        (
            "chains",
            "note.txt.chains",
            CHAINS.replace('||t="coref sign or symptom"', ""),
            1,
            "coref type",
        ),
        (
            "chains",
            "note.txt.chains",
            'c="the pain" 3:0 3:1||t="coref sign or symptom"\n',
            1,
            "two or more",
        ),
        (
            "pairs",
            "note.txt.pairs",
            'c="chest pain" 1:2 2:0||c="the pain" 3:0 3:1\n',
            1,
            "cannot parse",
        ),
    ],
)
def test_bad_lines_name_file_and_line(
    tmp_path: Path, folder: str, name: str, content: str, line: int, phrase: str
) -> None:
    small_document(tmp_path, TEXT, CONCEPTS, CHAINS)
    (tmp_path / folder).mkdir(exist_ok=True)
    (tmp_path / folder / name).write_text(content, encoding="utf-8")
    document = read_i2b2_document(tmp_path, "note")  # the line is left out, not the document
    problem = document.problems[0]
    assert problem.path == str(tmp_path / folder / name)
    assert problem.line == line
    assert phrase in problem.message


def test_concept_listed_twice_with_the_same_type_is_read_once(tmp_path: Path) -> None:
    small_document(tmp_path, TEXT, CONCEPTS + CONCEPTS.splitlines()[1] + "\n", CHAINS)
    document = read_i2b2_document(tmp_path, "note")
    assert document.problems == ()
    assert [c.text for c in document.concepts] == ["chest\npain", "The pain"]


def test_quarantined_concept_leaves_its_chain_whole_minus_that_member(tmp_path: Path) -> None:
    """A concept whose position does not exist is a problem with file and line, and so are its chain membership
    and its pairs; its chain keeps the other members, joined across the gap (as Uzuner et al. 2012's patient
    chains of 42, 59 and 79 members must stay one entity each for MUC and B³)."""
    text = TEXT + "It is mild .\n"
    concepts = CONCEPTS + 'c="it" 4:0 4:0||t="sign or symptom"\n'
    chain = 'c="chest pain" 1:2 2:0||c="the pain" 3:0 3:1||c="it" 4:0 4:0||t="coref sign or symptom"\n'
    pairs = (
        'c="chest pain" 1:2 2:0||t="coref sign or symptom"||c="the pain" 3:0 3:1\n'
        'c="the pain" 3:0 3:1||t="coref sign or symptom"||c="it" 4:0 4:0\n'
    )
    small_document(tmp_path, text, concepts.replace('c="the pain" 3:0 3:1', 'c="the pain" 3:0 3:7'), chain, pairs)
    document = read_i2b2_document(tmp_path, "note")
    assert [(Path(p.path).parent.name, p.line) for p in document.problems] == [
        ("concepts", 2),
        ("chains", 1),
        ("pairs", 1),
        ("pairs", 2),
    ]
    assert "token 7 does not exist on line 3" in document.problems[0].message
    assert [c.text for c in document.concepts] == ["chest\npain", "It"]
    assert [[c.text for c in chain.concepts] for chain in document.chains] == [["chest\npain", "It"]]
    assert [(p.antecedent.text, p.anaphor.text) for p in document.pairs] == [("chest\npain", "It")]
    (kept,) = document.changes
    assert (kept.kind, Path(kept.path).name, kept.line) == ("chain_kept_whole", "note.txt.chains", 1)
    assert "'It'" in kept.message and "'chest\\npain'" in kept.message
    (tmp_path / "pairs" / "note.txt.pairs").unlink()
    without_pairs = read_i2b2_document(tmp_path, "note")
    assert without_pairs.chains == document.chains and without_pairs.changes == ()


def test_a_long_chain_missing_a_middle_member_stays_one_chain(tmp_path: Path) -> None:
    """Forty mentions of the patient, the twentieth with a type outside the corpus's: one chain of 39."""
    lines = [f"Patient{n} was seen ." for n in range(40)]
    types = ["weather" if n == 19 else "people" for n in range(40)]
    concepts = "".join(f'c="patient{n}" {n + 1}:0 {n + 1}:0||t="{types[n]}"\n' for n in range(40))
    fields = [f'c="patient{n}" {n + 1}:0 {n + 1}:0' for n in range(40)]
    chains = "||".join(fields) + '||t="coref people"\n'
    pairs = "".join(f'{fields[n]}||t="coref people"||{fields[n + 1]}\n' for n in range(39))
    small_document(tmp_path, "\n".join(lines) + "\n", concepts, chains, pairs)
    document = read_i2b2_files(i2b2_files(tmp_path, "note"), {"people"})
    assert [(Path(p.path).suffix, p.line) for p in document.problems] == [(".con", 20), (".chains", 1)] + [
        (".pairs", 19),
        (".pairs", 20),
    ]
    assert len(document.chains) == 1
    assert [c.text for c in document.chains[0].concepts] == [f"Patient{n}" for n in range(40) if n != 19]


def test_missing_chains_file(tmp_path: Path) -> None:
    small_document(tmp_path, TEXT, CONCEPTS, CHAINS)
    (tmp_path / "chains" / "note.txt.chains").unlink()
    with pytest.raises(SourceError, match="file not found"):
        read_i2b2_document(tmp_path, "note")


def test_writer_refuses_spans_off_token_boundaries(tmp_path: Path) -> None:
    document = I2b2CorefDocument("note", TEXT, (Concept(13, 17, "other", "hest"),), ())
    with pytest.raises(ValueError, match="token boundaries"):
        write_i2b2_document(tmp_path, document)


words = st.text(alphabet="abcXYZ,.-'\"|", min_size=1, max_size=5)
lines = st.lists(st.lists(words, min_size=1, max_size=6), min_size=1, max_size=5)


@settings(max_examples=60)
@given(lines=lines, data=st.data())
def test_round_trip_of_random_token_aligned_concepts(tmp_path_factory, lines, data) -> None:
    text = "\n".join("  ".join(tokens) for tokens in lines) + "\n"
    edges = []  # (start, end) of every token, in text order
    offset = 0
    for tokens in lines:
        for token in tokens:
            offset = text.index(token, offset)
            edges.append((offset, offset + len(token)))
            offset += len(token)
    first = data.draw(st.integers(0, len(edges) - 1))
    last = data.draw(st.integers(first, len(edges) - 1))
    other = data.draw(st.integers(0, len(edges) - 1))
    spans = sorted({(edges[first][0], edges[last][1]), edges[other]})  # one or two concepts
    concepts = tuple(Concept(s, e, "people", text[s:e]) for s, e in spans)
    chains = (Chain("people", concepts),) if len(concepts) == 2 else ()
    pairs = (CorefPair(concepts[0], concepts[1], "people"),) if len(concepts) == 2 else ()
    document = I2b2CorefDocument("note", text, concepts, chains, pairs)
    root = tmp_path_factory.mktemp("round_trip")
    write_i2b2_document(root, document)
    assert read_i2b2_document(root, "note") == document


def test_copying_the_sample_keeps_it_readable(tmp_path: Path) -> None:
    shutil.copytree(I2B2, tmp_path / "i2b2")
    assert [d.doc_id for d in iter_i2b2_documents(tmp_path / "i2b2")] == sorted(
        p.stem for p in (SAMPLE / "text").glob("*.txt")
    )
