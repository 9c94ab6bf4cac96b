"""BigBio-schema configs: our Features are BigBio's ``kb`` and ``qa`` schemas, and every released
``*_bigbio_kb`` / ``*_bigbio_qa`` config passes the checks BigBio's schema test (tests/test_bigbio_hub.py
of the BigBio repository) makes on a loaded dataset."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datasets
import pytest
from datasets import Features, Sequence, Value
from pydantic import ValidationError

from clinical_corpora.builders.contract.base import load_builder_class
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.plugins import all_corpora, find_corpus
from clinical_corpora.corpora.odie_anaphora.bigbio import kb_document as odie_kb_document
from clinical_corpora.corpora.odie_anaphora.records import OdieDocument
from clinical_corpora.schemas.bigbio import KbDocument, QaRecord, laid_out
from clinical_corpora.schemas.features import features_for
from tests.conftest import SampleRelease

# BigBio's schemas as its bigbio/utils/schemas/kb.py and qa.py define them (written out, not imported).
BIGBIO_KB = Features(
    {
        "id": Value("string"),
        "document_id": Value("string"),
        "passages": [
            {
                "id": Value("string"),
                "type": Value("string"),
                "text": Sequence(Value("string")),
                "offsets": Sequence([Value("int32")]),
            }
        ],
        "entities": [
            {
                "id": Value("string"),
                "type": Value("string"),
                "text": Sequence(Value("string")),
                "offsets": Sequence([Value("int32")]),
                "normalized": [{"db_name": Value("string"), "db_id": Value("string")}],
            }
        ],
        "events": [
            {
                "id": Value("string"),
                "type": Value("string"),
                "trigger": {"text": Sequence(Value("string")), "offsets": Sequence([Value("int32")])},
                "arguments": [{"role": Value("string"), "ref_id": Value("string")}],
            }
        ],
        "coreferences": [{"id": Value("string"), "entity_ids": Sequence(Value("string"))}],
        "relations": [
            {
                "id": Value("string"),
                "type": Value("string"),
                "arg1_id": Value("string"),
                "arg2_id": Value("string"),
                "normalized": [{"db_name": Value("string"), "db_id": Value("string")}],
            }
        ],
    }
)
BIGBIO_QA = Features(
    {
        "id": Value("string"),
        "question_id": Value("string"),
        "document_id": Value("string"),
        "question": Value("string"),
        "type": Value("string"),
        "choices": [Value("string")],
        "context": Value("string"),
        "answer": Sequence(Value("string")),
    }
)
SCHEMAS = {"kb": BIGBIO_KB, "qa": BIGBIO_QA}

BIGBIO_CONFIGS = [
    (manifest.name, config)
    for manifest in all_corpora()
    for config in manifest.configs
    if config.rsplit("_", 2)[-2:-1] == ["bigbio"]
]


def test_the_models_derive_bigbio_features_field_for_field() -> None:
    assert features_for(KbDocument) == BIGBIO_KB and list(features_for(KbDocument)) == list(BIGBIO_KB)
    assert features_for(QaRecord) == BIGBIO_QA and list(features_for(QaRecord)) == list(BIGBIO_QA)


def test_each_corpus_has_its_bigbio_config() -> None:
    assert sorted(config for _, config in BIGBIO_CONFIGS) == [
        "clicr_bigbio_qa",
        "odie_anaphora_bigbio_kb",
        "rad_coref_bigbio_kb",
        "sdoh_bigbio_kb",
        "snomed_el_bigbio_kb",
    ]


@pytest.fixture(scope="module")
def loaded(sample_release: SampleRelease, tmp_path_factory: pytest.TempPathFactory) -> Any:
    cache = tmp_path_factory.mktemp("hf")

    def load(corpus: str, config: str) -> datasets.DatasetDict:
        return datasets.load_dataset(str(sample_release(corpus).folder), config, cache_dir=str(cache))

    return load


@pytest.mark.parametrize(("corpus", "config"), BIGBIO_CONFIGS)
def test_bigbio_config_loads_with_bigbio_features(
    corpus: str, config: str, loaded: Any, sample_release: SampleRelease
) -> None:
    dataset = loaded(corpus, config)
    view = ReleaseView(sample_release(corpus).folder)
    held = [split for split in find_corpus(corpus).configs[config].splits if view.split_rows(config, split)]
    assert sorted(dataset) == sorted(held)  # a declared split without rows (odie_anaphora's test) does not load
    for split in dataset.values():
        assert split.info.features == SCHEMAS[config.rsplit("_", 1)[-1]]
    assert sum(split.num_rows for split in dataset.values()) > 0


def example_text(example: dict[str, Any]) -> str:
    """The document text BigBio's schema test checks offsets against."""
    return " ".join(text for passage in example["passages"] for text in passage["text"])


