"""SNOMED CT Entity Linking Challenge corpus (Davidson et al. 2025): MIMIC-IV-Note discharge notes and
span → concept links.

Sources: ``notes`` (MIMIC-IV-Note ``discharge.csv.gz`` or the challenge's ``note_id,text`` CSV, streamed
and reduced to the annotated notes), ``annotations`` (``train_annotations.csv``), optional
``test_annotations`` (the challenge's held-out test annotations, same columns), ``terminology`` (an RF2
Snapshot folder) and optional ``annotators`` (one ``note_id,start,end,concept_id`` CSV per annotator,
named by its file stem, for agreement).

Configs: ``snomed_el`` (one row per note), ``concepts`` (the concepts the annotations use) and
``concept_stats`` (Davidson et al. 2025's concept difficulty features); the last two have one split, ``full``.
Splits of ``snomed_el``: the challenge's when ``test_annotations`` is given, else a seeded split by
note (``TEST_FRACTION`` of the notes, shuffled with ``SPLIT_SEED``).

Checks: every annotated note exists, spans lie inside the text, are not whitespace-only and do not
overlap, concepts are active and under Clinical finding, Procedure or Body structure. Spans with
leading or trailing whitespace are reported in the card; :class:`TrimmingSnomedElBuilder` trims them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from clinical_corpora.builders.contract.base import (
    AgreementReport,
    BuildContext,
    Builder,
    CardSection,
    Partial,
    Row,
    Table,
)
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.sources.annotators import annotator_folders
from clinical_corpora.builders.sources.documents import keys_of, locator
from clinical_corpora.builders.sources.mimic_notes import iter_notes, read_span_annotations
from clinical_corpora.builders.sources.rf2 import Terminology, load_snapshot
from clinical_corpora.core.annotations import SpanAnnotation
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.core.splits import seeded_split
from clinical_corpora.corpora.snomed_el import bigbio
from clinical_corpora.corpora.snomed_el.records import ConceptRecord, ConceptStats, LinkedSpan, Note, Split
from clinical_corpora.validation.agreement.jaccard import mean_pairwise_jaccard
from clinical_corpora.validation.metrics.concept_difficulty import Mention, concept_difficulty

SPLIT_SEED = 20240301
TEST_FRACTION = 0.25
"""The challenge held out 68 of its 272 notes (25%) as the test set."""
CONCEPT_SPLIT = "full"
RELEASED_ANNOTATOR = "released"
MAX_LISTED_SPANS = 20
HIERARCHY_NAMES = {"finding": "Clinical finding", "procedure": "Procedure", "body_structure": "Body structure"}


@dataclass(frozen=True)
class NoteAnnotations:
    """The annotations of one note, the split they came with and the file they were read from."""

    split: Split
    path: Path
    spans: list[SpanAnnotation]


@dataclass(frozen=True)
class NoteDocument:
    """An annotated note as a shard builds it: its annotations, and its text and line in the notes file
    (no text: the notes file lacks it)."""

    note_id: str
    annotations: NoteAnnotations
    text: str | None = None
    line: int = 0


@dataclass(frozen=True)
class NotePartial:
    """What one note adds to the cross-note tables: its released mentions (none if rejected) and the
    spans read with leading or trailing whitespace (before any rejection)."""

    mentions: list[Mention]
    padded_spans: list[tuple[str, int, int]]


class SnomedElBuilder(Builder):
    """Builds ``snomed_el``, ``concepts`` and ``concept_stats``; keeps span boundaries as annotated."""

    VERSION = "1.1.0"
    CONFIGS = {
        "snomed_el": Note,
        "concepts": ConceptRecord,
        "concept_stats": ConceptStats,
        bigbio.CONFIG: bigbio.KbDocument,
    }
    TRIM_WHITESPACE: ClassVar[bool] = False
    DOCUMENTS: ClassVar[dict[str, str]] = {
        "annotations": "train_annotations.csv rows note_id,start,end,concept_id naming notes of the notes file"
    }

    def __init__(self) -> None:
        self.padded_spans: list[tuple[str, int, int]] = []
        """(note_id, start, end) of spans read with leading or trailing whitespace (as annotated)."""
        self._terminologies: dict[Path, Terminology] = {}

    def _terminology(self, ctx: BuildContext) -> Terminology:
        """The RF2 snapshot, loaded once (by :meth:`shards`, in the main process; forked workers share it)."""
        path = ctx.source("terminology")
        if path not in self._terminologies:
            self._terminologies[path] = load_snapshot(path)
        return self._terminologies[path]

    def count(self, ctx: BuildContext) -> int:
        """The annotated notes (the annotation files are small; the notes file is not read)."""
        return len(read_annotations(ctx))

    def shards(self, ctx: BuildContext) -> dict[str, Any]:
        """The annotated notes in notes-file order, read in one pass over it, then those it lacks."""
        by_note = read_annotations(ctx)
        self._terminology(ctx)
        documents = [
            NoteDocument(raw.note_id, by_note[raw.note_id], raw.text, raw.line)
            for raw in iter_notes(ctx.source("notes"), by_note.keys())
        ]
        seen = {document.note_id for document in documents}
        documents += [NoteDocument(note_id, by_note[note_id]) for note_id in sorted(by_note.keys() - seen)]
        return {"notes": documents}

    def generate_shard(self, ctx: BuildContext, notes: Iterable[NoteDocument] = ()) -> Iterator[Row | Partial]:
        """Per note: its record and BigBio document, and (a :class:`NotePartial`) its mentions and padded
        spans; a note the notes file lacks fails the build or is quarantined."""
        terminology, notes_path = self._terminology(ctx), ctx.source("notes")
        for document in notes:
            annotations = document.annotations
            if document.text is None:
                with ctx.record(f"{annotations.path} [{document.note_id}]"):
                    raise SourceError(
                        annotations.path,
                        f"note_id {document.note_id!r} is not in the notes file {notes_path.name}",
                        line=annotations.spans[0].line,
                    )
                continue
            partial = NotePartial([], [])
            with ctx.record(f"{notes_path}:{document.line} [{document.note_id}]"):
                note = Note(
                    note_id=document.note_id,
                    text=document.text,
                    split=annotations.split,
                    annotations=[
                        self._linked_span(
                            document.note_id, document.text, annotation, annotations.path, terminology, partial
                        )
                        for annotation in sorted(annotations.spans, key=lambda a: (a.start, a.end))
                    ],
                )
                partial.mentions.extend(
                    Mention(note.note_id, note.split, span.concept_id, span.text) for span in note.annotations
                )
                yield Row("snomed_el", note.split, note)
                yield Row(bigbio.CONFIG, note.split, bigbio.kb_document(note))
            yield Partial(partial)

    def aggregate(self, ctx: BuildContext, partials: list[NotePartial]) -> Iterator[Row]:
        """``concepts`` and ``concept_stats`` over every released note's mentions; the padded spans of
        every note read, for the card."""
        self.padded_spans = [span for partial in partials for span in partial.padded_spans]
        return concept_rows([mention for partial in partials for mention in partial.mentions], self._terminology(ctx))

    def _linked_span(
        self,
        note_id: str,
        text: str,
        annotation: SpanAnnotation,
        path: Path,
        terminology: Terminology,
        partial: NotePartial,
    ) -> LinkedSpan:
        """The released span of one annotation; a SourceError naming the annotation's line if it is wrong.
        A span with leading or trailing whitespace goes to the note's ``partial``."""
        start, end = annotation.start, annotation.end

        def problem(message: str) -> SourceError:
            return SourceError(path, f"note {note_id} span {start}-{end}: {message}", line=annotation.line)

        if end > len(text):
            raise problem(f"ends past the end of the note text ({len(text)} characters)")
        covered = text[start:end]
        stripped = covered.strip()
        if stripped and stripped != covered:
            partial.padded_spans.append((note_id, start, end))
            if self.TRIM_WHITESPACE:
                start += len(covered) - len(covered.lstrip())
                end -= len(covered) - len(covered.rstrip())
        concept_id = annotation.concept_id
        if concept_id not in terminology.active:
            state = "inactive" if concept_id in terminology.inactive else "not"
            raise problem(f"concept {concept_id} is {state} in the RF2 snapshot; expected an active concept")
        hierarchy = terminology.hierarchy.get(concept_id)
        if hierarchy is None:
            raise problem(
                f"concept {concept_id} {terminology.fsn[concept_id]!r} is not under "
                f"{', '.join(HIERARCHY_NAMES.values())}"
            )
        if concept_id not in terminology.depth:
            raise problem(f"concept {concept_id} has no active is-a path to the root concept")
        return LinkedSpan(
            start=start,
            end=end,
            text=text[start:end],
            concept_id=concept_id,
            fsn=terminology.fsn[concept_id],
            semantic_tag=terminology.semantic_tag[concept_id],
            hierarchy=hierarchy,
        )

    def agreement(self, ctx: BuildContext, release: ReleaseView) -> AgreementReport | None:
        """Mean pairwise Jaccard (Davidson et al. 2025) of the released annotations and each annotator
        file; None without."""
        if not ctx.has_source("annotators"):
            return None
        folder = ctx.source("annotators")
        files = annotator_folders(folder, ".csv")
        if not files:
            raise SourceError(folder, "expected one note_id,start,end,concept_id CSV per annotator")
        others = {name: read_span_annotations(path) for name, path in files.items()}
        annotated = {annotation.note_id for annotations in others.values() for annotation in annotations}
        annotators = {RELEASED_ANNOTATOR: released_annotations(release, annotated), **others}
        try:
            report = mean_pairwise_jaccard(annotators)
        except ValueError as error:
            raise ClincorpError(f"{folder}: {error}") from None
        rows: list[list[object]] = [
            [p.annotator_a, p.annotator_b, p.shared_notes, p.matched, p.only_a, p.only_b, p.jaccard]
            for p in report.pairs
        ]
        text = (
            "Jaccard similarity of the sets of (entity, concept) on the notes two annotators share, ignoring "
            "span boundary variation (an entity matches when spans overlap and the concept is the same), "
            f"averaged over annotator pairs (Davidson et al. 2025 report 0.85). `{RELEASED_ANNOTATOR}` is this release."
        )
        table = Table(["annotator A", "annotator B", "shared notes", "matched", "only A", "only B", "Jaccard"], rows)
        return AgreementReport({"mean_jaccard": report.mean_jaccard}, [CardSection("Agreement", text, table)])

    def statistics(self, release: ReleaseView) -> list[CardSection]:
        return [
            split_section(release),
            hierarchy_section(release),
            difficulty_section(release),
            self._whitespace_section(),
        ]

    def _whitespace_section(self) -> CardSection:
        action = (
            "trimmed to the first and last non-space character"
            if self.TRIM_WHITESPACE
            else "kept as annotated (TrimmingSnomedElBuilder trims them)"
        )
        listed = [[note_id, start, end] for note_id, start, end in self.padded_spans[:MAX_LISTED_SPANS]]
        return CardSection(
            "Span boundaries",
            f"{len(self.padded_spans)} annotated spans start or end with whitespace; they are {action}.",
            Table(["note_id", "start", "end"], listed) if listed else None,
        )

    def quality_tables(self, release: ReleaseView) -> dict[str, pd.DataFrame]:
        return {"snomed_el.concept_links": concept_links(release)}

    def source_documents(self, ctx: BuildContext, config: str, row: Mapping[str, Any]) -> list[str]:
        """The note (``notes:<note_id>``) and each linked concept's terms (``terminology:<concept id>``)."""
        if config == "snomed_el":
            concepts = sorted({span["concept_id"] for span in row["annotations"]})
            return [locator("notes", row["note_id"]), *(locator("terminology", str(c)) for c in concepts)]
        if config == "concepts":
            return [locator("terminology", str(row["concept_id"]))]
        if config == "concept_stats":
            return []
        if config == bigbio.CONFIG:
            return [locator("notes", row["document_id"])]
        return super().source_documents(ctx, config, row)

    def read_documents(self, ctx: BuildContext, locators: Collection[str]) -> Iterator[tuple[str, str]]:
        """The wanted notes in one pass over the notes file; a concept's document is its FSN then its
        synonyms, one a line, as the RF2 snapshot gives them."""
        note_ids = keys_of("notes", locators)
        if note_ids:
            for note in iter_notes(ctx.source("notes"), note_ids):
                yield locator("notes", note.note_id), note.text
        concept_ids = [int(key) for key in keys_of("terminology", locators) if key.isdigit()]
        if concept_ids:
            terminology = load_snapshot(ctx.source("terminology"))
            for concept_id in concept_ids:
                if concept_id in terminology.active:
                    concept = terminology.concept(concept_id)
                    yield locator("terminology", str(concept_id)), "\n".join((concept.fsn, *concept.synonyms))


