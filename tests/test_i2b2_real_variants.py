"""The real i2b2/VA 2011 coreference release's variants, in invented notes: chain lines sharing a concept, an
empty chains file beside a pairs file, quoted texts inside their tokens, positions shifted onto numbers.

Each pattern is one a maintainer met in the real release read through the ``odie_anaphora`` layout (Uzuner
et al. 2012 data); the notes here are invented and written in the exact raw formats.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.base import BuildContext
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.sources.i2b2.concepts import quote_lies_inside
from clinical_corpora.builders.sources.i2b2.coref import read_i2b2_document
from clinical_corpora.core.errors import GateError
from clinical_corpora.corpora.odie_anaphora.builder import OdieAnaphoraBuilder
from clinical_corpora.corpora.odie_anaphora.records import OdieDocument

# line:token  1: Mr.0 Smith1 is2 a3 60(4) year5 old6 man7 .8      2: He0 was1 admitted2 with3 chest4 pain5 .6
#   3: The0 patient1 lives2 by3 himself;4 his5 son6 visits7 .8     4: EKG0 showed1 a2 lad/3 lesion4 .5
#   5: Dictated0 By:Penny1 K.2 Mcbride3 ,4 M.D.5                   6: Penny0 K.1 Mcbride2 M.D.3
#   7: His0 pain1 resolved2 on3 day4 2(5) .6
DISCHARGE = (
    "Mr. Smith is a 60 year old man .\nHe was admitted with chest pain .\n"
    "The patient lives by himself; his son visits .\nEKG showed a lad/ lesion .\n"
    "Dictated By:Penny K. Mcbride , M.D.\nPenny K. Mcbride M.D.\nHis pain resolved on day 2 .\n"
)
CONCEPTS = (
    'c="mr. smith" 1:0 1:1||t="people"\n'
    'c="a 60 year old man" 1:3 1:7||t="people"\n'
    'c="he" 2:0 2:0||t="people"\n'
    'c="chest pain" 2:4 2:5||t="sign or symptom"\n'
    'c="the patient" 3:0 3:1||t="people"\n'
    'c="himself" 3:4 3:4||t="people"\n'
    'c="his" 3:5 3:5||t="people"\n'
    'c="lad" 4:3 4:3||t="anatomical site"\n'
    'c="penny k. mcbride , m.d." 5:1 5:5||t="people"\n'
    'c="m.d" 6:3 6:3||t="people"\n'
    'c="his" 7:0 7:0||t="people"\n'
    'c="his pain" 7:0 7:1||t="sign or symptom"\n'
)
# Lines 2 and 3 both hold "himself" 3:4 (as "his" 118:4 sits in lines 7 and 14 of a real file).
CHAINS = (
    'c="mr. smith" 1:0 1:1||c="a 60 year old man" 1:3 1:7||c="he" 2:0 2:0||c="the patient" 3:0 3:1'
    '||c="himself" 3:4 3:4||t="coref people"\n'
    'c="chest pain" 2:4 2:5||c="his pain" 7:0 7:1||t="coref sign or symptom"\n'
    'c="himself" 3:4 3:4||c="his" 3:5 3:5||c="his" 7:0 7:0||t="coref people"\n'
    'c="penny k. mcbride , m.d." 5:1 5:5||c="m.d" 6:3 6:3||t="coref people"\n'
)
PAIRS = (
    'c="mr. smith" 1:0 1:1||t="coref people"||c="a 60 year old man" 1:3 1:7\n'
    'c="a 60 year old man" 1:3 1:7||t="coref people"||c="he" 2:0 2:0\n'
    'c="he" 2:0 2:0||t="coref people"||c="the patient" 3:0 3:1\n'
    'c="the patient" 3:0 3:1||t="coref people"||c="himself" 3:4 3:4\n'
    'c="himself" 3:4 3:4||t="coref people"||c="his" 3:5 3:5\n'
    'c="his" 3:5 3:5||t="coref people"||c="his" 7:0 7:0\n'
    'c="chest pain" 2:4 2:5||t="coref sign or symptom"||c="his pain" 7:0 7:1\n'
    'c="penny k. mcbride , m.d." 5:1 5:5||t="coref people"||c="m.d" 6:3 6:3\n'
)
ER_TEXT = "Patient reports a headache .\nThe headache is worse tonight .\n"
ER_CONCEPTS = 'c="a headache" 1:2 1:3||t="sign or symptom"\nc="the headache" 2:0 2:1||t="sign or symptom"\n'
ER_CHAINS = 'c="a headache" 1:2 1:3||c="the headache" 2:0 2:1||t="coref sign or symptom"\n'
ER_PAIRS = 'c="a headache" 1:2 1:3||t="coref sign or symptom"||c="the headache" 2:0 2:1\n'


def write_note(root: Path, doc_id: str, text: str, concepts: str, chains: str, pairs: str | None) -> None:
    for folder, suffix, content in (
        ("docs", ".txt", text),
        ("concepts", ".txt.con", concepts),
        ("chains", ".txt.chains", chains),
        ("pairs", ".txt.pairs", pairs),
    ):
        if content is not None:
            (root / folder).mkdir(parents=True, exist_ok=True)
            (root / folder / f"{doc_id}{suffix}").write_text(content, encoding="utf-8")


def texts(chains: tuple) -> list[list[str]]:
    return [[concept.text for concept in chain.concepts] for chain in chains]


def test_chain_lines_sharing_a_concept_are_one_chain_with_a_warning_naming_both(tmp_path: Path) -> None:
    write_note(tmp_path, "upmc_ds_91", DISCHARGE, CONCEPTS, CHAINS, PAIRS)
    document = read_i2b2_document(tmp_path, "upmc_ds_91")
    assert document.problems == ()
    assert texts(document.chains)[0] == [
        "Mr. Smith",
        "a 60 year old man",
        "He",
        "The patient",
        "himself;",
        "his",
        "His",
    ]
    assert len(document.chains) == 3
    joined = [w for w in document.changes if w.kind == "chain_lines_joined"]
    assert [(Path(w.path).name, w.line) for w in joined] == [("upmc_ds_91.txt.chains", 3)]
    assert "with the chain on line 1" in joined[0].message and "'himself;'" in joined[0].message
    # Without the pairs file the chains are read the same (each member paired with the one before it).
    (tmp_path / "pairs" / "upmc_ds_91.txt.pairs").unlink()
    assert read_i2b2_document(tmp_path, "upmc_ds_91").chains == document.chains


def test_quoted_text_inside_the_covered_tokens_is_read_at_its_position_with_a_counted_warning(tmp_path: Path) -> None:
    write_note(tmp_path, "upmc_ds_91", DISCHARGE, CONCEPTS, CHAINS, PAIRS)
    document = read_i2b2_document(tmp_path, "upmc_ds_91")
    assert [
        c.text for c in document.concepts if c.text in {"himself;", "lad/", "M.D.", "By:Penny K. Mcbride , M.D."}
    ] == [
        "himself;",
        "lad/",
        "By:Penny K. Mcbride , M.D.",
        "M.D.",
    ]
    inside = [w for w in document.changes if w.kind == "quote_inside_tokens"]
    # Each written occurrence counts: 4 concepts lines, 4 chain members and 4 pair ends.
    assert len(inside) == 12
    assert [w.line for w in inside if w.path.endswith(".con")] == [6, 8, 9, 10]
    assert "'m.d'" in inside[3].message and "'M.D.'" in inside[3].message


@pytest.mark.parametrize(
    ("quoted", "covered", "inside"),
    [
        ("m.d", "M.D.", True),
        ("md", "M.D.", True),
        ("himself", "himself;", True),
        ("lad", "lad/", True),
        ("penny k. mcbride , m.d.", "By:Penny K. Mcbride , M.D.", True),
        ("cyst", "cysts", False),
        ("his", "2", False),
        ("the patient", "patient the", False),
        (",", ",", False),
    ],
)
def test_what_lies_inside_the_covered_tokens(quoted: str, covered: str, inside: bool) -> None:
    assert quote_lies_inside(quoted, covered) is inside


def test_empty_chains_file_beside_pairs_gives_the_chains_of_the_identity_pairs(tmp_path: Path) -> None:
    write_note(tmp_path, "upmc_er_91", ER_TEXT, ER_CONCEPTS, "", ER_PAIRS)
    assert (tmp_path / "chains" / "upmc_er_91.txt.chains").stat().st_size == 0
    document = read_i2b2_document(tmp_path, "upmc_er_91")
    assert document.problems == ()
    assert texts(document.chains) == [["a headache", "The headache"]]
    assert document.chains[0].type == "sign or symptom"
    (change,) = document.changes
    assert change.kind == "chains_from_pairs"
    assert change.path.endswith("upmc_er_91.txt.chains") and "chains file is empty" in change.message


# The four concepts of the real release whose quoted text is not the tokens of their (valid) position.
FEVER = "Heis a 45 year old man .\nH ewas admitted .\nThis is a patient with fever .\nHe remaineda febrile .\n"
FEVER_CONCEPTS = (
    'c="he" 1:0 1:0||t="people"\n'
    'c="h e" 2:0 2:1||t="people"\n'
    'c="s a patie" 3:2 3:3||t="people"\n'
    'c="a febrile" 4:1 4:2||t="sign or symptom"\n'
    'c="fever" 3:5 3:5||t="sign or symptom"\n'
)
FEVER_CHAINS = (
    'c="he" 1:0 1:0||c="h e" 2:0 2:1||c="s a patie" 3:2 3:3||t="coref people"\n'
    'c="fever" 3:5 3:5||c="a febrile" 4:1 4:2||t="coref sign or symptom"\n'
)


def test_a_concept_whose_position_exists_is_read_there_whatever_its_quote_says(tmp_path: Path) -> None:
    """``he`` on ``Heis``, ``h e`` on ``H ewas``, ``s a patie`` on ``a patient``, ``a febrile`` on ``remaineda
    febrile``, and a position shifted onto a number (``his`` on ``2``): each read at its position, a change."""
    write_note(tmp_path, "upmc_er_92", FEVER, FEVER_CONCEPTS, FEVER_CHAINS, None)
    document = read_i2b2_document(tmp_path, "upmc_er_92")
    assert document.problems == ()
    assert [c.text for c in document.concepts] == ["Heis", "H ewas", "a patient", "fever", "remaineda febrile"]
    assert texts(document.chains) == [["Heis", "H ewas", "a patient"], ["fever", "remaineda febrile"]]
    unlike = [c for c in document.changes if c.kind == "quote_unlike_tokens"]
    assert [(Path(c.path).suffix, c.line) for c in unlike] == [(".con", n) for n in (1, 2, 3, 4)] + [
        (".chains", 1),
        (".chains", 1),
        (".chains", 1),
        (".chains", 2),
    ]
    assert "concept text 's a patie' is not the tokens at 3:2 3:3 ('a patient'): the position is read" in str(unlike[2])
    shifted = [text.replace('c="his" 7:0 7:0', 'c="his" 7:5 7:5') for text in (CONCEPTS, CHAINS, PAIRS)]
    write_note(tmp_path, "upmc_ds_91", DISCHARGE, *shifted)
    document = read_i2b2_document(tmp_path, "upmc_ds_91")
    assert document.problems == ()
    assert texts(document.chains)[0][-1] == "2"


def test_pair_across_chains_the_chains_file_keeps_apart_is_left_out_alone(tmp_path: Path) -> None:
    across = PAIRS + 'c="chest pain" 2:4 2:5||t="coref people"||c="he" 2:0 2:0\n'
    write_note(tmp_path, "upmc_ds_91", DISCHARGE, CONCEPTS, CHAINS, across)
    document = read_i2b2_document(tmp_path, "upmc_ds_91")
    (problem,) = document.problems
    assert (Path(problem.path).name, problem.line) == ("upmc_ds_91.txt.pairs", 9)
    assert "keeps apart" in problem.message
    assert len(document.pairs) == 8 and len(document.chains) == 3


def test_lines_of_different_types_sharing_a_concept_leave_the_later_line_out(tmp_path: Path) -> None:
    chains = CHAINS + 'c="he" 2:0 2:0||c="chest pain" 2:4 2:5||t="coref sign or symptom"\n'
    write_note(tmp_path, "upmc_ds_91", DISCHARGE, CONCEPTS, chains, None)
    document = read_i2b2_document(tmp_path, "upmc_ds_91")
    (problem,) = document.problems
    assert problem.line == 5 and "no reading joins them" in problem.message
    assert len(document.chains) == 3


def test_chain_the_pairs_do_not_join_is_a_problem_of_its_own(tmp_path: Path) -> None:
    pairs = PAIRS.replace('c="his" 3:5 3:5||t="coref people"||c="his" 7:0 7:0\n', "")
    write_note(tmp_path, "upmc_ds_91", DISCHARGE, CONCEPTS, CHAINS, pairs)
    document = read_i2b2_document(tmp_path, "upmc_ds_91")
    (problem,) = document.problems
    assert (Path(problem.path).suffix, problem.line) == (".chains", 1)
    assert "joins 6 member(s) in 1 chain(s) of this chain's 7 members" in problem.message
    assert texts(document.chains)[0][-1] == "his"


def odie_corpus(tmp_path: Path) -> Path:
    """The patterns of the real release in one invented i2b2 folder: chain lines sharing a concept and quotes
    inside their tokens (ds_91), an empty chains file (er_91), a concept left out mid-chain (ds_92), a concept
    of another type (ds_93)."""
    root = tmp_path / "i2b2"
    write_note(root, "upmc_ds_91", DISCHARGE, CONCEPTS, CHAINS, PAIRS)  # shared concept, quotes inside tokens
    write_note(root, "upmc_er_91", ER_TEXT, ER_CONCEPTS, "", ER_PAIRS)  # empty chains file
    gone = [text.replace('c="he" 2:0 2:0', 'c="he" 2:9 2:9') for text in (CONCEPTS, CHAINS, PAIRS)]
    write_note(root, "upmc_ds_92", DISCHARGE, *gone)  # a concept whose position does not exist, mid-chain
    write_note(root, "upmc_ds_93", DISCHARGE, CONCEPTS + 'c="son" 3:6 3:6||t="family member"\n', CHAINS, PAIRS)
    return root


def test_no_note_is_rejected_whole_under_quarantine(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = odie_corpus(tmp_path)
    manifest = find_corpus("odie_anaphora")
    ctx = BuildContext(manifest, resolve_sources(manifest, {"i2b2": root}), on_error="quarantine")
    with caplog.at_level(logging.WARNING):
        built = {r.record.id: r.record for r in OdieAnaphoraBuilder().generate(ctx) if r.config == "odie_anaphora"}
    assert list(built) == ["upmc_ds_91", "upmc_ds_92", "upmc_ds_93", "upmc_er_91"]
    assert all(isinstance(record, OdieDocument) for record in built.values())
    assert ctx.rejected("record") == 0
    assert [(r.where.split("/")[-1]) for r in ctx.rejects] == [
        "upmc_ds_92.txt.con:3",
        "upmc_ds_92.txt.chains:1",
        "upmc_ds_92.txt.pairs:2",
        "upmc_ds_92.txt.pairs:3",
        "upmc_ds_93.txt.con:13",
    ]
    assert "'family member'" in ctx.rejects[-1].reason
    assert (len(built["upmc_ds_91"].markables), len(built["upmc_ds_91"].chains)) == (12, 3)
    patient = ["1:0-1:1", "1:3-1:7", "3:0-3:1", "3:4-3:4", "3:5-3:5", "7:0-7:0"]
    assert [c.markable_ids for c in built["upmc_ds_92"].chains][0] == patient  # whole, minus "He"
    assert "3:0-3:1>1:3-1:7" in [p.id for p in built["upmc_ds_92"].pairs]
    assert (len(built["upmc_ds_92"].markables), len(built["upmc_ds_92"].pairs)) == (11, 7)
    assert [c.markable_ids for c in built["upmc_er_91"].chains] == [["1:2-1:3", "2:0-2:1"]]
    assert "upmc_ds_91: 13 line(s) read otherwise than written" in caplog.text


def test_default_fail_names_the_concept_left_out_and_what_quarantine_would_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = odie_corpus(tmp_path)
    out = tmp_path / "out"
    assert main(["release", "odie_anaphora", "--source", f"i2b2={root}", "--out", str(out)]) == 1
    error = capsys.readouterr().err
    assert "upmc_ds_92.txt.con:3" in error and "'he': token 9 does not exist on line 2" in error
    assert "with --on-error quarantine this annotation alone is left out" in error
    assert "Traceback" not in error


def test_a_note_without_annotations_is_tolerated_per_note_by_the_markables_gate(tmp_path: Path) -> None:
    """One unannotated note among a hundred passes ``n_markables >= 2`` at ``mostly: 0.99``; two do not,
    and the failed gate names them."""
    root = tmp_path / "i2b2"
    for number in range(1, 100):
        write_note(root, f"upmc_er_{number:03d}", ER_TEXT, ER_CONCEPTS, ER_CHAINS, ER_PAIRS)
    write_note(root, "upmc_rad_100", "No acute findings .\n", "", "", None)
    outcome = run(ReleaseRequest(find_corpus("odie_anaphora"), tmp_path / "out", sources={"i2b2": root}, max_rejects=0))
    details = json.loads((outcome.folder / "validation.json").read_text())["gates"][1]["details"]
    gate = next(e for e in details if e["kwargs"].get("column") == "n_markables")
    assert gate["success"] is True and gate["observed"]["unexpected_count"] == 1
    assert gate["violations"][0]["record"] == "upmc_rad_100"
    write_note(root, "upmc_rad_101", "No acute findings .\n", "", "", None)
    with pytest.raises(GateError, match="upmc_rad_10[01]"):
        run(ReleaseRequest(find_corpus("odie_anaphora"), tmp_path / "out2", sources={"i2b2": root}))


def test_a_pair_listed_twice_is_read_once_and_with_another_type_is_a_problem(tmp_path: Path) -> None:
    first = PAIRS.splitlines()[0]
    pairs = PAIRS + first + "\n" + first.replace('t="coref people"', 't="coref other"') + "\n"
    write_note(tmp_path, "upmc_ds_91", DISCHARGE, CONCEPTS, CHAINS, pairs)
    document = read_i2b2_document(tmp_path, "upmc_ds_91")
    (problem,) = document.problems
    assert problem.line == 10 and "listed twice, as 'people' (line 1) and as 'other'" in problem.message
    assert len(document.pairs) == 8


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_chains_and_pairs_reject_a_note_whole(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    """Whatever chain lines and pairs say about a note's concepts (lines sharing concepts, of other types,
    pairs across chains, to themselves, twice, an empty chains file), quarantine keeps the note."""
    words = data.draw(st.lists(st.sampled_from(["he", "his", "pain", "M.D.", "2", "lad/"]), min_size=2, max_size=8))
    text = " ".join(words) + "\n"
    positions = sorted(set(data.draw(st.lists(st.integers(0, len(words) - 1), min_size=1, max_size=6))))
    concept = {token: f'c="{words[token].lower()}" 1:{token} 1:{token}' for token in positions}
    concepts = "".join(f'{concept[token]}||t="people"\n' for token in positions)
    members = st.lists(st.sampled_from(positions), min_size=2, max_size=4)
    chain_lines = data.draw(st.lists(st.tuples(members, st.sampled_from(["people", "other"])), max_size=3))
    chains = "".join("||".join(concept[t] for t in line) + f'||t="coref {kind}"\n' for line, kind in chain_lines)
    pair_lines = data.draw(st.lists(st.tuples(st.sampled_from(positions), st.sampled_from(positions)), max_size=5))
    pairs = "".join(f'{concept[a]}||t="coref people"||{concept[b]}\n' for a, b in pair_lines)
    root = tmp_path_factory.mktemp("i2b2")
    write_note(root, "upmc_ds_99", text, concepts, chains, pairs if data.draw(st.booleans()) else None)
    manifest = find_corpus("odie_anaphora")
    ctx = BuildContext(manifest, resolve_sources(manifest, {"i2b2": root}), on_error="quarantine")
    records = [row.record for row in OdieAnaphoraBuilder().generate(ctx) if row.config == "odie_anaphora"]
    assert ctx.rejected("record") == 0 and len(records) == 1
    assert {m.id for m in records[0].markables} == {f"1:{t}-1:{t}" for t in positions}


def test_concept_in_two_chain_lines_with_pairs_across_them_releases_one_chain(tmp_path: Path) -> None:
    """The 3 notes of the real release whose record was rejected ("a markable belongs to more than one chain"):
    one concept in two chain lines, the pairs linking it to members of both. Now one chain, no reject."""
    text = "He said he left .\nHis son came .\n"
    concepts = 'c="he" 1:0 1:0||t="people"\nc="he" 1:2 1:2||t="people"\nc="his" 2:0 2:0||t="people"\n'
    chains = 'c="he" 1:0 1:0||c="he" 1:2 1:2||t="coref people"\nc="he" 1:2 1:2||c="his" 2:0 2:0||t="coref people"\n'
    pairs = 'c="he" 1:0 1:0||t="coref people"||c="he" 1:2 1:2\nc="he" 1:2 1:2||t="coref people"||c="his" 2:0 2:0\n'
    write_note(tmp_path, "upmc_ds_95", text, concepts, chains, pairs)
    manifest = find_corpus("odie_anaphora")
    ctx = BuildContext(manifest, resolve_sources(manifest, {"i2b2": tmp_path}), on_error="quarantine")
    (record,) = [r.record for r in OdieAnaphoraBuilder().generate(ctx) if r.config == "odie_anaphora"]
    assert ctx.rejects == []
    assert [c.markable_ids for c in record.chains] == [["1:0-1:0", "1:2-1:2", "2:0-2:0"]]
    assert [p.id for p in record.pairs] == ["1:2-1:2>1:0-1:0", "2:0-2:0>1:2-1:2"]