def offset_mismatches(example: dict[str, Any], texts: list[str], offsets: list[list[int]]) -> list[str]:
    """As BigBio's ``_check_offsets``: one text per offset pair, each the slice its pair names."""
    if len(texts) != len(offsets) or any(len(pair) != 2 for pair in offsets):
        return [f"{texts!r} / {offsets!r}: not one text per [start, end] pair"]
    document = example_text(example)
    return [
        f"{text!r} != {document[s:e]!r}" for text, (s, e) in zip(texts, offsets, strict=True) if document[s:e] != text
    ]


def collect_ids(value: Any, found: list[str]) -> list[str]:
    """Every ``id`` at any depth, as BigBio's ``_assert_ids_globally_unique`` walks an example."""
    if isinstance(value, dict):
        for key, child in value.items():
            if isinstance(child, dict | list):
                collect_ids(child, found)
            elif key == "id":
                found.append(child)
    elif isinstance(value, list):
        for item in value:
            collect_ids(item, found)
    return found


KB_CONFIGS = [(corpus, config) for corpus, config in BIGBIO_CONFIGS if config.endswith("_kb")]


@pytest.mark.parametrize(("corpus", "config"), KB_CONFIGS)
def test_kb_config_passes_bigbio_schema_checks(corpus: str, config: str, loaded: Any) -> None:
    for split in loaded(corpus, config).values():
        ids: list[str] = []
        for example in split:
            collect_ids(example, ids)
            problems = []
            for passage in example["passages"]:
                assert len(passage["text"]) == len(passage["offsets"]) == 1, passage["id"]
                problems += offset_mismatches(example, passage["text"], passage["offsets"])
            for entity in example["entities"]:
                problems += offset_mismatches(example, entity["text"], entity["offsets"])
            for event in example["events"]:
                problems += offset_mismatches(example, event["trigger"]["text"], event["trigger"]["offsets"])
            assert problems == [], example["id"]
            entities = {entity["id"] for entity in example["entities"]}
            referable = entities | {event["id"] for event in example["events"]}
            assert {m for c in example["coreferences"] for m in c["entity_ids"]} <= entities
            assert {a["ref_id"] for e in example["events"] for a in e["arguments"]} <= referable
            assert {r[arg] for r in example["relations"] for arg in ("arg1_id", "arg2_id")} <= referable
        assert len(ids) == len(set(ids)), f"{config}: ids repeat within a split"


def test_qa_config_passes_bigbio_schema_checks(loaded: Any, sample_release: SampleRelease) -> None:
    """Not multiple choice, so no choices; every query of ``clicr`` is there with all its answers."""
    queries = {
        row["id"]: row for _, row in load_rows(sample_release("clicr").folder, "clicr")
    }  # the source config, decoded
    seen = 0
    for split in loaded("clicr", "clicr_bigbio_qa").values():
        for example in split:
            query = queries[example["id"]]
            assert example["choices"] == [] and example["type"] not in ("multiple_choice", "yesno")
            assert example["question"] == query["query"] and example["context"] == query["context"]
            assert example["answer"] == [answer["text"] for answer in query["answers"]]
            seen += 1
    assert seen == len(queries)