class TrimmingSnomedElBuilder(SnomedElBuilder):
    """The same corpus with leading and trailing whitespace trimmed from span boundaries (opt-in)."""

    TRIM_WHITESPACE = True


def read_annotations(ctx: BuildContext) -> dict[str, NoteAnnotations]:
    """Annotations by note with their split: the challenge's when test annotations are given, else seeded."""
    by_file: dict[Split, Path] = {"train": ctx.source("annotations")}
    if ctx.has_source("test_annotations"):
        by_file["test"] = ctx.source("test_annotations")
    grouped: dict[str, NoteAnnotations] = {}
    for split, path in by_file.items():
        spans: dict[str, list[SpanAnnotation]] = defaultdict(list)
        for annotation in read_span_annotations(path):
            spans[annotation.note_id].append(annotation)
        for note_id, note_spans in spans.items():
            if note_id in grouped:
                raise SourceError(
                    path,
                    f"note {note_id} is also annotated in {grouped[note_id].path.name}; "
                    "expected the train and test notes to be disjoint",
                    line=note_spans[0].line,
                )
            grouped[note_id] = NoteAnnotations(split, path, note_spans)
    if "test" not in by_file:
        splits: dict[str, Split] = seeded_split(grouped, SPLIT_SEED, [("test", TEST_FRACTION)], "train")
        grouped = {
            note_id: NoteAnnotations(splits[note_id], notes.path, notes.spans) for note_id, notes in grouped.items()
        }
    return grouped


