"""``clincorp baseline`` for snomed_el (dictionary longest match) and sdoh (our trigger and status-cue rules)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.sources.brat.annotations import Attribute, Event
from clinical_corpora.core.results import read_record
from clinical_corpora.corpora.sdoh.baselines import note_document
from clinical_corpora.corpora.snomed_el.baselines import dictionary, longest_matches
from tests.conftest import SampleVariant

CONCEPTS = [
    {"concept_id": 300, "fsn": "Chest pain (finding)", "synonyms": ["Chest pain", "Pain in chest"]},
    {"concept_id": 200, "fsn": "Pain (finding)", "synonyms": ["Pain", "Chest pain"]},
    {"concept_id": 100, "fsn": "Chest (body structure)", "synonyms": ["Thorax"]},
]


def test_dictionary_links_the_longest_term_one_concept_per_span() -> None:
    terms = dictionary(CONCEPTS)
    assert terms[("chest", "pain")] == 300  # its FSN's concept, though 200 (smaller) lists it as a synonym
    assert terms[("pain",)] == 200 and terms[("chest",)] == 100 and terms[("pain", "in", "chest")] == 300
    text = "Chest pain, then pain in chest; thorax clear."
    assert list(longest_matches(text, terms)) == [(0, 10, 300), (17, 30, 300), (32, 38, 100)]


def test_snomed_dictionary_predictions_are_terms_of_their_concepts(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_variant("snomed_el", "full")
    assert main(["baseline", "snomed_el", str(release), "--name", "dictionary", "--out", str(tmp_path)]) == 0
    rows = list(csv.DictReader((tmp_path / "test.csv").open()))
    assert rows and set(rows[0]) == {"note_id", "start", "end", "concept_id"}
    argv = ["score", "snomed", str(release), str(tmp_path / "test.csv"), "--split", "test"]
    record = tmp_path / "record.json"
    assert main([*argv, "--out", str(tmp_path / "s.json"), "--record", str(record), "--system", "dictionary"]) == 0
    scores = json.loads((tmp_path / "s.json").read_text())
    assert read_record(record).metrics["macro_char_iou"] == pytest.approx(scores["macro_char_iou"])
    assert 0 < scores["macro_char_iou"] <= 1


NOTE = "Lives with her husband. Smoked 1 ppd, quit 2010. Denies illicit drug use. Works as a nurse."


def test_sdoh_rules_take_the_nearest_status_cue_of_the_sentence() -> None:
    document = note_document(NOTE)
    bounds = {bound.id: (bound.type, bound.text) for bound in document.textbounds}
    events = [
        (event.type, bounds[event.trigger][1], [bounds[a][1] for _, a in event.arguments]) for event in document.events
    ]
    assert events == [
        ("LivingStatus", "Lives", ["Lives", "husband"]),  # no time cue: current, on the trigger
        ("Tobacco", "Smoked", ["quit"]),
        ("Drug", "illicit", ["Denies"]),  # one Drug event for "illicit drug"
        ("Employment", "Works", ["Works"]),
    ]
    values = [(bounds[attribute.target][0], attribute.value) for attribute in document.attributes]
    assert values == [
        ("StatusTime", "current"),
        ("TypeLiving", "with_family"),
        ("StatusTime", "past"),
        ("StatusTime", "none"),
        ("StatusEmploy", "employed"),
    ]
    assert all(isinstance(a, Attribute) for a in document.attributes)
    assert all(isinstance(e, Event) for e in document.events)


def test_sdoh_rules_write_every_note_and_score_with_a_record(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_variant("sdoh", "full")
    assert main(["baseline", "sdoh", str(release), "--out", str(tmp_path / "pred")]) == 0
    assert main(["export", "brat", str(release), "--out", str(tmp_path / "gold")]) == 0
    gold = sorted(path.relative_to(tmp_path / "gold") for path in (tmp_path / "gold").rglob("*.txt"))
    assert gold == sorted(path.relative_to(tmp_path / "pred") for path in (tmp_path / "pred").rglob("*.txt"))
    record = tmp_path / "record.json"
    argv = ["score", "sdoh", str(release), str(tmp_path / "pred" / "test"), "--split", "test"]
    assert main([*argv, "--out", str(tmp_path / "s.csv"), "--record", str(record), "--system", "rules"]) == 0
    overall = next(csv.DictReader((tmp_path / "s.csv").open()))
    metrics = read_record(record).metrics
    assert metrics["tp"] == float(overall["TP"]) and metrics["np"] == float(overall["NP"]) > 0
