"""``clincorp export conll2012``: a release's chains as CoNLL-2012 documents the scorers read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.exporters.conll2012 import ChainLayout, record_document
from clinical_corpora.builders.sources.conll2012 import TokenSpan, iter_conll2012
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.corpora.rad_coref.exports import PATIENT_CHAINS
from tests.conftest import SampleRelease


def patient(chains: list[list[str]]) -> dict:
    reports = [{"text": "Small left effusion."}, {"text": "The effusion is stable. No pneumothorax."}]
    mentions = [
        {"id": "m1", "report_index": 0, "start": 6, "end": 19, "text": "left effusion"},
        {"id": "m2", "report_index": 1, "start": 4, "end": 12, "text": "effusion"},
        {"id": "m3", "report_index": 1, "start": 27, "end": 39, "text": "pneumothorax"},
    ]
    return {
        "patient_id": "p1",
        "reports": reports,
        "mentions": mentions,
        "chains": [{"id": f"c{n}", "mention_ids": ids} for n, ids in enumerate(chains)],
    }


def test_reports_follow_each_other_and_unchained_mentions_are_singletons() -> None:
    document = record_document(patient([["m1", "m2"]]), PATIENT_CHAINS, singletons=True)
    # tokens: Small left effusion . | The effusion is stable . | No pneumothorax .
    assert document.sentences == (
        ("Small", "left", "effusion", "."),
        ("The", "effusion", "is", "stable", "."),
        ("No", "pneumothorax", "."),
    )
    assert set(document.chains) == {frozenset({TokenSpan(1, 3), TokenSpan(5, 6)}), frozenset({TokenSpan(10, 11)})}
    without = record_document(patient([["m1", "m2"]]), PATIENT_CHAINS, singletons=False)
    assert without.chains == (frozenset({TokenSpan(1, 3), TokenSpan(5, 6)}),)


def test_note_level_records_with_other_field_names() -> None:
    note = {
        "id": "note_7",
        "text": "CT of the pelvis. It was normal.",
        "markables": [
            {"id": "a", "start": 0, "end": 16, "text": "CT of the pelvis"},
            {"id": "b", "start": 18, "end": 20, "text": "It"},
        ],
        "chains": [{"id": "c1", "markable_ids": ["a", "b"]}],
    }
    document = record_document(note, ChainLayout("notes", "id", "markables", "markable_ids"), singletons=True)
    assert document.name == "note_7"
    assert document.chains == (frozenset({TokenSpan(0, 4), TokenSpan(5, 6)}),)


def test_two_chains_on_the_same_tokens_cannot_be_written() -> None:
    record = patient([["m1"], ["m2"], ["m3"]])
    record["mentions"][2].update(report_index=1, start=4, end=8, text="effu")
    with pytest.raises(ClincorpError, match="two chains have a mention on tokens 5-6"):
        record_document(record, PATIENT_CHAINS, singletons=True)


@pytest.fixture(scope="module")
def exported(sample_release: SampleRelease, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("export")
    release = sample_release("rad_coref").folder
    assert main(["export", "conll2012", str(release), "--out", str(root / "conll")]) == 0
    return release, root / "conll" / "train.conll"


def test_release_exports_one_document_per_patient(exported: tuple[Path, Path]) -> None:
    _, path = exported
    documents = {document.name: document for document in iter_conll2012(path)}
    assert sorted(documents) == ["91234", "92871", "93310"]
    assert [len(documents[name].chains) for name in sorted(documents)] == [18, 11, 7]
    assert [sum(map(len, documents[name].chains)) for name in sorted(documents)] == [32, 23, 14]
    words = [word for sentence in documents["91234"].sentences for word in sentence]
    chain_words = {
        tuple(sorted(" ".join(words[s.start : s.end]) for s in chain)) for chain in documents["91234"].chains
    }
    assert ("ETT", "endotracheal tube") in chain_words  # the re-inserted tube's chain
    assert ("Free air", "free intraabdominal air") in chain_words


def test_exported_key_scores_itself_perfectly(exported: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, path = exported
    capsys.readouterr()
    assert main(["score", "coref", str(path), str(path), "--metrics", "muc", "blanc"]) == 0
    assert capsys.readouterr().out.count("100.00") == 7


def test_format_the_corpus_does_not_register_is_refused(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release, _ = exported
    assert main(["export", "clicr-json", str(release), "--out", str(tmp_path)]) == 1
    assert (
        "no export format 'clicr-json' for the rad_coref corpus: its formats are brat, conll2012"
        in capsys.readouterr().err
    )
