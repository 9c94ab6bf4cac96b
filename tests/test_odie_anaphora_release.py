"""odie_anaphora end to end: release of the embedded sample, the i2b2 input, agreement, card, bad input.

Expected numbers are counted by hand from the sample (see corpora/odie_anaphora/README.md for the
disagreements written into it).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from datasets import load_dataset
from pydantic import ValidationError

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.base import BuildContext
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.sources.knowtator.xml import read_knowtator_file
from clinical_corpora.core.errors import ClincorpError, GateError, SourceError
from clinical_corpora.core.manifest import load_manifest
from clinical_corpora.corpora.odie_anaphora.builder import OdieAnaphoraBuilder
from clinical_corpora.corpora.odie_anaphora.notes import document_kind, knowtator_record
from clinical_corpora.corpora.odie_anaphora.records import Chain, Markable, OdieDocument, Pair
from tests.conftest import SampleRelease

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "odie_anaphora"
SAMPLE = CORPUS / "sample"
DOCUMENTS = ["mayo_cc_01", "mayo_p_01", "upmc_ds_01", "upmc_er_01", "upmc_rad_01", "upmc_sp_01"]


def hand_kappa(tp: int, fp: int, fn: int, tn: int) -> float:
    """Savova et al. eqns 4-8, written out independently of the code under test."""
    total = tp + fp + fn + tn
    observed = (tp + tn) / total
    expected = (tp + fp) / total * (tp + fn) / total + (fn + tn) / total * (fp + tn) / total
    return (observed - expected) / (1 - expected)


@pytest.fixture(scope="module")
def release(sample_release: SampleRelease) -> Path:
    return sample_release("odie_anaphora").folder


@pytest.fixture(scope="module")
def i2b2_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("odie_i2b2")
    return run(ReleaseRequest(find_corpus("odie_anaphora"), out, sources={"i2b2": SAMPLE / "i2b2"})).folder


def rows(folder: Path) -> dict[str, dict]:
    return {row["id"]: row for _, row in ReleaseView(folder).rows("odie_anaphora")}


def texts(row: dict, ids: list[str]) -> list[str]:
    markables = {m["id"]: m["text"] for m in row["markables"]}
    return [markables[markable_id] for markable_id in ids]


def test_release_loads_as_typed_dataset(release: Path) -> None:
    dataset = load_dataset(str(release), "odie_anaphora")["train"]
    assert dataset["id"] == DOCUMENTS
    features = dataset.features
    assert features["note_type"].names == ["cc", "p", "er", "ds", "sp", "rad"]
    assert features["institution"].int2str(dataset[0]["institution"]) == "mayo"
    assert features["pairs"].feature["relation"].names == ["identity", "set/subset", "part/whole", "other"]
    assert "ontology_knowledge" in features["pairs"].feature["bagga_class"].names
    assert features["markables"].feature["start"].dtype == "int32"
    for row in dataset:
        for markable in row["markables"]:
            assert row["text"][markable["start"] : markable["end"]] == markable["text"]


def test_rows_hold_markables_pairs_and_chains_of_the_gold(release: Path) -> None:
    released = rows(release)
    counts = {doc: (len(r["markables"]), len(r["pairs"]), len(r["chains"])) for doc, r in released.items()}
    assert counts == {
        "mayo_cc_01": (19, 10, 3),
        "mayo_p_01": (12, 6, 2),
        "upmc_ds_01": (14, 7, 5),
        "upmc_er_01": (21, 12, 3),
        "upmc_rad_01": (12, 7, 2),
        "upmc_sp_01": (11, 6, 3),
    }
    note = released["mayo_cc_01"]
    assert (note["institution"], note["note_type"]) == ("mayo", "cc")
    assert texts(note, note["chains"][0]["markable_ids"]) == [
        "Mrs. Jane Doe",
        "She",
        "she",
        "She",
        "The patient",
        "Her",
        "her",
    ]
    pathology = released["mayo_p_01"]
    part_whole = [
        (texts(pathology, [p["anaphor_id"], p["antecedent_id"]]), p["bagga_class"])
        for p in pathology["pairs"]
        if p["relation"] == "part/whole"
    ]
    assert part_whole == [
        (["the muscularis propria", "the sigmoid colon"], "ontology_knowledge"),
        (["The colonic mucosa", "the sigmoid colon"], "ontology_knowledge"),
    ]
    first = pathology["markables"][0]
    assert (first["grammatical_category"], first["sentence_function"], first["semantic_class"]) == (
        "bare_np",
        "section_heading",
        "anatomical_site",
    )
    assert first["fragments"] == [{"start": 11, "end": 26, "text": "Colon , sigmoid"}]


def test_discontinuous_markable_is_its_covering_span_with_fragments() -> None:
    document = read_knowtator_file(SAMPLE / "annotator_b" / "upmc_rad_01.txt.knowtator.xml", SAMPLE / "text")
    record = knowtator_record(document, SAMPLE / "annotator_b")
    ct = record.markables[0]
    assert (ct.start, ct.end, ct.text) == (7, 28, "CT abdomen and pelvis")
    assert [(f.start, f.end, f.text) for f in ct.fragments] == [(7, 9, "CT"), (22, 28, "pelvis")]


def test_agreement_between_annotators_and_against_gold(release: Path) -> None:
    measures = json.loads((release / "validation.json").read_text())["agreement"]
    # A vs B: TP 38, FP 8, FN 9; candidates sum P(n, 2) * 4 over notes with n = 19, 12, 14, 21, 13, 11.
    candidates = 4 * sum(n * (n - 1) for n in (19, 12, 14, 21, 13, 11))
    assert candidates == 5368
    assert measures["kappa"] == pytest.approx(hand_kappa(38, 8, 9, candidates - 55))
    assert measures["f_score"] == pytest.approx(2 * 38 / (46 + 47))
    # Against the gold: A has TP 43, FP 3, FN 5 (n as the gold, 5272 candidates); B has TP 43, FP 4,
    # FN 5 (its discontinuous CT markable adds one to upmc_rad_01: 5368 candidates).
    assert measures["annotator_a_gold_kappa"] == pytest.approx(hand_kappa(43, 3, 5, 5272 - 51))
    assert measures["annotator_b_gold_kappa"] == pytest.approx(hand_kappa(43, 4, 5, 5368 - 52))
    # MUC between the identity chains: 35 of 37 key links kept, 35 of 37 response links correct.
    assert measures["chains_muc_f1"] == pytest.approx(35 / 37)


def test_card_reports_statistics_agreement_tables_and_gates(release: Path) -> None:
    card = (release / "README.md").read_text()
    assert "| markables | 89 | 14.8333 |" in card
    assert "| identity chains | 18 | 3 |" in card
    assert "| identity | 9 | 7 | 10 | 3 | 4 | 4 | 37 |" in card
    assert "| part/whole | 1 | 0 | 0 | 2 | 1 | 1 | 5 |" in card
    assert "| True positive | 38 | 8 | 7 | 9 | 4 | 6 | 4 |" in card  # all, then cc ds er p rad sp
    assert "|  | A1 and gold | A2 and gold | A3 and gold |" in card
    assert "| True positive | 43 | 14 | 29 |" in card
    assert "| pronoun | 13 |" in card
    for gate in ("agreement.kappa", "agreement.annotator_a_gold_kappa", "expectations"):
        assert f"| {gate} | pass |" in card


def test_i2b2_input_builds_the_same_chains_without_attributes(release: Path, i2b2_release: Path) -> None:
    knowtator, i2b2 = rows(release), rows(i2b2_release)
    assert list(i2b2) == DOCUMENTS
    for doc_id, row in i2b2.items():
        gold = knowtator[doc_id]
        assert [(m["start"], m["end"], m["semantic_class"]) for m in row["markables"]] == [
            (m["start"], m["end"], m["semantic_class"]) for m in gold["markables"]
        ]
        assert [texts(row, c["markable_ids"]) for c in row["chains"]] == [
            texts(gold, c["markable_ids"]) for c in gold["chains"]
        ]
        assert {m["grammatical_category"] for m in row["markables"]} == {None}
        assert {(p["relation"], p["bagga_class"]) for p in row["pairs"]} == {("identity", None)}
        assert len(row["pairs"]) == sum(p["relation"] == "identity" for p in gold["pairs"])
    rad = i2b2["upmc_rad_01"]
    assert rad["markables"][0]["id"] == "1:2-1:5"  # c="ct abdomen and pelvis" 1:2 1:5
    validation = json.loads((i2b2_release / "validation.json").read_text())
    assert validation["agreement"] is None


def broken_corpus(tmp_path: Path, relative: str, old: str, new: str) -> tuple[Path, Path, int]:
    """A copy of the corpus with one edit; returns the corpus folder, the edited file and its line."""
    corpus = tmp_path / "odie_anaphora"
    shutil.copytree(CORPUS, corpus)
    path = corpus / "sample" / relative
    content = path.read_text(encoding="utf-8")
    assert content.count(old) >= 1
    line = content[: content.index(old)].count("\n") + 1
    path.write_text(content.replace(old, new, 1), encoding="utf-8")
    return corpus, path, line


SPLEEN = (
    "gold/upmc_rad_01.txt.knowtator.xml",
    "<spannedText>The liver</spannedText>",
    "<spannedText>The spleen</spannedText>",
)


@pytest.mark.parametrize(
    ("edit", "phrase"),
    [
        (
            (
                "gold/upmc_sp_01.txt.knowtator.xml",
                '<complexSlotMentionValue value="ODIE_Instance_34008"/>',
                '<complexSlotMentionValue value="ODIE_Instance_34999"/>',
            ),
            "ODIE_Instance_34999",
        ),
        (SPLEEN, "'The spleen' does not match the text"),
    ],
)
def test_release_fails_by_default_naming_file_and_line_of_a_broken_annotation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: tuple[str, str, str], phrase: str
) -> None:
    corpus, path, line = broken_corpus(tmp_path, *edit)
    assert main(["release", str(corpus), "--out", str(tmp_path / "out")]) == 1
    error = capsys.readouterr().err
    assert f"{path}:{line}" in error and phrase in error
    assert "Traceback" not in error
    assert not (
        tmp_path / "out" / "odie_anaphora" / f"odie_anaphora-{find_corpus('odie_anaphora').sample_version}"
    ).exists()


def test_quarantine_keeps_the_note_and_leaves_out_the_broken_markable_and_its_pairs(tmp_path: Path) -> None:
    """A span outside the text quarantines its markable alone; the two identity pairs naming it go
    with it (their chain falls apart: no link is invented across the gap); the note is released."""
    corpus, path, line = broken_corpus(
        tmp_path, "gold/mayo_p_01.txt.knowtator.xml", '<span start="130" end="139"/>', '<span start="130" end="9999"/>'
    )
    lines = path.read_text(encoding="utf-8").splitlines()
    naming = [n for n, text in enumerate(lines, start=1) if 'value="ODIE_Instance_31012"' in text]
    assert len(naming) == 2  # the anaphor of Pair 31053 and the antecedent of Pair 31073
    manifest = load_manifest(corpus)
    ctx = BuildContext(manifest, resolve_sources(manifest, {}), on_error="quarantine")
    built = {row.record.id: row.record for row in OdieAnaphoraBuilder().generate(ctx) if row.config == "odie_anaphora"}
    assert list(built) == DOCUMENTS
    assert ctx.read == 6
    assert [(r.kind, r.where) for r in ctx.rejects] == [
        ("annotation", f"knowtator/{path.name}:{line}"),
        *(("annotation", f"knowtator/{path.name}:{number}") for number in naming),
    ]
    assert "outside the text" in ctx.rejects[0].reason
    assert all("'ODIE_Instance_31012', which is left out" in r.reason for r in ctx.rejects[1:])
    pathology = built["mayo_p_01"]
    assert "ODIE_Instance_31012" not in {m.id for m in pathology.markables}
    assert (len(pathology.markables), len(pathology.pairs)) == (11, 4)
    assert [c.markable_ids for c in pathology.chains] == [["ODIE_Instance_31000", "ODIE_Instance_31008"]]


def test_quarantined_annotations_are_counted_in_the_manifest_and_listed_in_rejects(tmp_path: Path) -> None:
    corpus, path, line = broken_corpus(tmp_path, *SPLEEN)
    outcome = run(ReleaseRequest(load_manifest(corpus), tmp_path / "out", on_error="quarantine", max_rejects=5))
    counts = json.loads((outcome.folder / "manifest.json").read_text())["counts"]
    # The markable and the part/whole pair "the right lobe" -> "The liver" that needs it.
    assert (counts["rejected"], counts["rejected_annotations"]) == (0, 2)
    markable, pair = [json.loads(text) for text in (outcome.folder / "rejects.jsonl").read_text().splitlines()]
    assert markable["kind"] == "annotation" and markable["where"] == f"knowtator/{path.name}:{line}"
    assert "'The spleen' does not match the text" in markable["reason"]
    assert pair["kind"] == "annotation" and "ODIE_Instance_35053" in pair["reason"]
    released = rows(outcome.folder)["upmc_rad_01"]
    assert (len(released["markables"]), len(released["pairs"])) == (11, 6)


def test_i2b2_chain_position_that_does_not_match_the_text(tmp_path: Path) -> None:
    corpus, path, _ = broken_corpus(
        tmp_path, "i2b2/chains/upmc_rad_01.txt.chains", 'c="the right lobe" 5:0 5:2', 'c="the right lobe" 5:0 5:9'
    )
    manifest = load_manifest(corpus)
    ctx = BuildContext(manifest, resolve_sources(manifest, {"i2b2": corpus / "sample" / "i2b2"}))
    with pytest.raises(SourceError) as caught:
        list(OdieAnaphoraBuilder().generate(ctx))
    assert (caught.value.path, caught.value.line) == (str(path), 2)
    assert "token 9 does not exist on line 5" in caught.value.message


def test_agreement_needs_both_annotators(release: Path, tmp_path: Path) -> None:
    manifest = find_corpus("odie_anaphora")
    sources = {**resolve_sources(manifest, {}), "annotator_b": None}
    with pytest.raises(ClincorpError, match="needs both annotator_a and annotator_b"):
        OdieAnaphoraBuilder().agreement(BuildContext(manifest, sources), ReleaseView(release))


def test_document_names_must_give_institution_and_note_type() -> None:
    assert document_kind("upmc_rad_07", Path("x")) == ("upmc", "rad")
    with pytest.raises(SourceError, match="note type in"):
        document_kind("upmc_xray_07", Path("x"))


def note(pairs: list[Pair], chains: list[Chain]) -> OdieDocument:
    text = "Pain . It hurts ."
    markables = [
        Markable(
            id=i,
            start=s,
            end=e,
            text=text[s:e],
            fragments=[{"start": s, "end": e, "text": text[s:e]}],
            grammatical_category=None,
            sentence_function=None,
            semantic_class="sign_or_symptom",
        )
        for i, s, e in (("m1", 0, 4), ("m2", 7, 9))
    ]
    return OdieDocument(
        id="upmc_er_09", institution="upmc", note_type="er", text=text, markables=markables, pairs=pairs, chains=chains
    )


def test_schema_checks_references_and_chains() -> None:
    identity = Pair(id="p1", anaphor_id="m2", antecedent_id="m1", bagga_class="pronoun", relation="identity")
    assert note([identity], [Chain(id="chain_1", markable_ids=["m1", "m2"])]).chains[0].markable_ids == ["m1", "m2"]
    with pytest.raises(ValidationError, match="not the markables joined by identity pairs"):
        note([identity], [])
    with pytest.raises(ValidationError, match="names antecedent 'm7'"):
        note([identity.model_copy(update={"antecedent_id": "m7"})], [])
    with pytest.raises(ValidationError, match="do not start and end"):
        Markable(
            id="m1",
            start=0,
            end=4,
            text="Pain",
            fragments=[{"start": 0, "end": 3, "text": "Pai"}],
            grammatical_category=None,
            sentence_function=None,
            semantic_class="sign_or_symptom",
        )


def test_broken_annotation_of_an_annotator_fails_by_default_or_is_listed_in_the_card(tmp_path: Path) -> None:
    """Annotators' files are not released: their broken annotations are named on the card and are
    quarantined like the gold's (rejects.jsonl, counted, so they need a max_rejects allowance)."""
    corpus, path, line = broken_corpus(tmp_path, "annotator_a/upmc_rad_01.txt.knowtator.xml", *SPLEEN[1:])
    with pytest.raises(SourceError) as caught:
        run(ReleaseRequest(load_manifest(corpus), tmp_path / "failed"))
    assert (caught.value.path, caught.value.line) == (str(path), line)
    with pytest.raises(GateError, match="max_rejects"):
        run(ReleaseRequest(load_manifest(corpus), tmp_path / "strict", on_error="quarantine"))
    outcome = run(ReleaseRequest(load_manifest(corpus), tmp_path / "out", on_error="quarantine", max_rejects=2))
    card = (outcome.folder / "README.md").read_text()
    assert "Annotators' annotations left out of the agreement" in card
    assert f"annotator_a/{path.name}:{line}: spannedText 'The spleen'" in card
    assert json.loads((outcome.folder / "manifest.json").read_text())["counts"]["rejected_annotations"] == 2
    markable, pair = [json.loads(row) for row in (outcome.folder / "rejects.jsonl").read_text().splitlines()]
    assert markable["kind"] == pair["kind"] == "annotation"
    assert markable["where"] == f"annotator_a/{path.name}:{line}" and f"line {line}" in pair["reason"]


