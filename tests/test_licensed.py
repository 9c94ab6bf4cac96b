"""The licensed-text marker, recipes and the leak measure, on small inputs checked against naive versions."""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
from datasets import List, Value
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from clinical_corpora.builders.text_free.recipes import MIN_SLICE, recipe, restore
from clinical_corpora.schemas.features import features_for
from clinical_corpora.schemas.licensed import (
    LITERAL,
    SEGMENT,
    SOURCE_DOCUMENTS,
    LicensedText,
    licensed_paths,
    licensed_tree,
    text_free_features,
)
from clinical_corpora.schemas.spans import Span
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


def test_licensed_paths_follow_optionals_lists_and_nested_models() -> None:
    assert licensed_paths(Outer) == ["title", "names[]", "inner.spans[].text"]


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