def load_rows(release: Path, config: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The decoded rows of a config of a release (label names, no label-name fields)."""
    return ReleaseView(release).rows(config)


def pieces(span: dict[str, Any]) -> list[str]:
    """The texts of a span's fragments (a discontinuous span's), else of the span."""
    return [fragment["text"] for fragment in span["fragments"]] or [span["text"]]


def test_sdoh_kb_keeps_every_event_text_bound_and_subtype(sample_release: SampleRelease, loaded: Any) -> None:
    notes = {row["id"]: row for _, row in load_rows(sample_release("sdoh").folder, "sdoh")}
    for split in loaded("sdoh", "sdoh_bigbio_kb").values():
        for example in split:
            note = notes[example["id"]]
            assert [(e["type"], e["trigger"]["text"]) for e in example["events"]] == [
                (e["type"], pieces(e["trigger"])) for e in note["events"]
            ]
            values = {
                entity["id"].rsplit("_", 1)[1]: [(n["db_name"], n["db_id"]) for n in entity["normalized"]]
                for entity in example["entities"]
            }
            for event in note["events"]:
                for argument in event["arguments"]:
                    expected = [] if argument["subtype"] == "N/A" else [(argument["type"] + "Val", argument["subtype"])]
                    assert values[argument["id"]][: len(expected)] == expected
            bounds = {e["trigger"]["id"] for e in note["events"]} | {
                a["id"] for e in note["events"] for a in e["arguments"]
            }
            bounds |= {bound["id"] for bound in note["unused_textbounds"]}
            assert set(values) == bounds


def test_rad_coref_kb_offsets_move_each_mention_into_its_report_passage(
    sample_release: SampleRelease, loaded: Any
) -> None:
    patients = {row["patient_id"]: row for _, row in load_rows(sample_release("rad_coref").folder, "rad_coref")}
    [train] = loaded("rad_coref", "rad_coref_bigbio_kb").values()
    multi_report = 0  # the layout matters only for a patient with several reports
    for example in train:
        patient = patients[example["id"]]
        multi_report += len(patient["reports"]) > 1
        assert [p["text"] for p in example["passages"]] == [[report["text"]] for report in patient["reports"]]
        for entity, mention in zip(example["entities"], patient["mentions"], strict=True):
            passage = example["passages"][mention["report_index"]]
            start = passage["offsets"][0][0]
            assert entity["offsets"] == [[start + mention["start"], start + mention["end"]]]
        chains = [len(chain["mention_ids"]) for chain in patient["chains"] if len(chain["mention_ids"]) > 1]
        assert [len(c["entity_ids"]) for c in example["coreferences"]] == chains
    assert multi_report > 0


def kb(**changes: Any) -> dict[str, Any]:
    passages, _ = laid_out([("d_p1", "note", "Drinks beer."), ("d_p2", "note", "Quit.")])
    document = {
        "id": "d",
        "document_id": "d",
        "passages": [passage.model_dump() for passage in passages],
        "entities": [
            {"id": "d_T1", "type": "Drug", "text": ["beer"], "offsets": [[7, 11]], "normalized": []},
            {"id": "d_T2", "type": "Time", "text": ["Quit"], "offsets": [[13, 17]], "normalized": []},
        ],
        "events": [],
        "coreferences": [{"id": "d_C1", "entity_ids": ["d_T1", "d_T2"]}],
        "relations": [],
    }
    document.update(changes)
    return document


def test_a_valid_kb_document_with_two_passages() -> None:
    assert KbDocument.model_validate(kb()).document_text == "Drinks beer. Quit."


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        (
            {"entities": [{"id": "d_T1", "type": "Drug", "text": ["wine"], "offsets": [[7, 11]], "normalized": []}]},
            "entity d_T1: span 7-11 has text 'wine' but the text there is 'beer'",
        ),
        (
            {
                "entities": [
                    {"id": "d_T1", "type": "Drug", "text": ["beer"], "offsets": [[7, 11, 12]], "normalized": []}
                ]
            },
            "at most 2 items",
        ),
        (
            {"entities": [{"id": "d_T1", "type": "Drug", "text": [], "offsets": [[7, 11]], "normalized": []}]},
            "entity d_T1: 0 texts for 1 offset pairs",
        ),
        ({"coreferences": [{"id": "d_C1", "entity_ids": ["d_T9"]}]}, "coreference d_C1 refers to 'd_T9'"),
        ({"coreferences": [{"id": "d_T1", "entity_ids": ["d_T1"]}]}, "duplicate item id 'd_T1'"),
        (
            {"relations": [{"id": "d_R1", "type": "x", "arg1_id": "d_T1", "arg2_id": "d_E1", "normalized": []}]},
            "relation d_R1 refers to 'd_E1'",
        ),
    ],
)
def test_kb_document_rejects_what_bigbio_schema_test_flags(changes: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        KbDocument.model_validate(kb(**changes))


def test_kb_document_rejects_passages_not_laid_out_as_bigbio_joins_them() -> None:
    """A second passage ``Drinks`` placed over the first one's ``Drinks``: its text matches, its place does not."""
    document = kb(entities=[], coreferences=[])
    document["passages"][1].update(text=["Drinks"], offsets=[[0, 6]])
    with pytest.raises(ValidationError, match="passage d_p2 does not start one separator after passage d_p1"):
        KbDocument.model_validate(document)


