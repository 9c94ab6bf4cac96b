"""The tamper gate's measure: runs of prose longer than the leak limit that the package does not write."""

from __future__ import annotations

from clinical_corpora.builders.contract.base import make_builder
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.text_free.leak_gate import LEAK_LIMIT
from clinical_corpora.builders.text_free.tamper import PackageWords, foreign_runs, package_words
from clinical_corpora.schemas.licensed import LEAF, vocabulary_tree


def words_of(name: str) -> PackageWords:
    corpus = find_corpus(name)
    return package_words(corpus, make_builder(corpus.builder, None))


def test_a_clinical_sentence_is_foreign_and_a_template_sentence_is_not() -> None:
    words = words_of("sdoh")
    sentence = "She quit smoking two years ago after her husband developed emphysema and moved in with her daughter"
    (run,) = foreign_runs(f"| note | {sentence} |", words)
    assert sentence.startswith(run) and len(run) > 2 * LEAK_LIMIT  # "in with her" is a trigram of the package
    template = "the leak gate passed when the release was written"  # builders/text_free/check.py
    assert list(foreign_runs(template, words)) == []


def test_interpolated_names_and_short_runs_are_not_foreign() -> None:
    words = words_of("snomed_el")
    assert list(foreign_runs("clincorp rehydrate 9.9.9+sample.text-free --source notes=PATH", words)) == []
    short = "x" * LEAK_LIMIT
    assert list(foreign_runs(short, words)) == []
    assert list(foreign_runs(short + "y", words)) == [short + "y"]


def test_ids_paths_and_numbers_end_a_run() -> None:
    words = words_of("sdoh")
    assert list(foreign_runs("train/mimic/0101_heavy_drinking_history_presents_with_pain", words)) == []


def test_the_open_vocabularies_the_gate_cannot_vouch_for_are_declared_by_the_record_models() -> None:
    builder = make_builder(find_corpus("clicr").builder, None)
    tree = vocabulary_tree(builder.CONFIGS["clicr_documents"])
    assert tree["metadata"] == {"series": [LEAF], "specialties": [LEAF]}
    assert tree["entities"] == [{"sem_type": LEAF}]
