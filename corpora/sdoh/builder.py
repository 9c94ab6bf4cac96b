"""SDOH builder: SHAC BRAT folders → config ``sdoh`` (one row per note), n2c2 scorer agreement.

Source ``shac`` is ``{train,dev,test}/{mimic,uw}/<doc>.txt|.ann``; the optional ``shac_double`` holds
two annotator folders (``annotator_a/``, ``annotator_b/``: the convention of ``builders.sources.annotators``)
with the same relative paths, the first scored as gold against the second for the agreement gate.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from clinical_corpora.builders.contract.base import AgreementReport, BuildContext, Builder, BuilderOptions, Row
from clinical_corpora.builders.contract.display import DocumentDisplay, RowReader
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.sources.annotators import annotator_folders
from clinical_corpora.builders.sources.brat.annotations import BratDocument, OnBroken, TextBound
from clinical_corpora.builders.sources.brat.folder import ANN_SUFFIX, TEXT_SUFFIX, brat_documents
from clinical_corpora.builders.sources.brat.standoff import read_brat_document
from clinical_corpora.builders.sources.discovery import Document
from clinical_corpora.builders.sources.documents import read_document_files
from clinical_corpora.builders.sources.shac import ShacScheme, ValuedTextBound, shac_annotations
from clinical_corpora.core.card import CardSection, Cell, Table
from clinical_corpora.core.counts import NO_COUNTS
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.locators import locator
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.corpora.sdoh import bigbio
from clinical_corpora.corpora.sdoh.baselines import card_scores
from clinical_corpora.corpora.sdoh.display import sdoh_displays
from clinical_corpora.corpora.sdoh.predictions import prediction_displays
from clinical_corpora.corpora.sdoh.records import (
    CHALLENGE_EVENT_TYPES,
    REQUIRED_ARGUMENTS,
    SUBTYPES_BY_ARGUMENT,
    EventType,
    NoteSource,
    SdohNote,
    Split,
)
from clinical_corpora.corpora.sdoh.scoring import score_folders
from clinical_corpora.corpora.sdoh.statistics import COUNTED, agreement_chart, per_type_chart, statistic_values
from clinical_corpora.validation.metrics.sdoh import NOT_APPLICABLE, TRIGGER

if TYPE_CHECKING:
    from clinical_corpora.validation.expectations import TableBatches

CONFIG = "sdoh"
SPLITS: tuple[str, ...] = get_args(Split)
SOURCES: tuple[str, ...] = get_args(NoteSource)
SCHEME = ShacScheme(get_args(EventType), SUBTYPES_BY_ARGUMENT)


class SdohBuilder(Builder):
    CONFIGS = {CONFIG: SdohNote, bigbio.CONFIG: bigbio.KbDocument}
    RECORD_CONFIG = CONFIG
    DOCUMENTS = {"shac": "BRAT pairs {train,dev,test}/{mimic,uw}/<doc>.txt and <doc>.ann"}

    def __init__(self, options: BuilderOptions | None = None) -> None:
        super().__init__(options)
        self._listed: tuple[BuildContext, list[Document]] | None = None

    def displays(self, rows: RowReader) -> Iterator[DocumentDisplay]:
        return sdoh_displays(rows)

    def prediction_displays(self, predictions: Path, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
        return prediction_displays(predictions, rows)

    def count(self, ctx: BuildContext) -> int:
        return len(self._documents(ctx))

    def built(self) -> None:
        self._listed = None  # the gates read the written release: 50k notes' listing is ~50 MB

    def _documents(self, ctx: BuildContext) -> list[Document]:
        """The notes of source shac, listed once per build (``count`` and ``shards`` both need them)."""
        if self._listed is None or self._listed[0] is not ctx:
            self._listed = (ctx, brat_documents(ctx.source("shac")))
        return self._listed[1]

    def source_documents(self, ctx: BuildContext, config: str, row: Mapping[str, Any]) -> list[str]:
        """The note's ``.txt`` in source shac, and its ``.ann`` when annotator notes or normalisations
        quote text."""
        if config == bigbio.CONFIG:
            return [locator("shac", f"{row['document_id']}{TEXT_SUFFIX}")]
        if config != CONFIG:
            return super().source_documents(ctx, config, row)
        documents = [locator("shac", f"{row['id']}{TEXT_SUFFIX}")]
        if row["notes"] or row["normalizations"]:
            documents.append(locator("shac", f"{row['id']}{ANN_SUFFIX}"))
        return documents

    def read_documents(self, ctx: BuildContext, locators: Collection[str]) -> Iterator[tuple[str, str]]:
        documents = brat_documents(ctx.source("shac"), quiet=True)
        return read_document_files("shac", documents, locators, self.options.max_file_bytes, ctx.encoding("shac"))

    def shards(self, ctx: BuildContext) -> dict[str, list[Document]]:
        return {"documents": self._documents(ctx)}

    def generate_shard(self, ctx: BuildContext, documents: Sequence[Document] = ()) -> Iterator[Row]:
        """One row per note; a broken annotation fails the build or, quarantined, is left out of its
        note (``builders.sources.brat.resolution`` says what goes with it) and the note is released. A ``.txt``
        without its ``.ann`` is a note without annotations (as brat shows it); an ``.ann`` without its
        ``.txt`` is a broken note."""
        root = ctx.source("shac")

        def quarantine(error: SourceError) -> None:
            ctx.reject(error, "annotation")

        for document in documents:
            ann_path = document.paths.get(ANN_SUFFIX) or str(root / f"{document.id}{ANN_SUFFIX}")
            with ctx.record(ann_path):
                split_and_source(document.id, ann_path)  # the layout is checked before the note is read
                text, doc = read_brat_document(
                    document, text_without_ann=True, on_broken=quarantine, max_bytes=self.options.max_file_bytes
                )
                has_ann_file = ANN_SUFFIX in document.paths
                note = note_from_brat(document.id, text, doc, ann_path, on_broken=quarantine, has_ann_file=has_ann_file)
                yield Row(CONFIG, note.split, note)
                yield Row(bigbio.CONFIG, note.split, bigbio.kb_document(note))

    def agreement(self, ctx: BuildContext, release: ReleaseView) -> AgreementReport | None:
        """Annotator A (as gold) against B with the challenge's criteria (overlap / exact / label)."""
        if not ctx.has_source("shac_double"):
            return None
        root = ctx.source("shac_double")
        folders = annotator_folders(root, ANN_SUFFIX)
        if len(folders) != 2:
            raise SourceError(
                root, f"expected two annotator folders (the first scored as gold), found {', '.join(folders) or 'none'}"
            )
        gold, predicted = folders.values()
        rows = score_folders(gold, predicted)
        triggers = sum((row.counts for row in rows[1:] if row.argument == TRIGGER), NO_COUNTS)
        text = (
            "Annotator A scored as gold against annotator B with the n2c2 2022 scorer's default "
            "criteria (triggers overlap, span-only arguments exact, span-with-value arguments label)."
        )
        table = Table(
            ["event", "argument", "subtype", "NT", "NP", "TP", "P", "R", "F1"],
            [[*row.csv_fields()[:6], *(round(v, 4) for v in (row.precision, row.recall, row.f1))] for row in rows],
        )
        return AgreementReport(
            {"overall_f1": rows[0].f1, "trigger_f1": triggers.f1},
            [CardSection("Inter-annotator agreement", text, table, figures=[agreement_chart(rows)])],
        )

    def note_sources(self, release: ReleaseView) -> tuple[str, ...]:
        """The note sources (mimic, uw) of the rows of the ``sdoh`` config."""
        names = release.features(CONFIG)["source"].names
        return tuple(sorted(names[code] for code in pc.unique(release.column(CONFIG, "source")).to_pylist()))

    def baselines(self, release: ReleaseView) -> list[BaselineScore]:
        return card_scores(release)

    def statistics(self, release: ReleaseView) -> list[CardSection]:
        """Counts per split and source, summed over batches of notes (memory flat in the corpus size)."""
        counted: dict[str, pd.Series] = {}
        for tables in _flattened(release, with_text=False):
            notes, events, arguments = tables[CONFIG], tables[f"{CONFIG}.events"], tables[f"{CONFIG}.events.arguments"]
            group = notes["split"] + "/" + notes["source"]
            events = events.assign(group=group.loc[events["_row"]].to_numpy())
            arguments = arguments.assign(group=group.loc[arguments["_row"]].to_numpy())
            _add_counts(counted, "notes", group.groupby(group).size())
            _add_counts(counted, "events", events.groupby("group").size())
            _add_counts(counted, "arguments", arguments.groupby("group").size())
            _add_counts(counted, "without .ann", (~notes["has_ann_file"].astype(bool)).groupby(group).sum())
            _add_counts(counted, "event types", events.groupby(["type", "group"]).size())
            _add_counts(counted, "argument types", arguments.groupby(["type", "subtype", "group"]).size())
        present = set(counted["notes"].index)
        groups = [f"{split}/{source}" for split in SPLITS for source in SOURCES if f"{split}/{source}" in present]
        per_group = (
            pd.DataFrame({name: counted[name] for name in ("notes", "events", "arguments", "without .ann")})
            .reindex(groups)
            .fillna(0)
        )
        note_rows: list[list[Cell]] = [
            [*str(group).split("/"), *map(int, counts)] for group, counts in per_group.iterrows()
        ]
        note_rows.append(["all", "all", *map(int, per_group.sum())])
        return [
            CardSection(
                "Notes, events and arguments by split and source",
                "A note whose `.txt` came without a `.ann` is released with no annotations, as brat shows it, "
                "and counted under `without .ann`.",
                Table(["split", "source", "notes", "events", "arguments", "without .ann"], note_rows),
                statistic_values(per_group, counted["event types"], counted["argument types"]),
                COUNTED,
            ),
            CardSection(
                "Events by type",
                table=_crosstab(counted["event types"], groups, ["event type"]),
                figures=[
                    per_type_chart(
                        "events-by-type", "Events by type", counted["event types"], groups, ("event type", "events")
                    )
                ],
            ),
            CardSection(
                "Arguments by type and subtype",
                table=_crosstab(counted["argument types"], groups, ["argument type", "subtype"]),
                figures=[
                    per_type_chart(
                        "arguments-by-type",
                        "Arguments by type (subtypes pooled)",
                        counted["argument types"],
                        groups,
                        ("argument type", "arguments"),
                    )
                ],
            ),
        ]

    def quality_tables(self, release: ReleaseView) -> dict[str, TableBatches]:
        """Tables for the expectation suite, each derived batch by batch of notes as the suite reads it (the
        flattened config is never held whole, nor these tables but for the columns of ``sdoh.spans``).

        The first two tables carry the note's ``_split`` and ``_row``, so a violation names its note.

        - ``sdoh.required_arguments``: one row per challenge event; ``missing`` is
          ``<note> <event>: <starred arguments it lacks>``, empty when it has them all;
        - ``sdoh.value_slots``: one row per argument of a challenge event; ``slot`` is
          ``<event type>/<argument type>/<subtype>``;
        - ``sdoh.spans``: every trigger, argument, unused text-bound and non-empty fragment, with
          the length of its note's text (an empty fragment, ``232 232``, is valid BRAT: brat and the
          n2c2 scorer accept it, and the real SHAC training split has nine). Its rows come kind by kind
          (:data:`SPAN_KINDS`), so the asked columns of every batch are kept until the last is read.
        """
        return {
            f"{CONFIG}.required_arguments": functools.partial(_table_batches, release, _required_part, REQUIRED),
            f"{CONFIG}.value_slots": functools.partial(_table_batches, release, _slots_part, SLOTS),
            f"{CONFIG}.spans": functools.partial(_span_batches, release),
        }