def test_builders_declare_the_bigbio_models() -> None:
    for corpus, config in BIGBIO_CONFIGS:
        model = load_builder_class(find_corpus(corpus).builder).CONFIGS[config]
        assert model is (QaRecord if config.endswith("_qa") else KbDocument)


@pytest.mark.parametrize(("corpus", "config"), BIGBIO_CONFIGS)
def test_bigbio_config_holds_one_row_per_record_of_the_corpus_config(
    corpus: str, config: str, sample_release: SampleRelease, loaded: Any
) -> None:
    """Same splits, same record ids: the BigBio view of each record of the corpus's main config."""
    model = load_builder_class(find_corpus(corpus).builder).CONFIGS[corpus]
    source = {(split, str(row[model.id_field])) for split, row in load_rows(sample_release(corpus).folder, corpus)}
    bigbio = {(split, example["id"]) for split, rows in loaded(corpus, config).items() for example in rows}
    assert bigbio == source


def test_snomed_el_kb_links_each_span_to_its_concept(sample_release: SampleRelease, loaded: Any) -> None:
    notes = {row["note_id"]: row for _, row in load_rows(sample_release("snomed_el").folder, "snomed_el")}
    for split in loaded("snomed_el", "snomed_el_bigbio_kb").values():
        for example in split:
            assert [(e["offsets"], e["type"], e["normalized"]) for e in example["entities"]] == [
                ([[a["start"], a["end"]]], a["hierarchy"], [{"db_name": "SNOMEDCT", "db_id": str(a["concept_id"])}])
                for a in notes[example["id"]]["annotations"]
            ]


def test_odie_kb_keeps_markables_pairs_and_chains(sample_release: SampleRelease, loaded: Any) -> None:
    documents = {row["id"]: row for _, row in load_rows(sample_release("odie_anaphora").folder, "odie_anaphora")}
    [train] = loaded("odie_anaphora", "odie_anaphora_bigbio_kb").values()
    for example in train:
        document = documents[example["id"]]
        for entity, markable in zip(example["entities"], document["markables"], strict=True):
            assert entity["text"] == [fragment["text"] for fragment in markable["fragments"]]
            assert entity["type"] == markable["semantic_class"]
        prefix = f"{document['id']}_"
        assert [(r["type"], r["arg1_id"], r["arg2_id"]) for r in example["relations"]] == [
            (p["relation"], prefix + p["anaphor_id"], prefix + p["antecedent_id"]) for p in document["pairs"]
        ]
        assert [c["entity_ids"] for c in example["coreferences"]] == [
            [prefix + m for m in chain["markable_ids"]] for chain in document["chains"]
        ]


def test_odie_kb_gives_a_discontinuous_markable_one_offset_pair_per_fragment() -> None:
    text = "CT of the abdomen and pelvis"
    fragments = [{"start": 0, "end": 2, "text": "CT"}, {"start": 22, "end": 28, "text": "pelvis"}]
    markable = {"id": "M1", "start": 0, "end": 28, "text": text, "fragments": fragments}
    markable |= {"grammatical_category": None, "sentence_function": None, "semantic_class": "procedure"}
    document = OdieDocument.model_validate(
        {"id": "mayo_cc_9", "institution": "mayo", "note_type": "cc", "text": text, "markables": [markable]}
        | {"pairs": [], "chains": []}
    )
    [entity] = odie_kb_document(document).entities
    assert (entity.text, entity.offsets) == (["CT", "pelvis"], [[0, 2], [22, 28]])
