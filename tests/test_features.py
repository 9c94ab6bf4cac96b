"""pydantic record models → datasets.Features, and the row codec between them."""

from __future__ import annotations

import enum
from typing import Literal

import pyarrow as pa
import pytest
from datasets import ClassLabel, List, Value
from pydantic import ValidationError

from clinical_corpora.schemas.features import (
    LabelIdError,
    features_for,
    row_decoder,
    row_encoder,
    schema_fingerprint,
)
from clinical_corpora.schemas.spans import Offset, Span, TextRecord
from clinical_corpora.validation.tables import flatten_config


class Modality(enum.Enum):
    XR = "XR"
    CT = "CT"


class Argument(Span):
    role: Literal["Status", "Type"]


class Event(Span):
    type: Literal["Alcohol", "Drug"]
    arguments: list[Argument]


class Note(TextRecord):
    id: str
    text: str
    modality: Modality
    events: list[Event]
    tags: list[str]
    score: float | None = None
    index: Offset = 0


def note() -> Note:
    text = "drinks beer daily"
    return Note(
        id="n1",
        text=text,
        modality=Modality.CT,
        tags=["a"],
        events=[
            Event(
                start=0,
                end=6,
                text="drinks",
                type="Drug",
                arguments=[Argument(start=7, end=11, text="beer", role="Type")],
            )
        ],
    )


def test_features_follow_the_model() -> None:
    features = features_for(Note)
    assert list(features) == ["id", "text", "modality", "modality_name", "events", "tags", "score", "index"]
    assert features["modality"] == ClassLabel(names=["XR", "CT"]) and features["modality_name"] == Value("string")
    assert features["events"] == List(
        {
            "start": Value("int32"),
            "end": Value("int32"),
            "text": Value("string"),
            "type": ClassLabel(names=["Alcohol", "Drug"]),
            "type_name": Value("string"),
            "arguments": List(
                {
                    "start": Value("int32"),
                    "end": Value("int32"),
                    "text": Value("string"),
                    "role": ClassLabel(names=["Status", "Type"]),
                    "role_name": Value("string"),
                }
            ),
        }
    )
    assert features["tags"] == List(Value("string"))
    assert features["score"] == Value("float64") and features["index"] == Value("int32")


def test_unsupported_field_type_is_an_error() -> None:
    class Bad(TextRecord):
        id: str
        text: str
        extra: dict[str, int]

    with pytest.raises(TypeError, match="Bad.extra: no release type"):
        features_for(Bad)


def test_row_codec_round_trips_through_arrow() -> None:
    features = features_for(Note)
    encoded = row_encoder(features)(note().model_dump())
    assert encoded["modality"] == 1 and encoded["events"][0]["arguments"][0]["role"] == 1
    assert encoded["modality_name"] == "CT" and encoded["events"][0]["arguments"][0]["role_name"] == "Type"
    stored = pa.Table.from_pylist([encoded], schema=features.arrow_schema).to_pylist()[0]
    assert Note.model_validate(row_decoder(features)(stored)) == note()


class Tagged(TextRecord):
    id: str
    text: str
    labels: list[Literal["a", "b"]]
    kind: Literal["x", "y"] | None


def test_label_names_stand_beside_lists_of_labels_and_optional_labels() -> None:
    features = features_for(Tagged)
    assert features["labels_name"] == List(Value("string")) and features["kind_name"] == Value("string")
    encoded = row_encoder(features)(Tagged(id="t", text="", labels=["b", "a"], kind=None).model_dump())
    assert (encoded["labels"], encoded["labels_name"], encoded["kind"], encoded["kind_name"]) == (
        [1, 0],
        ["b", "a"],
        None,
        None,
    )
    assert row_decoder(features)(encoded) == {"id": "t", "text": "", "labels": ["b", "a"], "kind": None}


def test_a_label_name_that_drifted_from_its_id_is_an_error() -> None:
    features = features_for(Note)
    stored = row_encoder(features)(note().model_dump())
    stored["events"][0]["type_name"] = "Alcohol"
    with pytest.raises(LabelIdError) as raised:
        row_decoder(features)(stored)
    assert raised.value.field == "events[0].type_name"
    assert "label name 'Alcohol' is not the name of the stored label id ('Drug')" in str(raised.value)


def test_a_field_named_like_a_label_names_field_is_an_error() -> None:
    class Clash(TextRecord):
        id: str
        text: str
        kind: Literal["x"]
        kind_name: str

    with pytest.raises(TypeError, match="Clash.kind: field kind_name is taken"):
        features_for(Clash)


def test_span_text_is_checked_against_the_record_text() -> None:
    with pytest.raises(ValidationError, match="span 7-11 has text 'wine' but the text there is 'beer'"):
        Note(
            id="n1",
            text="drinks beer daily",
            modality="XR",
            tags=[],
            events=[
                Event(
                    start=0,
                    end=6,
                    text="drinks",
                    type="Drug",
                    arguments=[Argument(start=7, end=11, text="wine", role="Type")],
                )
            ],
        )
    with pytest.raises(ValidationError, match="span 6-0 ends before it starts"):
        Note(
            id="n1",
            text="drinks beer daily",
            modality="XR",
            tags=[],
            events=[Event(start=6, end=0, text="", type="Drug", arguments=[])],
        )


def test_fingerprint_changes_with_the_schema() -> None:
    assert schema_fingerprint({"a": features_for(Note)}) == schema_fingerprint({"a": features_for(Note)})
    assert schema_fingerprint({"a": features_for(Note)}) != schema_fingerprint({"a": features_for(Event)})


def test_flattened_tables_for_expectations() -> None:
    features = features_for(Note)
    table = pa.Table.from_pylist([row_encoder(features)(note().model_dump())] * 2, schema=features.arrow_schema)
    tables = flatten_config("notes", table, features, pa.array(["train", "test"]))
    assert sorted(tables) == ["notes", "notes.events", "notes.events.arguments", "notes.tags"]
    notes = tables["notes"].to_pydict()
    assert notes["n_events"] == [1, 1] and notes["modality"] == ["CT", "CT"]
    arguments = tables["notes.events.arguments"].to_pydict()
    assert arguments["role"] == ["Type", "Type"]
    assert arguments["_split"] == ["train", "test"] and arguments["_parent"] == [0, 1]


@pytest.mark.parametrize(
    ("edit", "field", "value"),
    [
        (lambda row: row.update(modality=-1), "modality", -1),  # before: decoded as the last name, CT
        (lambda row: row.update(modality=2), "modality", 2),  # before: IndexError
        (lambda row: row["events"][0]["arguments"][0].update(role=99), "events[0].arguments[0].role", 99),
        (lambda row: row["events"][0].update(type=-2), "events[0].type", -2),
    ],
)
def test_decoding_an_out_of_range_label_id_names_the_field(edit, field: str, value: int) -> None:
    features = features_for(Note)
    stored = row_encoder(features)(note().model_dump())
    edit(stored)
    with pytest.raises(LabelIdError) as raised:
        row_decoder(features)(stored)
    assert raised.value.field == field
    assert str(raised.value).startswith(f"{field}: label id {value} is not one of 0..")
