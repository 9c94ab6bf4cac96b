"""Reading and writing CoNLL-2012 coreference files (invented sample documents)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clinical_corpora.builders.sources.conll2012 import (
    ConllDocument,
    TokenSpan,
    conll_doc_id,
    iter_conll2012,
    read_conll2012_chains,
    write_conll2012,
)
from clinical_corpora.core.errors import SourceError
from clinical_corpora.validation.metrics.coref import score_documents_all

# Two sentences of an invented chest X-ray report, space- and tab-separated lines as found in
# real files, nested brackets with and without '|', a trailing space after the header.
REPORT = """\
#begin document (patient_17); part 000
patient_17 0 0 Right - (0
patient_17 0 1 IJ - -
patient_17 0 2 catheter - 0)
patient_17 0 3 tip - -
patient_17 0 4 in - -
patient_17 0 5 SVC - (1)
patient_17 0 6 . - -

patient_17\t0\t0\tThe\t-\t(0\t
patient_17\t0\t1\tline\t-\t0)|(2
patient_17\t0\t2\tand\t-\t-
patient_17\t0\t3\teffusion\t-\t2)|(3)
patient_17\t0\t4\tunchanged\t-\t-
#end document
#begin document (patient_18);\x20
patient_18 0 0 New - (5(6
patient_18 0 1 opacity - 6)5)
#end document
"""


def write(tmp_path: Path, text: str, name: str = "file.conll") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_reads_documents_tokens_and_chains(tmp_path: Path) -> None:
    first, second = iter_conll2012(write(tmp_path, REPORT))
    assert first.doc_id == "(patient_17); part 000"
    assert first.sentences == (
        ("Right", "IJ", "catheter", "tip", "in", "SVC", "."),
        ("The", "line", "and", "effusion", "unchanged"),
    )
    assert set(first.chains) == {
        frozenset({TokenSpan(0, 3), TokenSpan(7, 9)}),
        frozenset({TokenSpan(5, 6)}),
        frozenset({TokenSpan(8, 11)}),
        frozenset({TokenSpan(10, 11)}),
    }
    # The name is the header's exact text, trailing space included, as scorer.pl matches it;
    # normalised, a header without "part" is part 0. One span in two entities is kept in both.
    assert second.doc_id == "(patient_18); "
    assert second.normalised_id == conll_doc_id("patient_18") == "(patient_18); part 000"
    assert [d.doc_id for d in iter_conll2012(write(tmp_path, REPORT), normalise_names=True)] == [
        "(patient_17); part 000",
        "(patient_18); part 000",
    ]
    assert second.chains == (frozenset({TokenSpan(0, 2)}), frozenset({TokenSpan(0, 2)}))


def conll_lines(name: str, tokens: list[tuple[str, str]]) -> str:
    rows = "".join(f"{name} 0 {n} {word} - {column}\n" for n, (word, column) in enumerate(tokens))
    return f"#begin document ({name}); part 000\n{rows}#end document\n"


def test_chains_read_from_files_score_as_the_reference_test_case_a4(tmp_path: Path) -> None:
    # TC-A key {a} {bc} {def} and TC-A-4 response {a} {bcx} {dy} {z}, one token per mention.
    words = ["a", "b", "c", "x", "d", "e", "f", "y", "z"]
    key_columns = ["(0)", "(1)", "(1)", "-", "(2)", "(2)", "(2)", "-", "-"]
    response_columns = ["(7)", "(8)", "(8)", "(8)", "(9)", "-", "-", "(9)", "(4)"]
    key = read_conll2012_chains(write(tmp_path, conll_lines("tc", list(zip(words, key_columns, strict=True))), "key"))
    response = read_conll2012_chains(
        write(tmp_path, conll_lines("tc", list(zip(words, response_columns, strict=True))), "response")
    )
    assert key == {
        "(tc); part 000": [
            [TokenSpan(0, 1)],
            [TokenSpan(1, 2), TokenSpan(2, 3)],
            [TokenSpan(4, 5), TokenSpan(5, 6), TokenSpan(6, 7)],
        ]
    }
    scores = score_documents_all(key, response)
    assert scores["muc"] == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert scores["ceaf_e"] == pytest.approx((0.73333, 0.55, 0.62857), abs=1e-5)
    assert scores["blanc"] == pytest.approx((0.35227, 0.27206, 0.30357), abs=1e-5)


def test_writes_tab_separated_conll2012_lines() -> None:
    document = ConllDocument(
        name="patient_3",
        part=0,
        sentences=(("NG", "tube", "in", "stomach"), ("Tube", "removed")),
        chains=(frozenset({TokenSpan(0, 2), TokenSpan(4, 5)}), frozenset({TokenSpan(3, 4)})),
    )
    out = io.StringIO()
    write_conll2012([document], out)
    assert out.getvalue().splitlines() == [
        "#begin document (patient_3); part 000",
        "patient_3\t0\t0\tNG\t-\t-\t-\t-\t-\t-\t*\t(0",
        "patient_3\t0\t1\ttube\t-\t-\t-\t-\t-\t-\t*\t0)",
        "patient_3\t0\t2\tin\t-\t-\t-\t-\t-\t-\t*\t-",
        "patient_3\t0\t3\tstomach\t-\t-\t-\t-\t-\t-\t*\t(1)",
        "",
        "patient_3\t0\t0\tTube\t-\t-\t-\t-\t-\t-\t*\t(0)",
        "patient_3\t0\t1\tremoved\t-\t-\t-\t-\t-\t-\t*\t-",
        "",
        "#end document",
    ]


def test_read_write_read_round_trip(tmp_path: Path) -> None:
    documents = list(iter_conll2012(write(tmp_path, REPORT)))
    written = tmp_path / "written.conll"
    write_conll2012(documents, written)
    read_back = list(iter_conll2012(written))
    assert [(d.doc_id, d.sentences, set(d.chains)) for d in read_back] == [
        (d.doc_id, d.sentences, set(d.chains)) for d in documents
    ]


@st.composite
def documents(draw: st.DrawFn) -> ConllDocument:
    lengths = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4))
    tokens = sum(lengths)
    spans = st.tuples(st.integers(0, tokens - 1), st.integers(1, 3)).map(
        lambda s: TokenSpan(s[0], min(s[0] + s[1], tokens))
    )
    chains = draw(st.lists(st.frozensets(spans, min_size=1, max_size=3), max_size=4))
    sentences = tuple(tuple(f"w{n}" for n in range(length)) for length in lengths)
    return ConllDocument("doc", draw(st.integers(0, 3)), sentences, tuple(chains))


@given(document=documents())
def test_written_documents_read_back_identical_or_are_refused(
    tmp_path_factory: pytest.TempPathFactory, document: ConllDocument
) -> None:
    path = tmp_path_factory.mktemp("round_trip") / "doc.conll"
    try:
        write_conll2012([document], path)
    except ValueError as error:
        assert "cross" in str(error) or "cannot be written" in str(error)
        return
    (read_back,) = iter_conll2012(path)
    assert read_back.sentences == document.sentences
    assert set(read_back.chains) == set(document.chains)


@pytest.mark.parametrize(
    ("chains", "message"),
    [
        ((frozenset({TokenSpan(0, 3), TokenSpan(2, 4)}),), "cross"),
        ((frozenset({TokenSpan(0, 2), TokenSpan(1, 3)}),), "cross|cannot be written"),
        ((frozenset({TokenSpan(3, 9)}),), "outside tokens"),
    ],
)
def test_writer_refuses_chains_the_format_cannot_express(
    chains: tuple[frozenset[TokenSpan], ...], message: str
) -> None:
    document = ConllDocument("doc", 0, (("a", "b", "c", "d"),), chains)
    with pytest.raises(ValueError, match=message):
        write_conll2012([document], io.StringIO())


@pytest.mark.parametrize(
    ("sentences", "message"),
    [((("fine",), ("two words",)), "whitespace"), ((("fine",), ()), "empty sentence")],
)
def test_writer_refuses_bad_tokens_before_writing_the_document(
    sentences: tuple[tuple[str, ...], ...], message: str
) -> None:
    out = io.StringIO()
    with pytest.raises(ValueError, match=message):
        write_conll2012([ConllDocument("doc", 0, sentences, ())], out)
    assert out.getvalue() == ""


HEADER = "#begin document (d); part 000\n"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (HEADER + "d 0 0 a (1\nd 0 1 b 2)\n#end document\n", 3, r"'2\)' closes entity 2"),
        (HEADER + "d 0 0 a -\nd 0 1 b (4\nd 0 2 c -\n#end document\n", 3, r"'\(4' opens .* never closed"),
        (HEADER + "d 0 0 a (1)\n", 1, "no '#end document'"),
        (HEADER + "d 0 0 a (1)\n" + HEADER, 3, "inside document"),
        ("d 0 0 a (1)\n", 1, "expected '#begin document"),
        (HEADER + "d 0 0 a (1]\n#end document\n", 2, "coreference column"),
        (
            HEADER + "d 0 0 a (1)\nd 0 1 b \xe9\n#end document\n",
            3,
            "expected UTF-8 text, found byte 0xe9 at byte offset 50",
        ),
        (HEADER + "#end document\n" + HEADER + "#end document\n", 3, "already began at line 1"),
        ("#begin document \n", 1, "without a document name"),
        (HEADER + "# a comment\n#end document\n", 2, "unexpected '#' line"),
    ],
)
def test_errors_name_file_and_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = tmp_path / "file.conll"
    path.write_bytes(text.encode("latin-1"))  # ASCII, except a Latin-1 byte where UTF-8 is expected
    with pytest.raises(SourceError, match=message) as raised:
        list(iter_conll2012(path))
    assert raised.value.path == str(path)
    assert raised.value.line == line


def test_any_number_of_columns_the_coreference_column_last(tmp_path: Path) -> None:
    # The reference scorer's own test files: two columns (document, coreference) or five.
    two = "#begin document (x); part 000\nx (1\nx 1)\nx -\n\nx (1)\n#end document\n"
    five = "#begin document (x); part 000\nx 0 0 a (1\nx 0 1 b 1)\nx 0 2 c -\n\nx 0 0 d (1)\n#end document\n"
    one = "#begin document (x); part 000\n(1\n1)\n-\n\n(1)\n#end document\n"
    chains = [[TokenSpan(0, 2), TokenSpan(3, 4)]]
    for name, text in {"two": two, "five": five, "one": one}.items():
        assert read_conll2012_chains(write(tmp_path, text, name)) == {"(x); part 000": chains}
    (document,) = iter_conll2012(write(tmp_path, two, "two"))
    assert document.sentences == (("_", "_", "_"), ("_",))  # no word column
    (document,) = iter_conll2012(write(tmp_path, five, "five"))
    assert document.sentences == (("a", "b", "c"), ("d",))


def test_document_names_match_exactly_unless_normalised(tmp_path: Path) -> None:
    key = write(tmp_path, "#begin document (d); part 000\nd (1)\nd (1)\n#end document\n", "key")
    response = write(tmp_path, "#begin document (d); part 0\nd (1)\nd (1)\n#end document\n", "response")
    assert list(read_conll2012_chains(key)) == ["(d); part 000"]
    assert list(read_conll2012_chains(response)) == ["(d); part 0"]
    assert list(read_conll2012_chains(response, normalise_names=True)) == ["(d); part 000"]
    # Same normalised name twice in one file: refused rather than one of them silently kept.
    both = write(tmp_path, "#begin document (d); part 0\n#end document\n#begin document (d); part 000\n#end document\n")
    assert len(list(iter_conll2012(both))) == 2
    with pytest.raises(SourceError, match="already began at line 1"):
        list(iter_conll2012(both, normalise_names=True))


def test_repeated_spans_are_kept_as_read(tmp_path: Path) -> None:
    # Entity 1 names token 0 twice; entity 2 reuses it: the metrics decide what repeats mean.
    text = "#begin document (d); part 000\nd (1)|(1)|(2)\nd (2)\n#end document\n"
    (document,) = iter_conll2012(write(tmp_path, text))
    assert document.mentions == ((TokenSpan(0, 1), TokenSpan(0, 1)), (TokenSpan(0, 1), TokenSpan(1, 2)))
    assert document.chains == (frozenset({TokenSpan(0, 1)}), frozenset({TokenSpan(0, 1), TokenSpan(1, 2)}))


# OntoNotes *_conll files as the CoNLL-2012 shared task distributed them (invented words): columns aligned
# with runs of spaces, one SRL column per predicate of the sentence (so the column count changes from one
# sentence to the next), parts 000/001/003/005 of one document in one file, no blank line before
# "#end document", and the same entity number reused in every part.
ONTONOTES_DOC = "bc/cctv/00/cctv_0001"
# part -> sentences -> (word, key coreference, response coreference); the sentence's SRL column count first
ONTONOTES_PARTS: dict[int, list[tuple[int, list[tuple[str, str, str]]]]] = {
    0: [
        (1, [("John", "(0)", "(0)"), ("said", "-", "-"), ("he", "(0)", "(0)"), ("left", "-", "-"), (".", "-", "-")]),
        (2, [("It", "-", "-"), ("rained", "-", "-"), ("and", "-", "-"), ("snowed", "-", "-"), (".", "-", "-")]),
    ],
    1: [
        (1, [("The", "(0", "(0"), ("storm", "0)", "0)"), ("hit", "-", "-"), (".", "-", "-")]),
        (0, [("It", "(0)", "(0)"), ("was", "-", "-"), ("bad", "-", "-"), (",", "-", "-"), ("it", "(0)", "(1)")]),
    ],
    3: [
        (3, [("Mary", "(0)", "(0)"), ("met", "-", "-"), ("Sue", "-", "(0)"), ("and", "-", "-"), ("she", "(0)", "(0)")]),
    ],
    5: [(1, [("Bob", "(0)", "-"), ("and", "-", "-"), ("Bob", "(0)", "-"), ("met", "-", "-"), (".", "-", "-")])],
}


def ontonotes_file(column: int) -> str:
    """The parts as one space-aligned file, with the key's (column 0) or the response's (1) coreference."""
    lines = []
    for part, sentences in ONTONOTES_PARTS.items():
        lines.append(f"#begin document ({ONTONOTES_DOC}); part {part:03d}")
        for number, (predicates, tokens) in enumerate(sentences):
            if number:
                lines.append("")
            for index, (word, *coreference) in enumerate(tokens):
                srl = ["(V*)" if index == 1 else "*"] * predicates
                row = [ONTONOTES_DOC, str(part), str(index), word, "NN", "*", "-", "-", "-", "Speaker#1", "*", *srl]
                lines.append("   ".join(f"{value:>8}" for value in [*row, coreference[column]]))
        lines.append("#end document")
    return "\n".join(lines) + "\n"


def test_ontonotes_variants_read_each_part_as_its_own_document(tmp_path: Path) -> None:
    text = ontonotes_file(0)
    assert "     0   " in text and "\n#end document" in text and "\n\n#end document" not in text
    documents = list(iter_conll2012(write(tmp_path, text)))
    assert [(d.doc_id, d.part) for d in documents] == [
        (f"({ONTONOTES_DOC}); part {part:03d}", part) for part in (0, 1, 3, 5)
    ]
    assert documents[0].sentences[1] == ("It", "rained", "and", "snowed", ".")
    assert [d.chains for d in documents] == [
        (frozenset({TokenSpan(0, 1), TokenSpan(2, 3)}),),
        (frozenset({TokenSpan(0, 2), TokenSpan(4, 5), TokenSpan(8, 9)}),),
        (frozenset({TokenSpan(0, 1), TokenSpan(4, 5)}),),
        (frozenset({TokenSpan(0, 1), TokenSpan(2, 3)}),),
    ]


def test_ontonotes_parts_score_as_scorer_pl_sums_them(tmp_path: Path) -> None:
    """MUC by hand over the four parts (scorer.pl sums numerators and denominators over documents):
    recall (1 + 1 + 1 + 0) / (1 + 2 + 1 + 1) = 0.6, precision (1 + 1 + 1) / (1 + 1 + 2) = 0.75."""
    key = read_conll2012_chains(write(tmp_path, ontonotes_file(0), "key"))
    response = read_conll2012_chains(write(tmp_path, ontonotes_file(1), "response"))
    scores = score_documents_all(key, response)
    assert scores["muc"] == pytest.approx((0.6, 0.75, 2 * 0.6 * 0.75 / 1.35))
    # Tab-separated, one blank line before each "#end document": the same documents and scores.
    tabbed = "\n".join("\t".join(line.split()) for line in ontonotes_file(0).splitlines()) + "\n"
    tabbed = tabbed.replace("\n#end document", "\n\n#end document").replace("#begin\tdocument\t", "#begin document ")
    tabbed = tabbed.replace(";\tpart\t", "; part ").replace("#end\tdocument", "#end document")
    assert read_conll2012_chains(write(tmp_path, tabbed, "tabbed")) == key
    assert score_documents_all(read_conll2012_chains(write(tmp_path, tabbed, "tabbed")), response) == scores
