"""Closed label sets shared by readers, record models and metrics (one source of truth each).

Record models turn these Literals into ``datasets.ClassLabel`` features; readers validate raw values
against them.
"""

from __future__ import annotations

from typing import Literal

# ODIE markable and pair attributes (Savova et al. 2011, Tables 1 and 2), as Knowtator writes them.
GrammaticalCategory = Literal[
    "indefinite_np",
    "definite_np",
    "bare_np",
    "demonstrative_np",
    "proper_np",
    "personal_pronoun",
    "possessive_pronoun",
    "demonstrative_pronoun",
    "relative_pronoun",
    "clause",
    "other",
]
SentenceFunction = Literal[
    "surface_subject",
    "logical_subject",
    "predicate_nominal",
    "indirect_object",
    "direct_object",
    "prepositional_object",
    "modifier",
    "section_heading",
    "other",
]
SemanticClass = Literal[
    "people",
    "anatomical_site",
    "disease_or_syndrome",
    "sign_or_symptom",
    "procedure",
    "laboratory_or_test_result",
    "indicator_reagent_or_diagnostic_aid",
    "organ_or_tissue_function",
    "other",
    "none",
]
BaggaClass = Literal[
    "appositive",
    "syntactic_equative",
    "proper_name",
    "pronoun",
    "quoted_speech_pronoun",
    "demonstrative",
    "exact_match",
    "substring_match",
    "identical_lexical_head",
    "synonym",
    "external_world_knowledge",
    "ontology_knowledge",
]
RelationType = Literal["identity", "set/subset", "part/whole", "other"]

Hierarchy = Literal["finding", "procedure", "body_structure"]
"""The SNOMED CT top-level hierarchies of the Entity Linking Challenge (Hardman et al. 2025)."""

Category = Literal["problem", "treatment", "test"]
"""The i2b2 2010 concept categories CliCR's answers are typed with (Šuster & Daelemans 2018)."""