SPAN_KINDS = ("trigger", "argument", "unused", "trigger fragment", "argument fragment")
"""The spans of ``sdoh.spans`` in their order: every trigger, then every argument, and so on."""

_KEY_FIELDS = [("_split", pa.string()), ("_row", pa.int64())]
REQUIRED = pa.schema([*_KEY_FIELDS, ("event", pa.string()), ("type", pa.string()), ("missing", pa.string())])
SLOTS = pa.schema([*_KEY_FIELDS, ("event", pa.string()), ("argument", pa.string()), ("slot", pa.string())])
SPANS = pa.schema([("kind", pa.string()), ("start", pa.int32()), ("end", pa.int32()), ("text_length", pa.int64())])
"""The columns of the quality tables, as the suite reads them."""

_KEYS = ("_split", "_row")


def _table_batches(
    release: ReleaseView,
    part: Callable[[dict[str, pd.DataFrame]], pd.DataFrame],
    schema: pa.Schema,
    columns: list[str],
) -> Iterator[pa.Table]:
    """A quality table's asked ``columns`` (and its keys) a batch of notes at a time."""
    for tables in _flattened(release, with_text=False):
        yield _arrow(part(tables), schema, columns)


def _span_batches(release: ReleaseView, columns: list[str]) -> Iterator[pa.Table]:
    """``sdoh.spans``'s asked ``columns`` kind by kind: the note texts are read only for ``text_length``."""
    kinds: dict[str, list[pa.Table]] = {kind: [] for kind in SPAN_KINDS}
    for tables in _flattened(release, with_text="text_length" in columns):
        for kind, part in _span_parts(tables).items():
            kinds[kind].append(_arrow(part, SPANS, columns))
    for kind in SPAN_KINDS:
        yield from kinds.pop(kind)


