"""The tiny corpus as a plugin: what an external distribution's entry point would import."""

from pathlib import Path

from clinical_corpora.core.registry import Command, corpora, exporters, scorers

corpora.register("tiny", Path(__file__).parent)
scorers.register("tiny-spans", Command("tests.tiny_corpus.commands:span_score", "exact-span F1"))
exporters.register(("tsv", "tiny"), Command("tests.tiny_corpus.commands:tsv_export", "notes.tsv and spans.tsv"))
