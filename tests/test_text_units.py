"""Sentences and tokens: clinical abbreviations, offsets, every character in exactly one token."""

from __future__ import annotations

from bisect import bisect_right

from hypothesis import example, given, settings
from hypothesis import strategies as st

from clinical_corpora.builders.contract.text_units import (
    Sentence,
    paragraphs,
    sentence_spans,
    split_sentences,
    token_strings,
    tokenize,
)

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


SEGMENTER_ALPHABET = [
    *"ab 1.,;:!?-_'\"()[]\n\r\u200b\u2010\u2019",
    " The ",
    " However ",
    " Dr",
    " e.g.",
    " vs.",
    " II",
    " no",
    " Jan",
    "...",
    "\n\n",
    " (A. Author et al.) ",
]
segmenter_texts = st.lists(st.sampled_from(SEGMENTER_ALPHABET), max_size=60).map("".join)


def _split_at_every_start(text: str) -> list[Sentence]:
    """The definition of :func:`split_sentences`: each token to the last sentence start at or before it."""
    starts = [start for start, _ in sentence_spans(text)] or [0]
    groups: list[list[tuple[int, int]]] = [[] for _ in starts]
    for token in tokenize(text):
        groups[max(bisect_right(starts, token[0]) - 1, 0)].append(token)
    return [Sentence(group[0][0], group[-1][1], tuple(group)) for group in groups if group]


@settings(max_examples=400)
@given(segmenter_texts)
def test_paragraph_by_paragraph_splitting_is_the_whole_text_splitting(text: str) -> None:
    assert split_sentences(text) == _split_at_every_start(text)
    assert [token for paragraph in paragraphs(text) for token in paragraph.tokens] == tokenize(text)


@settings(max_examples=400)
@given(segmenter_texts)
@example("He said a.' The end")  # a closing quote ends the sentence
@example("Fever a.\u2019 The end")
@example("pain.\u200b The end")  # the terminal before a token that starts with syntok's spacing
@example("Fever (high The end")  # an opening bracket syntok cannot skip starts a sentence
@example("See (the patient was well. The next day")
def test_may_split_is_true_wherever_a_sentence_starts_between_two_tokens(text: str) -> None:
    starts = [start for start, _ in sentence_spans(text)]
    for paragraph in paragraphs(text):
        tokens = paragraph.tokens
        for first, (first_start, _) in enumerate(tokens):
            for last_start, _ in tokens[first + 1 :]:
                if any(first_start < start <= last_start for start in starts):
                    assert paragraph.may_split(text, first_start, last_start), (first_start, last_start)


def test_may_split_is_false_inside_plain_words() -> None:
    text = "chronic obstructive pulmonary disease, type 2 diabetes"
    [paragraph] = paragraphs(text)
    assert not paragraph.may_split(text, 0, text.index("diabetes"))
    assert paragraph.may_split("Chest pain. The", 0, len("Chest pain. "))
