"""Sentences and tokens: clinical abbreviations, offsets, every character in exactly one token."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from clinical_corpora.builders.text_units import split_sentences, token_strings, tokenize

CLINICAL = (
    "A 54-year-old man had fever (38.5°C) and dyspnoea. Dr. Smith gave i.v. co-amoxiclav, e.g. 1.2 g "
    "t.d.s. vs. placebo. CRP was 250 mg/L.\n\nInvestigations\n\nHbA1c was 1,000 units"
)


def _sentences(text: str) -> list[str]:
    return [text[sentence.start : sentence.end] for sentence in split_sentences(text)]


def test_clinical_sentences_keep_abbreviations_and_decimals() -> None:
    assert _sentences(CLINICAL) == [
        "A 54-year-old man had fever (38.5°C) and dyspnoea.",
        "Dr. Smith gave i.v. co-amoxiclav, e.g. 1.2 g t.d.s. vs. placebo.",
        "CRP was 250 mg/L.",
        "Investigations",
        "HbA1c was 1,000 units",
    ]


def test_tokens() -> None:
    assert token_strings("A 54-year-old had 38.5°C, HbA1c 1,000 mg/dL.") == [
        "A", "54", "-", "year", "-", "old", "had", "38.5", "°", "C", ",", "HbA1c", "1,000", "mg", "/", "dL", ".",
    ]  # fmt: skip
    assert tokenize("  fever  ") == [(2, 7)]


def test_a_blank_line_always_ends_a_sentence() -> None:
    assert _sentences("Chest\n\npain was mild") == ["Chest", "pain was mild"]


def test_sentence_tokens_are_offsets_into_the_whole_text() -> None:
    text = "First one.\n\nSecond one here."
    second = split_sentences(text)[1]
    assert [text[start:end] for start, end in second.tokens] == ["Second", "one", "here", "."]
    assert (second.start, second.end) == (12, 28)


@given(st.text(alphabet=st.sampled_from(list("ab .,-()\n:ÀÉ1234")), max_size=200))
def test_every_non_space_character_is_in_exactly_one_token_of_one_sentence(text: str) -> None:
    sentences = split_sentences(text)
    tokens = [token for sentence in sentences for token in sentence.tokens]
    assert tokens == tokenize(text)
    assert "".join(text[start:end] for start, end in tokens) == "".join(text.split())
    for sentence in sentences:
        assert sentence.tokens and sentence.start == sentence.tokens[0][0] and sentence.end == sentence.tokens[-1][1]
    assert split_sentences(text) == sentences