def concept_rows(mentions: list[Mention], terminology: Terminology) -> Iterator[Row]:
    """``concepts`` and ``concept_stats`` rows of the concepts linked in the released notes."""
    features = concept_difficulty(mentions, terminology.depth)
    for feature in features:
        concept = terminology.concept(feature.concept_id)
        yield Row(
            "concepts",
            CONCEPT_SPLIT,
            ConceptRecord.model_validate(asdict(concept) | {"synonyms": list(concept.synonyms)}),
        )
    for feature in features:
        yield Row("concept_stats", CONCEPT_SPLIT, ConceptStats(**asdict(feature)))


def _annotation_table(release: ReleaseView) -> pa.Table:
    """One row per released annotation: note_id, split, start, end, concept_id, fsn, hierarchy (ClassLabel id)."""
    notes = release.arrow("snomed_el", columns=["note_id", "annotations"])  # never the note texts
    annotations = notes.column("annotations").combine_chunks()
    parents = pc.list_parent_indices(annotations)
    items = pc.list_flatten(annotations)
    return pa.table(
        {
            "note_id": notes.column("note_id").take(parents),
            "split": release.split_labels("snomed_el").take(parents),
            **{name: items.field(name) for name in ("start", "end", "concept_id", "fsn", "hierarchy")},
        }
    )


