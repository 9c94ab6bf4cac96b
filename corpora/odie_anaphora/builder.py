"""Builder of ``odie_anaphora``: anaphoric relations in clinical notes (Savova et al., JAMIA 2011).

Input, either:

- Knowtator XML: source ``knowtator`` (the adjudicated gold, ``<doc>.txt.knowtator.xml``) with
  source ``text`` (``<doc>.txt``); optional sources ``annotator_a`` and ``annotator_b`` (one
  folder per annotator) give Savova et al. 2011's pair-wise agreement and the chain scores
  (:mod:`clinical_corpora.corpora.odie_anaphora.agreement`);
- the i2b2/VA 2011 coreference layout: source ``i2b2`` (``docs/``, ``concepts/``, ``chains/``,
  optional ``pairs/``), released as split ``train``, and source ``i2b2_test`` (the test folder, same
  layout), released as split ``test``. When either is given it is used instead of the Knowtator gold
  (which releases split ``train``). The format has no markable attributes and no Bagga classes
  (released as null) and only identity relations; without a pairs file each chain member is paired
  with the member before it.

Document names are ``<institution>_<note_type>_<nn>`` (``upmc_rad_01``); notes become rows in
:mod:`clinical_corpora.corpora.odie_anaphora.notes`, card statistics come from
:mod:`clinical_corpora.corpora.odie_anaphora.statistics`.

A broken annotation of a note (see the README's "Real inputs") fails the build naming file and
line, or with ``--on-error quarantine`` goes alone to rejects.jsonl while the note is released
without it and without the pairs that need it; chains are rebuilt from the released pairs.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from clinical_corpora.builders.contract.base import AgreementReport, BuildContext, Builder, BuilderOptions, Row
from clinical_corpora.builders.contract.display import DocumentDisplay, RowReader
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.sources.brat.folder import TEXT_SUFFIX
from clinical_corpora.builders.sources.discovery import find_documents
from clinical_corpora.builders.sources.documents import read_document_files
from clinical_corpora.builders.sources.i2b2.coref import DOCS_DIR, I2b2Files, i2b2_documents, read_i2b2_files
from clinical_corpora.builders.sources.knowtator.folder import KNOWTATOR_SUFFIX
from clinical_corpora.builders.sources.knowtator.xml import read_knowtator_file
from clinical_corpora.builders.sources.text_lines import read_utf8
from clinical_corpora.core.card import CardSection
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.locators import keys_of, locator
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.corpora.odie_anaphora import bigbio
from clinical_corpora.corpora.odie_anaphora.agreement import pairwise_agreement
from clinical_corpora.corpora.odie_anaphora.baselines import card_scores
from clinical_corpora.corpora.odie_anaphora.display import annotator_displays, odie_displays
from clinical_corpora.corpora.odie_anaphora.notes import (
    I2B2_CONCEPT_TYPES,
    gold_notes,
    i2b2_record,
    knowtator_record,
    quarantine,
    record_changes,
)
from clinical_corpora.corpora.odie_anaphora.predictions import prediction_displays
from clinical_corpora.corpora.odie_anaphora.records import OdieDocument
from clinical_corpora.corpora.odie_anaphora.statistics import statistics_sections

CONFIG = "odie_anaphora"
SPLIT = "train"
I2B2_SPLITS = {"i2b2": "train", "i2b2_test": "test"}
"""Each i2b2/VA source and the split its notes are released as (Uzuner et al. 2012's train and test folders)."""


class OdieAnaphoraBuilder(Builder):
    CONFIGS = {CONFIG: OdieDocument, bigbio.CONFIG: bigbio.KbDocument}
    RECORD_CONFIG = CONFIG
    DOCUMENTS = {
        "knowtator": f"one Knowtator file per note, <institution>_<note_type>_<nn>{KNOWTATOR_SUFFIX}",
        "i2b2": f"one text file per note, {DOCS_DIR}/<institution>_<note_type>_<nn>.txt",
        "i2b2_test": f"one text file per note, {DOCS_DIR}/<institution>_<note_type>_<nn>.txt",
    }

    def __init__(self, options: BuilderOptions | None = None) -> None:
        super().__init__(options)
        self._source_of_note: dict[tuple[Path | None, ...], dict[str, str]] = {}
        """Per set of i2b2 folders given, each note's source (the text-free release's locators)."""

    def displays(self, rows: RowReader) -> Iterator[DocumentDisplay]:
        return odie_displays(rows)

    def annotator_displays(self, ctx: BuildContext, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
        return annotator_displays(ctx)

    def prediction_displays(self, predictions: Path, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
        return prediction_displays(predictions, rows)

    def count(self, ctx: BuildContext) -> int:
        if i2b2_given(ctx):
            return len(i2b2_notes(ctx, quiet=True))
        return len(gold_notes(ctx.source("knowtator"), ctx.source("text"), quiet=True))

    def source_documents(self, ctx: BuildContext, config: str, row: Mapping[str, Any]) -> list[str]:
        """The note's text file: ``i2b2:docs/<id>.txt`` (``i2b2_test:`` for a test note) for the i2b2 input, else
        ``text:<id>.txt``."""
        if config not in (CONFIG, bigbio.CONFIG):
            return super().source_documents(ctx, config, row)
        note_id = row["id"]
        if i2b2_given(ctx):
            return [locator(self._i2b2_source(ctx, note_id), f"{DOCS_DIR}/{note_id}{TEXT_SUFFIX}")]
        return [locator("text", f"{note_id}{TEXT_SUFFIX}")]

    def _i2b2_source(self, ctx: BuildContext, note_id: str) -> str:
        """The i2b2 source holding a note (the train folder when both do: the test copy is a duplicate id)."""
        given = tuple(ctx.sources.get(name) for name in I2B2_SPLITS)
        if given not in self._source_of_note:
            notes = reversed(i2b2_notes(ctx, quiet=True))
            self._source_of_note[given] = {files.doc_id: name for name, _, files in notes}
        return self._source_of_note[given].get(note_id, "i2b2")

    def read_documents(self, ctx: BuildContext, locators: Collection[str]) -> Iterator[tuple[str, str]]:
        """The wanted note texts, found as a build finds them (suffixes in any case)."""
        if keys_of("text", locators):
            texts = find_documents(ctx.source("text"), [TEXT_SUFFIX], what="note texts <doc>.txt", quiet=True)
            yield from read_document_files("text", texts, locators, self.options.max_file_bytes, ctx.encoding("text"))
        for name in I2B2_SPLITS:
            wanted = set(keys_of(name, locators))
            if wanted and ctx.has_source(name):
                for files in i2b2_documents(ctx.source(name), quiet=True):
                    key = f"{DOCS_DIR}/{files.doc_id}{TEXT_SUFFIX}"
                    if key in wanted and files.has(DOCS_DIR):
                        text = read_utf8(files.path(DOCS_DIR), self.options.max_file_bytes, ctx.encoding(name))
                        yield locator(name, key), text

    def shards(self, ctx: BuildContext) -> dict[str, list[Any]]:
        """The i2b2 documents (source, split, files), or the gold notes (doc id, Knowtator file, text file): each
        note builds alone."""
        if i2b2_given(ctx):
            return {"notes": i2b2_notes(ctx)}
        return {"notes": list(gold_notes(ctx.source("knowtator"), ctx.source("text")).items())}

    def generate_shard(self, ctx: BuildContext, notes: Sequence[Any] = ()) -> Iterator[Row]:
        """One row per note. A note missing a file (text, concepts or chains; a Knowtator file without its
        text or a text without its Knowtator file) fails the build naming it, or is quarantined."""
        if i2b2_given(ctx):
            for _, split, files in notes:
                text_path = files.path(DOCS_DIR)
                with ctx.record(f"{text_path} [{files.doc_id}]"):
                    i2b2_document = read_i2b2_files(files, I2B2_CONCEPT_TYPES, max_bytes=self.options.max_file_bytes)
                    record_changes(ctx, files.doc_id, i2b2_document.changes)
                    quarantine(ctx, i2b2_document.problems)
                    record = i2b2_record(i2b2_document, text_path)
                    yield Row(CONFIG, split, record)
                    yield Row(bigbio.CONFIG, split, bigbio.kb_document(record))
            return
        for doc_id, (xml_path, note_path) in notes:
            with ctx.record(f"{xml_path or note_path} [{doc_id}]"):
                if xml_path is None:
                    raise SourceError(
                        note_path or doc_id,
                        f"no {doc_id}{KNOWTATOR_SUFFIX} in source knowtator: expected every note's annotations",
                    )
                document = read_knowtator_file(xml_path, ctx.source("text"), max_bytes=self.options.max_file_bytes)
                quarantine(ctx, document.problems)
                record = knowtator_record(document, xml_path)
                yield Row(CONFIG, SPLIT, record)
                yield Row(bigbio.CONFIG, SPLIT, bigbio.kb_document(record))

    def agreement(self, ctx: BuildContext, release: ReleaseView) -> AgreementReport | None:
        return pairwise_agreement(ctx, CONFIG, release, self.options.max_file_bytes)

    def statistics(self, release: ReleaseView) -> list[CardSection]:
        """Savova et al. 2011's corpus characteristics, from the released rows."""
        return statistics_sections(list(release.rows(CONFIG)))

    def baselines(self, release: ReleaseView) -> list[BaselineScore]:
        return card_scores(release)

    def quality_tables(self, release: ReleaseView) -> dict[str, pd.DataFrame]:
        """``odie_anaphora.pair_links``: each pair with the positions and classes of its two markables."""
        links = []
        for split, row in release.rows(CONFIG):
            markables = {m["id"]: m for m in row["markables"]}
            for pair in row["pairs"]:
                anaphor, antecedent = markables[pair["anaphor_id"]], markables[pair["antecedent_id"]]
                links.append(
                    {
                        "_split": split,
                        "document": row["id"],
                        "relation": pair["relation"],
                        "anaphor_start": anaphor["start"],
                        "antecedent_start": antecedent["start"],
                        "anaphor_class": anaphor["semantic_class"],
                        "antecedent_class": antecedent["semantic_class"],
                    }
                )
        return {
            f"{CONFIG}.pair_links": pd.DataFrame(
                links,
                columns=[
                    "_split",
                    "document",
                    "relation",
                    "anaphor_start",
                    "antecedent_start",
                    "anaphor_class",
                    "antecedent_class",
                ],
            )
        }


def i2b2_given(ctx: BuildContext) -> bool:
    """Whether the notes come from the i2b2/VA layout (its train folder, its test folder or both)."""
    return any(ctx.has_source(name) for name in I2B2_SPLITS)


def i2b2_notes(ctx: BuildContext, *, quiet: bool = False) -> list[tuple[str, str, I2b2Files]]:
    """Every note of the given i2b2/VA folders: its source, its split and its files (train, then test)."""
    return [
        (name, split, files)
        for name, split in I2B2_SPLITS.items()
        if ctx.has_source(name)
        for files in i2b2_documents(ctx.source(name), quiet=quiet)
    ]
