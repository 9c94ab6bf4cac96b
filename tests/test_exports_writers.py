"""The raw-format writers behind the exporters, read back by the readers the builders use."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinical_corpora.builders.exporters.challenge_csv import write_challenge_notes, write_span_annotations
from clinical_corpora.builders.exporters.knowtator import write_knowtator_file
from clinical_corpora.builders.exporters.mimic_notes import NoteEventRow, write_noteevents
from clinical_corpora.builders.sources.i2b2.coref import read_i2b2_document, write_i2b2_document
from clinical_corpora.builders.sources.knowtator.document import KnowtatorDocument, Markable, Pair
from clinical_corpora.builders.sources.knowtator.xml import read_knowtator_file
from clinical_corpora.builders.sources.mimic.notes import iter_noteevents, iter_notes, read_span_annotations
from clinical_corpora.core.annotations import SpanAnnotation
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.corpora.odie_anaphora.exports import TokenEdges, note_document

AWKWARD = 'He said "no", then left,\r\nline two\n\nend '


def test_challenge_csv_quotes_texts_and_keeps_line_endings(tmp_path: Path) -> None:
    notes = tmp_path / "notes.csv"
    assert write_challenge_notes(notes, [("n-1", AWKWARD), ("n-2", "plain")]) == 2
    assert [(n.note_id, n.text) for n in iter_notes(notes)] == [("n-1", AWKWARD), ("n-2", "plain")]
    spans = [SpanAnnotation("n-1", 0, 2, 22298006), SpanAnnotation("n-2", 1, 5, 38341003)]
    annotations = tmp_path / "annotations.csv"
    write_span_annotations(annotations, spans)
    assert [(a.note_id, a.start, a.end, a.concept_id) for a in read_span_annotations(annotations)] == [
        (a.note_id, a.start, a.end, a.concept_id) for a in spans
    ]


def test_noteevents_are_read_back_and_the_same_rows_give_the_same_bytes(tmp_path: Path) -> None:
    rows = [
        NoteEventRow(11, 7, "2151-03-02 04:12:00", "Radiology", "CHEST (PORTABLE AP)", AWKWARD),
        NoteEventRow(12, 7, "2151-03-03 09:00:00", "Radiology", "CT HEAD", "No bleed."),
    ]
    first, second = tmp_path / "a" / "NOTEEVENTS.csv.gz", tmp_path / "b" / "NOTEEVENTS.csv.gz"
    write_noteevents(first, rows)
    write_noteevents(second, rows)
    assert first.read_bytes() == second.read_bytes()
    read = list(iter_noteevents(first))
    assert [(n.row_id, n.subject_id, n.category, n.description, n.text) for n in read] == [
        (r.row_id, r.subject_id, r.category, r.description, r.text) for r in rows
    ]
    assert str(read[0].charttime) == "2151-03-02 04:12:00" and read[0].hadm_id is None


def test_knowtator_file_reads_back_with_discontinuous_markables_and_missing_attributes(tmp_path: Path) -> None:
    text = "CT of the abdomen and pelvis. It was normal.\n"
    document = KnowtatorDocument(
        doc_id="upmc_rad_09",
        text=text,
        annotators=("gold",),
        markables=(
            Markable("m1", ((0, 2), (22, 28)), "CT ... pelvis", "procedure", "bare_np", None),
            Markable("m2", ((30, 32),), "It", "procedure", None, None),
        ),
        pairs=(Pair("p1", "m2", "m1", "identity", None),),
    )
    (tmp_path / "text").mkdir()
    (tmp_path / "text" / "upmc_rad_09.txt").write_text(text, encoding="utf-8")
    path = write_knowtator_file(tmp_path / "gold", document, "gold")
    assert path.name == "upmc_rad_09.txt.knowtator.xml"
    read = read_knowtator_file(path, tmp_path / "text")
    assert not read.problems
    assert (read.markables, read.pairs, read.annotators) == (document.markables, document.pairs, ("gold",))


def test_i2b2_concepts_are_whole_tokens() -> None:
    edges = TokenEdges("Pain in the pelvis.\nIt is new.")
    assert edges.widen(12, 18) == (12, 19)  # "pelvis" of "pelvis." becomes the whole token
    assert edges.widen(0, 4) == (0, 4)
    assert edges.widen(3, 6) == (0, 7)  # "n in" touches "Pain" and "in"


def _odie_note(markables: list[tuple[str, int, int, str]]) -> dict:
    text = "Pain in the pelvis.\nIt is new."
    return {
        "id": "upmc_er_01",
        "text": text,
        "markables": [
            {"id": key, "start": start, "end": end, "text": text[start:end], "semantic_class": semantic_class}
            for key, start, end, semantic_class in markables
        ],
        "pairs": [{"id": "p", "anaphor_id": "b", "antecedent_id": "a", "relation": "identity", "bagga_class": None}],
        "chains": [{"id": "chain_1", "markable_ids": ["a", "b"]}],
    }


def test_i2b2_document_of_a_note_reads_back(tmp_path: Path) -> None:
    note = _odie_note([("a", 0, 4, "sign_or_symptom"), ("b", 20, 22, "sign_or_symptom")])
    write_i2b2_document(tmp_path, note_document(note))
    read = read_i2b2_document(tmp_path, "upmc_er_01")
    assert [(c.start, c.end, c.type) for c in read.concepts] == [(0, 4, "sign or symptom"), (20, 22, "sign or symptom")]
    assert [[(c.start, c.end) for c in chain.concepts] for chain in read.chains] == [[(0, 4), (20, 22)]]
    assert [((p.anaphor.start, p.antecedent.start)) for p in read.pairs] == [(20, 0)]


def test_i2b2_cannot_hold_two_classes_on_the_same_tokens() -> None:
    note = _odie_note([("a", 12, 18, "anatomical_site"), ("b", 12, 19, "disease_or_syndrome")])
    with pytest.raises(ClincorpError, match="markables a and b both cover the tokens"):
        note_document(note)