def released_annotations(release: ReleaseView, notes: set[str] | None = None) -> list[SpanAnnotation]:
    """The released annotations (of ``notes`` only, when given: pairs of annotators compare the notes both
    annotated), as the reader's records (for agreement)."""
    table = _annotation_table(release)
    if notes is not None:
        table = table.filter(pc.is_in(table.column("note_id"), value_set=pa.array(sorted(notes), pa.string())))
    return [
        SpanAnnotation(note_id, start, end, concept_id)
        for note_id, start, end, concept_id in zip(
            *(table.column(name).to_pylist() for name in ("note_id", "start", "end", "concept_id")), strict=True
        )
    ]


def concept_links(release: ReleaseView) -> pd.DataFrame:
    """Each annotation's concept checked against the ``concepts`` config (listed, same FSN and hierarchy)."""
    frame = _annotation_table(release).to_pandas()
    concepts = release.arrow("concepts").select(["concept_id", "fsn", "hierarchy"]).to_pandas()
    merged = frame.merge(concepts, on="concept_id", how="left", suffixes=("", "_concept"), indicator=True)
    return pd.DataFrame(
        {
            "note_id": merged["note_id"],
            "concept_id": merged["concept_id"],
            "in_concepts": merged["_merge"] == "both",
            "same_fsn": merged["fsn"] == merged["fsn_concept"],
            "same_hierarchy": merged["hierarchy"] == merged["hierarchy_concept"],
        }
    )