def _arrow(part: pd.DataFrame, schema: pa.Schema, columns: list[str]) -> pa.Table:
    """The asked ``columns`` of a quality table's part (with its keys), as Arrow of the table's ``schema``."""
    wanted = [field for field in schema if field.name in _KEYS or field.name in columns]
    chosen = pa.schema([field for field in wanted if field.name in part.columns])
    return pa.Table.from_pandas(part[chosen.names], schema=chosen, preserve_index=False)


def _event_names(tables: dict[str, pd.DataFrame]) -> pa.Array:
    """``<note> <event>`` of every event of a batch."""
    notes, events = tables[CONFIG], tables[f"{CONFIG}.events"]
    note_ids = pa.array(notes["id"]).take(notes.index.get_indexer(pd.Index(events["_row"])))
    return _joined(" ", note_ids, pa.array(events["id"]))


def _required_part(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """A batch's part of ``sdoh.required_arguments``. The per-row strings are joined and gathered in Arrow:
    in pandas they were most of the suite's time on 50k notes."""
    events, arguments = tables[f"{CONFIG}.events"], tables[f"{CONFIG}.events.arguments"]
    lacking = pd.Series("", index=events.index)
    for event_type, required_types in REQUIRED_ARGUMENTS.items():
        for argument_type in required_types:
            holders = arguments.loc[arguments["type"] == argument_type, "_parent"]
            absent = (events["type"] == event_type) & ~events.index.isin(holders)
            lacking[absent] += ", " + argument_type
    event = _series(_event_names(tables), events.index)
    missing = (event + ":" + lacking.str[1:]).where(lacking != "", "")
    required = pd.DataFrame(
        {"_split": events["_split"], "_row": events["_row"], "event": event, "type": events["type"], "missing": missing}
    )
    return required[required["type"].isin(CHALLENGE_EVENT_TYPES)]


def _slots_part(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """A batch's part of ``sdoh.value_slots``: the arguments of challenge events."""
    events, arguments = tables[f"{CONFIG}.events"], tables[f"{CONFIG}.events.arguments"]
    event_of_argument = events.index.get_indexer(pd.Index(arguments["_parent"]))
    event_types = pa.array(events["type"]).take(event_of_argument)
    slots = pd.DataFrame(
        {
            "_split": arguments["_split"],
            "_row": arguments["_row"],
            "event": _series(_event_names(tables).take(event_of_argument), arguments.index),
            "argument": arguments["id"],
            "slot": _series(
                _joined("/", event_types, pa.array(arguments["type"]), pa.array(arguments["subtype"])), arguments.index
            ),
        }
    )
    challenge = pc.is_in(event_types, pa.array(CHALLENGE_EVENT_TYPES, event_types.type))
    return slots[challenge.to_numpy(zero_copy_only=False)]


def _span_parts(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """A batch's spans of each kind (empty fragments left out), with their note's text length when the
    batch has the texts."""
    notes = tables[CONFIG]
    text_length = notes["text"].str.len() if "text" in notes else None
    parts = {}
    for kind, name, prefix in (
        ("trigger", "events", "trigger."),
        ("argument", "events.arguments", ""),
        ("unused", "unused_textbounds", ""),
        ("trigger fragment", "events.trigger.fragments", ""),
        ("argument fragment", "events.arguments.fragments", ""),
    ):
        table = tables[f"{CONFIG}.{name}"]
        part = pd.DataFrame({"kind": kind.split()[-1], "start": table[f"{prefix}start"], "end": table[f"{prefix}end"]})
        if text_length is not None:
            part["text_length"] = text_length.loc[table["_row"]].to_numpy()
        parts[kind] = part[part["start"] < part["end"]] if kind.endswith("fragment") else part
    return parts


def _joined(separator: str, *columns: pa.Array) -> pa.Array:
    """Each row's strings of ``columns`` joined by ``separator`` (null where one is null)."""
    return pc.binary_join_element_wise(*columns, pa.scalar(separator, columns[0].type))


def _series(strings: pa.Array, index: pd.Index) -> pd.Series:
    """Arrow strings as a pandas string column on ``index``."""
    return pd.Series(strings.to_pandas(), dtype="str").set_axis(index)


def _add_counts(counted: dict[str, pd.Series], name: str, counts: pd.Series) -> None:
    counted[name] = counts if name not in counted else counted[name].add(counts, fill_value=0)


def split_and_source(doc_id: str, ann_path: str | Path) -> tuple[str, str]:
    """The split and note source of ``<split>/<source>/<doc>``; a SourceError for any other layout."""
    parts = doc_id.split("/")
    if len(parts) != 3 or parts[0] not in SPLITS or parts[1] not in SOURCES:
        raise SourceError(
            ann_path,
            f"expected <split>/<source>/<doc>.ann under the shac source, with split one "
            f"of {', '.join(SPLITS)} and source one of {', '.join(SOURCES)}",
        )
    return parts[0], parts[1]


def note_from_brat(
    doc_id: str,
    text: str,
    doc: BratDocument,
    ann_path: str | Path,
    *,
    on_broken: OnBroken | None = None,
    has_ann_file: bool = True,
) -> SdohNote:
    """The release record of one BRAT document ``<split>/<source>/<doc>`` (``ann_path`` names it in errors;
    ``on_broken`` as in ``shac_annotations``; ``has_ann_file`` False for a ``.txt`` read without its ``.ann``)."""
    split, source = split_and_source(doc_id, ann_path)
    annotations = shac_annotations(doc, ann_path, SCHEME, on_broken=on_broken)
    doc = annotations.document
    spans = annotations.textbounds
    events = [
        {
            "id": event.id,
            "type": event.type,
            "trigger": _span(spans[event.trigger].textbound, text),
            "arguments": [{"role": role, **_typed_span(spans[target], text)} for role, target in event.arguments],
        }
        for event in annotations.events
    ]
    return SdohNote.model_validate(
        {
            "id": doc_id,
            "split": split,
            "source": source,
            "text": text,
            "events": events,
            "unused_textbounds": [_typed_span(span, text) for span in annotations.unused_textbounds],
            "relations": [
                {
                    "id": relation.id,
                    "type": relation.type,
                    "arguments": [{"role": role, "target": target} for role, target in relation.arguments],
                }
                for relation in doc.relations
            ],
            "notes": [
                {"id": note.id, "type": note.type, "target": note.target, "text": note.text} for note in doc.notes
            ],
            "equivalences": [
                {"type": equivalence.type, "members": list(equivalence.members)} for equivalence in doc.equivalences
            ],
            "normalizations": [dataclasses.asdict(normalization) for normalization in doc.normalizations],
            "has_ann_file": has_ann_file,
        }
    )


def _span(textbound: TextBound, text: str) -> dict[str, Any]:
    fragments = textbound.fragments
    start, end = fragments[0][0], fragments[-1][1]
    return {
        "id": textbound.id,
        "start": start,
        "end": end,
        "text": text[start:end],
        "fragments": [{"start": s, "end": e, "text": text[s:e]} for s, e in fragments] if len(fragments) > 1 else [],
    }


def _typed_span(span: ValuedTextBound, text: str) -> dict[str, Any]:
    typed = _span(span.textbound, text)
    typed["type"] = span.textbound.type
    typed["subtype"] = NOT_APPLICABLE if span.subtype is None else span.subtype
    return typed


NOTES_PER_BATCH = 2_000
"""Notes flattened at a time for the statistics and quality tables (a few MB of pandas: flat in the corpus size
from a few thousand notes on; 10,000 held ~140 MB more at 50k notes than at 5k)."""

_COLUMNS = {
    CONFIG: ["id", "split", "source", "has_ann_file"],
    f"{CONFIG}.events": ["id", "type", "trigger.start", "trigger.end"],
    f"{CONFIG}.events.arguments": ["id", "type", "subtype", "start", "end"],
    f"{CONFIG}.unused_textbounds": ["start", "end"],
    f"{CONFIG}.events.trigger.fragments": ["start", "end"],
    f"{CONFIG}.events.arguments.fragments": ["start", "end"],
}
"""The columns of the flattened tables the statistics and quality tables use (and ``text``, when asked)."""


def _flattened(release: ReleaseView, with_text: bool) -> Iterator[dict[str, pd.DataFrame]]:
    """The flattened tables the statistics and quality tables use, a batch of notes at a time; the notes'
    ``text`` only ``with_text``."""
    fields = ["id", "split", "source", *(["text"] if with_text else []), "events", "unused_textbounds", "has_ann_file"]
    columns = {**_COLUMNS, CONFIG: [*_COLUMNS[CONFIG], *(["text"] if with_text else [])]}
    return release.table_frames(CONFIG, fields, columns, NOTES_PER_BATCH)


def _crosstab(counts: pd.Series, groups: list[str], headers: list[str]) -> Table:
    """Counts (by keys, then split/source group) as a table with a column per group, plus a total column."""
    table = counts.unstack("group", fill_value=0).reindex(columns=groups, fill_value=0)
    rows = [
        [*(key if isinstance(key, tuple) else (key,)), *map(int, values), int(sum(values))]
        for key, values in table.iterrows()
    ]
    return Table([*headers, *groups, "total"], rows)
