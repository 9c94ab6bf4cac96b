"""sdoh's exports: ``brat``, the SHAC layout ``{split}/{source}/<doc>.txt|.ann`` that the n2c2 2022 scorer
(and ``clincorp score sdoh``) reads and that releases the corpus again (``--source shac=DIR``)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.exporters.base import Exporter, Record, ReleaseInputs
from clinical_corpora.builders.exporters.brat import write_brat_document
from clinical_corpora.builders.sources.brat.annotations import (
    Attribute,
    BratDocument,
    Equivalence,
    Event,
    Normalization,
    Note,
    Relation,
    TextBound,
)
from clinical_corpora.builders.sources.shac import VALUE_SUFFIX
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.validation.metrics.sdoh import NOT_APPLICABLE

CONFIG = "sdoh"
ANNOTATION_FIELDS = ("events", "unused_textbounds", "relations", "notes", "equivalences", "normalizations")


def note_annotations(note: Record) -> BratDocument | None:
    """The BRAT annotations of a released note; None for a note released without a ``.ann``.

    Text-bounds are written triggers and arguments first (event order), then the unused ones; each
    subtype other than ``N/A`` becomes a ``<Type>Val`` attribute, numbered ``A1``, ``A2``, … in that order.
    """
    if not note["has_ann_file"]:
        if any(note[name] for name in ANNOTATION_FIELDS):
            raise ClincorpError(f"{note['id']}: has annotations but no .ann file (has_ann_file is false)")
        return None
    text = note["text"]
    textbounds: dict[str, TextBound] = {}
    values: dict[str, str] = {}

    def add(span: Record, span_type: str) -> None:
        fragments = tuple((f["start"], f["end"]) for f in span["fragments"]) or ((span["start"], span["end"]),)
        textbounds.setdefault(span["id"], TextBound.from_offsets(span["id"], span_type, fragments, text))
        if span.get("subtype", NOT_APPLICABLE) != NOT_APPLICABLE:
            values[span["id"]] = span["subtype"]

    for event in note["events"]:
        add(event["trigger"], event["type"])
        for argument in event["arguments"]:
            add(argument, argument["type"])
    for bound in note["unused_textbounds"]:
        add(bound, bound["type"])
    return BratDocument(
        textbounds=tuple(textbounds.values()),
        events=tuple(
            Event(e["id"], e["type"], e["trigger"]["id"], tuple((a["role"], a["id"]) for a in e["arguments"]))
            for e in note["events"]
        ),
        attributes=tuple(
            Attribute(f"A{number}", f"{textbounds[target].type}{VALUE_SUFFIX}", target, value)
            for number, (target, value) in enumerate(values.items(), start=1)
        ),
        relations=tuple(
            Relation(r["id"], r["type"], tuple((a["role"], a["target"]) for a in r["arguments"]))
            for r in note["relations"]
        ),
        notes=tuple(Note(n["id"], n["type"], n["target"], n["text"]) for n in note["notes"]),
        equivalences=tuple(Equivalence(e["type"], tuple(e["members"])) for e in note["equivalences"]),
        normalizations=tuple(
            Normalization(n["id"], n["type"], n["target"], n["resource"], n["entry"], n["text"])
            for n in note["normalizations"]
        ),
    )


def write_shac(
    view: ReleaseView, out: Path, splits: list[str] | None = None, *, empty_ann: bool = False
) -> Iterator[tuple[str, int]]:
    """Write the notes of ``splits`` (all by default) as ``out/<split>/<source>/<doc>``; yields (split, notes).
    ``empty_ann`` writes an empty ``.ann`` beside a note that came without one."""
    for split in splits or view.splits(CONFIG):
        count = 0
        for _, note in view.rows(CONFIG, split):
            annotations = note_annotations(note)
            if annotations is None and empty_ann:
                annotations = BratDocument()
            write_brat_document(out, note["id"], note["text"], annotations)
            count += 1
        yield split, count


class ShacBrat(Exporter):
    """Write an sdoh release as SHAC BRAT folders, ``{split}/{source}/<doc>.txt`` and ``<doc>.ann``, the layout
    the n2c2 2022 SDOH scorer and ``clincorp score sdoh`` read and ``clincorp release sdoh --source shac=DIR``
    releases again. A note that came without a ``.ann`` is written as its ``.txt`` alone. Nothing released is
    lost; the release itself keeps neither the order of lines in an ``.ann`` (written: text-bounds, events,
    attributes, relations, normalisations, notes, equivalences) nor attribute ids (written ``A1``, ``A2``, …)."""

    configs = (CONFIG,)

    def configure(self, parser: argparse.ArgumentParser) -> None:
        super().configure(parser)
        parser.add_argument(
            "--empty-ann",
            action="store_true",
            help="write an empty .ann beside a note that came without one: the official n2c2 scorer needs every "
            ".txt paired with a .ann (a release from these files then says those notes had a .ann)",
        )

    def write(self, view: ReleaseView, out: Path, options: argparse.Namespace | None = None) -> Iterator[str]:
        empty_ann = options is not None and options.empty_ann
        for split, count in write_shac(view, out, empty_ann=empty_ann):
            yield f"{CONFIG}/{split}: {count} notes written under {out / split}"

    def reread(self, out: Path) -> ReleaseInputs:
        return ReleaseInputs({"shac": out})


brat = ShacBrat()