def split_section(release: ReleaseView) -> CardSection:
    frame = _annotation_table(release).to_pandas()
    notes = {
        split: sum(map(release.rows_in, release.shards("snomed_el", split))) for split in release.splits("snomed_el")
    }
    rows: list[list[object]] = [
        [
            split,
            notes[split],
            int((frame["split"] == split).sum()),
            frame.loc[frame["split"] == split, "concept_id"].nunique(),
        ]
        for split in release.splits("snomed_el")
    ]
    return CardSection(
        "Notes, annotations and concepts per split",
        table=Table(["split", "notes", "annotations", "distinct concepts"], rows),
    )


def hierarchy_section(release: ReleaseView) -> CardSection:
    frame = _annotation_table(release).to_pandas()
    names = release.features("snomed_el")["annotations"].feature["hierarchy"].names
    counts = Counter(zip(frame["split"], (names[index] for index in frame["hierarchy"]), strict=True))
    splits = release.splits("snomed_el")
    rows: list[list[object]] = [
        [HIERARCHY_NAMES[name], *(counts[(split, name)] for split in splits)] for name in HIERARCHY_NAMES
    ]
    return CardSection("Annotations per hierarchy", table=Table(["hierarchy", *splits], rows))


def difficulty_section(release: ReleaseView) -> CardSection:
    stats = release.arrow("concept_stats").to_pandas()
    columns = [name for name in ConceptStats.model_fields if name != "concept_id"]
    rows: list[list[object]] = [[name, *_summary(stats[name])] for name in columns]
    text = (
        "Davidson et al. 2025's concept difficulty features over the annotated concepts (config `concept_stats`): mean "
        "span length in characters, concept entropy (bits, over the concept's case-folded span strings), "
        "annotation entropy (bits, over the concepts linked to those strings), examples in all splits and "
        "in the training split, notes holding the concept, and is-a depth below the root."
    )
    return CardSection("Concept difficulty features", text, Table(["feature", "mean", "median", "min", "max"], rows))


def _summary(values: pd.Series) -> list[object]:
    if values.empty:
        return ["", "", "", ""]
    return [float(values.mean()), float(values.median()), float(values.min()), float(values.max())]
