"""The rad_coref corpus plugin: findings and devices tracked across a patient's radiology reports."""

from pathlib import Path

from clinical_corpora.core.registry import Command, baselines, corpora, exporters, scorers

corpora.register("rad_coref", Path(__file__).parent)
scorers.register(
    "coref",
    Command(
        "clinical_corpora.corpora.rad_coref.commands",
        "MUC, B3, CEAF, BLANC, LEA and CoNLL F1 as the CoNLL-2012 reference scorer",
        releases=("key",),
    ),
)
exporters.register(
    ("conll2012", "rad_coref"),
    Command("clinical_corpora.corpora.rad_coref.exports:conll2012", "one CoNLL-2012 document per patient"),
)
exporters.register(
    ("brat", "rad_coref"),
    Command(
        "clinical_corpora.corpora.rad_coref.exports:brat",
        "the corpus's inputs: gold/<SUBJECT_ID>/<ROW_ID>.ann|.txt with chain notes, and NOTEEVENTS.csv.gz",
    ),
)
baselines.register(
    ("rad_coref", "string-match"),
    Command(
        "clinical_corpora.corpora.rad_coref.baselines:string_match",
        "gold mentions with one lower-cased string form a chain (Datta et al. 2022, Table 7)",
    ),
)
