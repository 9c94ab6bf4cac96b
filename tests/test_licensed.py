"""The licensed-text and offset markers, recipes and the leak measure, on small inputs checked against naive
versions."""

from __future__ import annotations

from typing import Annotated, Literal
from unittest.mock import patch

import numpy as np
import pytest
from datasets import List, Value
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from clinical_corpora.builders.contract.base import make_builder
from clinical_corpora.builders.plugins import all_corpora
from clinical_corpora.builders.text_free.recipes import MIN_SLICE, recipe, restore
from clinical_corpora.corpora.rad_coref.records import MentionPair, Patient
from clinical_corpora.schemas.bigbio import KbDocument, OffsetPair
from clinical_corpora.schemas.bounded import Identifier, unbounded_strings
from clinical_corpora.schemas.features import features_for
from clinical_corpora.schemas.licensed import (
    LITERAL,
    SEGMENT,
    SOURCE_DOCUMENTS,
    LicensedText,
    OffsetFields,
    OffsetOf,
    licensed_paths,
    licensed_tree,
    offset_fields,
    text_free_features,
)
from clinical_corpora.schemas.spans import Offset, Span
from clinical_corpora.validation import leak
from clinical_corpora.validation.leak import SEED, ReleaseText, longest_shared_run


class Inner(BaseModel):
    id: str
    spans: list[Span]


class Outer(BaseModel):
    id: str
    title: LicensedText | None
    names: list[LicensedText]
    inner: Inner
    count: int


class Nested(BaseModel):
    extra: Inner | None
    nested: list[list[Inner]]


def test_licensed_paths_follow_optionals_lists_and_nested_models() -> None:
    assert licensed_paths(Outer) == ["title", "names[]", "inner.spans[].text"]


SPAN = OffsetFields("text", start="start", end="end")


def test_offset_fields_of_the_real_models_pair_each_string_with_its_marked_offsets() -> None:
    """A span's ``start``/``end`` are its text's; a mention pair's ``sentence_start`` is its sentence's start;
    BigBio's ``offsets`` are the pairs of its list of ``text``; structs with no offsets are left out."""
    assert offset_fields(Span) == {"": {"text": SPAN}}
    sides = {"text": SPAN, "sentence": OffsetFields("sentence", start="sentence_start")}
    assert offset_fields(MentionPair) == {"first": sides, "second": sides}
    assert offset_fields(Patient) == {"mentions[]": {"text": SPAN}}
    fragments = {"text": OffsetFields("text", pairs="offsets")}
    assert offset_fields(KbDocument) == {
        "passages[]": fragments,
        "entities[]": fragments,
        "events[].trigger": fragments,
    }
    assert offset_fields(Outer) == {"inner.spans[]": {"text": SPAN}}
    assert offset_fields(Nested) == {"extra.spans[]": {"text": SPAN}, "nested[][].spans[]": {"text": SPAN}}
    assert offset_fields(MentionPair) is offset_fields(MentionPair)  # derived once per model


def test_every_installed_record_model_derives_its_offsets() -> None:
    """Every config's model of every installed corpus: its marks are consistent, and every string they pair
    offsets with is one of the model's licensed strings (a list of them for pairs)."""
    for corpus in all_corpora():
        for config, model in make_builder(corpus).CONFIGS.items():
            paths = licensed_paths(model)
            for path, offsets in offset_fields(model).items():
                for fields in offsets.values():
                    string = f"{path}.{fields.licensed}" if path else fields.licensed
                    assert (f"{string}[]" if fields.pairs else string) in paths, (config, string)


class Mislabelled(BaseModel):
    begin: Annotated[Offset, OffsetOf("label", "start")]
    label: str


class PairsOfOneString(BaseModel):
    places: Annotated[list[OffsetPair], OffsetOf("text", "pairs")]
    text: LicensedText


class SpanOfStrings(BaseModel):
    begin: Annotated[Offset, OffsetOf("texts", "start")]
    texts: list[LicensedText]


class EndAlone(BaseModel):
    stop: Annotated[Offset, OffsetOf("text", "end")]
    text: LicensedText


class TwoStarts(BaseModel):
    begin: Annotated[Offset, OffsetOf("text", "start")]
    at: Annotated[Offset, OffsetOf("text", "start")]
    text: LicensedText


class NotAnInt(BaseModel):
    begin: Annotated[str, OffsetOf("text", "start")]
    text: LicensedText


