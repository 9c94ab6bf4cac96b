"""sdoh's BRAT export: every kind of annotation a released note carries is written so that the builder reads
the same record back."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.exporters.brat import write_brat_document
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.sources.brat.folder import brat_documents
from clinical_corpora.builders.sources.brat.standoff import parse_brat, read_brat_document, write_brat
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.corpora.sdoh.builder import note_from_brat
from clinical_corpora.corpora.sdoh.exports import note_annotations
from tests.conftest import SampleRelease

TEXT = "Lives alone. Smokes 1 ppd; no EtOH.\r\nQuit cocaine 2019. Medicaid.\n"
ANN = (
    "T1\tLivingStatus 0 5\tLives\n"
    "T2\tTypeLiving 6 11\talone\n"
    "T3\tStatusTime 0 5\tLives\n"
    "E1\tLivingStatus:T1 Status:T3 Type:T2\n"
    "A1\tTypeLivingVal T2 alone\n"
    "A2\tStatusTimeVal T3 current\n"
    "T4\tTobacco 13 19\tSmokes\n"
    "T5\tStatusTime 13 19\tSmokes\n"
    "T6\tAmount 20 25\t1 ppd\n"
    "E2\tTobacco:T4 Status:T5 Amount:T6\n"
    "A3\tStatusTimeVal T5 current\n"
    "T7\tDrug 37 41;42 49\tQuit cocaine\n"
    "T8\tStatusTime 37 41\tQuit\n"
    "E3\tDrug:T7 Status:T8 Type2:T9\n"
    "T9\tType 42 49\tcocaine\n"
    "A4\tStatusTimeVal T8 past\n"
    "T10\tAlcohol 30 34\tEtOH\n"
    "T11\tInsurance 56 64\tMedicaid\n"
    "R1\tOverlap Arg1:T9 Arg2:T7\n"
    "N1\tReference T9 UMLS:C0009170\tCocaine\n"
    "#1\tAnnotatorNotes T10\tno event: negated\n"
    "*\tEquiv T6 T4\n"
)


def _note(doc_id: str, text: str, ann: str | None) -> dict:
    doc = parse_brat(ann, text) if ann is not None else parse_brat("", text)
    return note_from_brat(doc_id, text, doc, Path(f"{doc_id}.ann"), has_ann_file=ann is not None).model_dump()


def test_every_annotation_kind_reads_back_as_the_same_note(tmp_path: Path) -> None:
    note = _note("train/uw/0001", TEXT, ANN)
    assert note["relations"] and note["normalizations"] and note["notes"] and note["equivalences"]
    assert any(event["trigger"]["fragments"] for event in note["events"]) and note["unused_textbounds"]
    write_brat_document(tmp_path, note["id"], note["text"], note_annotations(note))
    [document] = brat_documents(tmp_path)
    assert document.id == note["id"]
    text, doc = read_brat_document(document)
    assert text == TEXT  # CR LF kept: offsets count it
    again = note_from_brat(note["id"], text, doc, tmp_path / "x.ann").model_dump()
    assert again == note
    assert "A4\tStatusTimeVal T8 past" in write_brat(note_annotations(note))  # values as <Type>Val attributes


def test_a_note_without_ann_file_is_written_as_its_text_alone(tmp_path: Path) -> None:
    note = _note("dev/mimic/0002", "Denies tobacco.\n", None)
    assert note_annotations(note) is None
    write_brat_document(tmp_path, note["id"], note["text"], note_annotations(note))
    assert sorted(path.name for path in (tmp_path / "dev" / "mimic").iterdir()) == ["0002.txt"]


def test_annotations_on_a_note_said_to_have_no_ann_file_are_an_error() -> None:
    note = _note("dev/mimic/0003", TEXT, ANN)
    note["has_ann_file"] = False
    with pytest.raises(ClincorpError, match="dev/mimic/0003: has annotations but no .ann file"):
        note_annotations(note)


def test_empty_ann_pairs_every_text_for_the_official_scorer(tmp_path: Path) -> None:
    shac = tmp_path / "shac"
    shutil.copytree(find_corpus("sdoh").folder / "sample" / "shac", shac)
    (shac / "dev" / "uw" / "0401.ann").unlink()
    release = run(ReleaseRequest(find_corpus("sdoh"), tmp_path / "release", sources={"shac": shac})).folder
    plain, paired = tmp_path / "plain", tmp_path / "paired"
    assert main(["export", "brat", str(release), "--out", str(plain)]) == 0
    assert main(["export", "brat", str(release), "--out", str(paired), "--empty-ann"]) == 0
    assert not (plain / "dev" / "uw" / "0401.ann").exists()
    assert (paired / "dev" / "uw" / "0401.ann").read_text(encoding="utf-8") == ""
    assert sorted(p.stem for p in paired.rglob("*.ann")) == sorted(p.stem for p in paired.rglob("*.txt"))


OFFICIAL_LINE_STARTS = re.compile(r"#|T\d+|E\d+\t|R\d+\t|A\d+\t")
"""The line kinds the official n2c2 2022 scorer (Lybarger's brat_scoring) accepts in an .ann; it stops on others."""


def test_export_of_the_sample_keeps_to_the_official_scorers_reading_rules(
    sample_release: SampleRelease, tmp_path: Path
) -> None:
    exported = tmp_path / "brat"
    assert main(["export", "brat", str(sample_release("sdoh").folder), "--out", str(exported), "--empty-ann"]) == 0
    anns, texts = sorted(exported.rglob("*.ann")), sorted(exported.rglob("*.txt"))
    assert [p.with_suffix("") for p in anns] == [p.with_suffix("") for p in texts]  # paired one to one
    for ann in anns:
        text = ann.with_suffix(".txt").read_text(encoding="utf-8")
        for line in ann.read_text(encoding="utf-8").splitlines():
            assert OFFICIAL_LINE_STARTS.match(line), f"{ann}: {line!r}"
            if line.startswith("A"):
                assert len(line.split("\t")[1].split()) == 3  # name, text-bound, value
            if line.startswith("T"):
                identifier, offsets, span_text = line.split("\t")
                fragments = [tuple(map(int, f.split())) for f in offsets.split(" ", 1)[1].split(";")]
                start = fragments[0][0]
                assert all(span_text[end - start].isspace() for _, end in fragments[:-1])  # joined by a space
                assert span_text.replace(" ", "") == "".join(text[s:e] for s, e in fragments).replace(" ", "")
