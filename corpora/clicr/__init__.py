"""The clicr corpus plugin: CliCR cloze queries from BMJ Case Reports (Šuster & Daelemans 2018)."""

from pathlib import Path

from clinical_corpora.core.registry import Command, corpora, exporters, scorers

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
