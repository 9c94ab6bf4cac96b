"""The sdoh corpus plugin: SHAC social determinants of health events (n2c2 2022 Track 2)."""

from pathlib import Path

from clinical_corpora.core.registry import Command, baselines, corpora, exporters, scorers

corpora.register("sdoh", Path(__file__).parent)
scorers.register(
    "sdoh",
    Command(
        "clinical_corpora.corpora.sdoh.commands",
        "BRAT events with the n2c2 2022 SDOH scorer's criteria",
        releases=("gold_dir",),
    ),
)
exporters.register(
    ("brat", "sdoh"),
    Command("clinical_corpora.corpora.sdoh.exports:brat", "SHAC BRAT folders {split}/{source}/<doc>.txt|.ann"),
)
baselines.register(
    ("sdoh", "rules"),
    Command(
        "clinical_corpora.corpora.sdoh.baselines:rules",
        "ours: trigger lexicon and nearest status cue (not Lybarger et al.'s)",
    ),
)