class InParent(BaseModel):
    """The nested struct's mark names its parent's string: offsets pair with a string of their own struct."""

    text: LicensedText
    child: Mislabelled


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            Mislabelled,
            r"Mislabelled\.begin is marked OffsetOf\(licensed='label', role='start'\), but "
            r"Mislabelled\.label is not a licensed string of Mislabelled",
        ),
        (PairsOfOneString, r"PairsOfOneString\.places is marked .*PairsOfOneString\.text is not a list of licensed"),
        (SpanOfStrings, r"SpanOfStrings\.begin is marked .*SpanOfStrings\.texts is not a licensed string"),
        (EndAlone, r"EndAlone\.stop is the end of 'text', which has no start field"),
        (TwoStarts, r"TwoStarts\.at and TwoStarts\.begin are both the start of 'text'"),
        (NotAnInt, r"NotAnInt\.begin is marked .*, but it is <class 'str'>, not an int"),
        (InParent, r"Mislabelled\.begin is marked .*Mislabelled\.label is not a licensed string of Mislabelled"),
    ],
)
def test_an_offset_mark_that_pairs_with_no_licensed_string_of_its_struct_is_an_error(
    model: type[BaseModel], message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        offset_fields(model)


def test_text_free_features_replace_only_licensed_strings() -> None:
    features = text_free_features(features_for(Outer), licensed_tree(Outer))
    assert features["id"] == Value("string") and features["count"] == Value("int64")
    assert features["title"] == List(SEGMENT) and features["names"] == List(List(SEGMENT))
    assert features["inner"]["spans"] == List({"start": Value("int32"), "end": Value("int32"), "text": List(SEGMENT)})
    assert list(features)[-1] == SOURCE_DOCUMENTS


def test_a_query_with_a_placeholder_is_a_slice_a_literal_and_a_slice() -> None:
    document = "Learning points: start antibiotics before the biopsy result."
    query = "start @placeholder before the biopsy result."
    segments = recipe(query, [document])
    assert restore(segments, [document]) == query
    assert [s["literal"] for s in segments if s["document"] == LITERAL] == ["@placeholder"]


def test_a_string_a_document_holds_whole_is_one_slice() -> None:
    assert recipe("the biopsy", ["x", "before the biopsy result"]) == [
        {"document": 1, "start": 7, "end": 17, "literal": None}
    ]


text = st.text(alphabet="abcde \n", max_size=60)


@settings(max_examples=200)
@given(value=text, documents=st.lists(text, max_size=3))
def test_every_recipe_restores_its_string_and_keeps_as_literals_only_what_no_document_holds(
    value: str, documents: list[str]
) -> None:
    segments = recipe(value, documents)
    assert restore(segments, documents) == value
    position = 0
    for segment in segments:
        if segment["document"] != LITERAL:
            position += segment["end"] - segment["start"]
            continue
        for at in range(position, position + len(segment["literal"])):
            piece = value[at : at + MIN_SLICE]
            assert len(piece) < MIN_SLICE or not any(piece in document for document in documents)
        position += len(segment["literal"])


def naive_longest(document: str, release: str) -> int:
    return max(
        (j - i for i in range(len(document)) for j in range(i + 1, len(document) + 1) if document[i:j] in release),
        default=0,
    )


@settings(max_examples=100)
@given(document=st.text(alphabet="ab c", min_size=0, max_size=40), release=st.text(alphabet="ab c", max_size=40))
def test_the_longest_shared_run_is_the_naive_one_from_the_seed_length_up(document: str, release: str) -> None:
    found = longest_shared_run([("doc:1", document)], ReleaseText([release]))
    expected = naive_longest(document, release)
    assert (found.length if found else 0) == (expected if expected >= SEED else 0)
    if found:
        assert document[found.offset : found.offset + found.length] in release


def test_runs_without_letters_and_label_names_are_not_counted() -> None:
    document = "seen 2150-01-01 12:00:00 with Diagnostic Procedure findings"
    release = ReleaseText(["2150-01-01 12:00:00", "Diagnostic Procedure"])
    assert longest_shared_run([("doc:1", document)], release, {"Diagnostic Procedure"}) is None
    assert longest_shared_run([("doc:1", document)], release).length == len(" Diagnostic Procedure") - 1  # type: ignore[union-attr]


@settings(max_examples=100)
@given(strings=st.lists(st.text(alphabet="ab c\x00", max_size=30), max_size=6), windows=st.integers(1, 20))
def test_release_windows_hashed_piece_by_piece_are_those_hashed_at_once(strings: list[str], windows: int) -> None:
    text = "\x00".join(strings)
    with patch.object(leak, "_RELEASE_WINDOWS", windows):
        pieces = leak._distinct_window_hashes(text, "\x00")
    assert pieces.tolist() == np.unique(leak._window_hashes(text, "\x00")).tolist()


class _Loose(BaseModel):
    id: Identifier
    note: str
    spans: list[Span]
    tags: list[str]
    kind: Literal["a", "b"]
    extra: dict[str, int]


def test_a_string_neither_licensed_nor_bounded_is_named_at_its_depth() -> None:
    assert unbounded_strings(_Loose) == [
        "note: a string with no bound",
        "tags[]: a string with no bound",
        "extra: a field of type dict[str, int]",
    ]


def test_every_installed_record_model_bounds_every_string_it_keeps() -> None:
    for corpus in all_corpora():
        builder = make_builder(corpus)
        assert {config: unbounded_strings(model) for config, model in builder.CONFIGS.items()} == {
            config: [] for config in builder.CONFIGS
        }, corpus.name