def test_i2b2_concept_off_its_text_is_quarantined_and_the_note_released(tmp_path: Path) -> None:
    """A concept whose position does not exist (and a concept listed twice, read once): the concept, its chain
    membership and its pairs are quarantined; its chain stays whole minus that member."""
    corpus, path, line = broken_corpus(
        tmp_path, "i2b2/concepts/upmc_rad_01.txt.con", 'c="cysts" 4:5 4:5', 'c="cysts" 4:5 4:9'
    )
    with path.open("a", encoding="utf-8") as concepts:
        concepts.write('c="the kidneys" 6:0 6:1||t="anatomical site"\n')
    manifest = load_manifest(corpus)
    sources = resolve_sources(manifest, {"i2b2": corpus / "sample" / "i2b2"})
    ctx = BuildContext(manifest, sources, on_error="quarantine")
    built = {row.record.id: row.record for row in OdieAnaphoraBuilder().generate(ctx) if row.config == "odie_anaphora"}
    assert list(built) == DOCUMENTS
    assert [(r.kind, r.where.split("/")[-1]) for r in ctx.rejects] == [
        ("annotation", f"upmc_rad_01.txt.con:{line}"),
        ("annotation", "upmc_rad_01.txt.chains:1"),
        ("annotation", "upmc_rad_01.txt.pairs:2"),
        ("annotation", "upmc_rad_01.txt.pairs:4"),
    ]
    rad = built["upmc_rad_01"]
    assert len(rad.markables) == 11
    text_of = {m.id: m.text for m in rad.markables}
    assert [[text_of[i] for i in c.markable_ids] for c in rad.chains] == [
        ["three hypodense lesions", "These lesions", "Hepatic cysts"],
        ["the right lobe", "The right lobe"],
    ]
    assert len(rad.pairs) == 3
