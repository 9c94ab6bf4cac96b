"""MIMIC note tables (MIMIC-III NOTEEVENTS, MIMIC-IV-Note) and the SNOMED CT challenge's annotation files."""
