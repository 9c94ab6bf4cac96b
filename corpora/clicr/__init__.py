"""The clicr corpus plugin: CliCR cloze queries from BMJ Case Reports (Šuster & Daelemans 2018)."""

from pathlib import Path

from clinical_corpora.core.registry import Command, baselines, corpora, exporters, scorers

corpora.register("clicr", Path(__file__).parent)
scorers.register(
    "clicr",
    Command(
        "clinical_corpora.corpora.clicr.commands",
        "CliCR EM/F1, BLEU and embedding average (Šuster & Daelemans 2018)",
        releases=("data",),
    ),
)
exporters.register(
    ("clicr-json", "clicr"),
    Command("clinical_corpora.corpora.clicr.clicr_json:clicr_json", "the CliCR release's JSON, one file per split"),
)
baselines.register(
    ("clicr", "maxfreq-entity"),
    Command(
        "clinical_corpora.corpora.clicr.baselines:maxfreq_entity",
        "the case's most frequent entity (Šuster & Daelemans 2018, Table 4)",
    ),
)
baselines.register(
    ("clicr", "rand-entity"),
    Command(
        "clinical_corpora.corpora.clicr.baselines:rand_entity",
        "a random entity of the case, seeded (Šuster & Daelemans 2018, Table 4)",
    ),
)
baselines.register(
    ("clicr", "sim-entity"),
    Command(
        "clinical_corpora.corpora.clicr.sim_entity:sim_entity",
        "the entity whose context is closest to the query's, given --word-vectors (Šuster & Daelemans 2018, Table 4)",
    ),
)
