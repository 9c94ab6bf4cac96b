"""The snomed_el corpus plugin: SNOMED CT entity linking on MIMIC-IV-Note discharge notes."""

from pathlib import Path

from clinical_corpora.core.registry import Command, baselines, corpora, exporters, scorers

corpora.register("snomed_el", Path(__file__).parent)
scorers.register(
    "snomed",
    Command(
        "clinical_corpora.corpora.snomed_el.commands",
        "macro character IoU of the SNOMED CT Entity Linking Challenge",
        releases=("gold",),
    ),
)
exporters.register(
    ("challenge-csv", "snomed_el"),
    Command(
        "clinical_corpora.corpora.snomed_el.exports:challenge_csv",
        "the challenge's note_id,text notes CSV and note_id,start,end,concept_id annotation CSVs",
    ),
)
baselines.register(
    ("snomed_el", "dictionary"),
    Command(
        "clinical_corpora.corpora.snomed_el.baselines:dictionary_linker",
        "longest match of the release's terminology's synonyms (of the kind Davidson et al. 2025 describe)",
    ),
)
