"""Builder of ``odie_anaphora``: anaphoric relations in clinical notes (Savova et al., JAMIA 2011).

Input, either:

- Knowtator XML: source ``knowtator`` (the adjudicated gold, ``<doc>.txt.knowtator.xml``) with
  source ``text`` (``<doc>.txt``); optional sources ``annotator_a`` and ``annotator_b`` (one
  folder per annotator) give Savova et al. 2011's pair-wise agreement and the chain scores;
- the i2b2/VA 2011 coreference layout: source ``i2b2`` (``docs/``, ``concepts/``, ``chains/``,
  optional ``pairs/``). When it is given it is used instead of the Knowtator gold. The format
  has no markable attributes and no Bagga classes (released as null) and only identity
  relations; without a pairs file each chain member is paired with the member before it.

Document names are ``<institution>_<note_type>_<nn>`` (``upmc_rad_01``).

A broken annotation of a note (see the README's "Real inputs") fails the build naming file and
line, or with ``--on-error quarantine`` goes alone to rejects.jsonl while the note is released
without it and without the pairs that need it; chains are rebuilt from the released pairs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, get_args

import pandas as pd

from clinical_corpora.builders.contract.base import AgreementReport, BuildContext, Builder, CardSection, Row, Table
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.sources.annotators import annotator_folders
from clinical_corpora.builders.sources.brat import TEXT_SUFFIX, read_utf8
from clinical_corpora.builders.sources.discovery import find_documents
from clinical_corpora.builders.sources.documents import keys_of, locator, read_document_files
from clinical_corpora.builders.sources.i2b2_coref import (
    DOCS_DIR,
    I2b2CorefDocument,
    TokenGrid,
    i2b2_documents,
    read_i2b2_files,
)
from clinical_corpora.builders.sources.knowtator import (
    KNOWTATOR_SUFFIX,
    KnowtatorDocument,
    RelationType,
    SemanticClass,
    knowtator_files,
    read_knowtator_file,
)
from clinical_corpora.core.errors import ClincorpError, SourceError, excerpt
from clinical_corpora.corpora.odie_anaphora import bigbio
from clinical_corpora.corpora.odie_anaphora.records import (
    Chain,
    Fragment,
    Institution,
    Markable,
    NoteType,
    OdieDocument,
    Pair,
)
from clinical_corpora.validation.agreement.pairwise import AgreementReport as PairwiseReport
from clinical_corpora.validation.agreement.pairwise import (
    AgreementTable,
    AnnotatedPairs,
    document_agreement,
    sum_by_group,
)
from clinical_corpora.validation.metrics.coref import Score, score_documents_all

CONFIG = "odie_anaphora"
SPLIT = "train"
RELATION_TYPES: tuple[str, ...] = get_args(RelationType)
SEMANTIC_CLASSES: tuple[SemanticClass, ...] = get_args(SemanticClass)
CHAIN_METRICS = ("muc", "b_cubed", "ceaf_e", "blanc")
ANNOTATOR_SOURCES = ("annotator_a", "annotator_b")
NOT_ANNOTATED = "(not annotated)"
BETWEEN_ANNOTATORS = "annotator_a vs annotator_b"
_DOCUMENT_NAME = re.compile(r"(?P<institution>[a-z]+)_(?P<note_type>[a-z]+)_\w+")


def document_kind(doc_id: str, where: Path) -> tuple[Institution, NoteType]:
    """Institution and note type from a name ``<institution>_<note_type>_<nn>``."""
    match = _DOCUMENT_NAME.fullmatch(doc_id)
    institutions, note_types = get_args(Institution), get_args(NoteType)
    if match is None or match["institution"] not in institutions or match["note_type"] not in note_types:
        raise SourceError(
            where,
            f"document name {doc_id!r} is not <institution>_<note_type>_<number> with "
            f"institution in {list(institutions)} and note type in {list(note_types)}",
        )
    return match["institution"], match["note_type"]  # type: ignore[return-value]


def _fragments(text: str, pieces: Iterable[tuple[int, int]]) -> list[Fragment]:
    return [Fragment(start=start, end=end, text=text[start:end]) for start, end in pieces]


def _chains(chains: Iterable[Iterable[str]]) -> list[Chain]:
    return [Chain(id=f"chain_{number}", markable_ids=list(ids)) for number, ids in enumerate(chains, start=1)]


def knowtator_record(document: KnowtatorDocument, where: Path) -> OdieDocument:
    """The released row of a Knowtator gold document."""
    institution, note_type = document_kind(document.doc_id, where)
    text = document.text
    return OdieDocument(
        id=document.doc_id,
        institution=institution,
        note_type=note_type,
        text=text,
        markables=[
            Markable(
                id=m.id,
                start=m.start,
                end=m.end,
                text=text[m.start : m.end],
                fragments=_fragments(text, m.fragments),
                grammatical_category=m.grammatical_category,
                sentence_function=m.sentence_function,
                semantic_class=m.semantic_class,
            )
            for m in document.markables
        ],
        pairs=[
            Pair(
                id=p.id,
                anaphor_id=p.anaphor_id,
                antecedent_id=p.antecedent_id,
                bagga_class=p.bagga_class,
                relation=p.relation,
            )
            for p in document.pairs
        ],
        chains=_chains(document.identity_chains()),
    )


def i2b2_record(document: I2b2CorefDocument, where: Path) -> OdieDocument:
    """The released row of an i2b2/VA document: markable ids are the concepts' ``L:T-L:T`` positions."""
    institution, note_type = document_kind(document.doc_id, where)
    grid = TokenGrid(document.text)

    def markable_id(start: int, end: int) -> str:
        start_line, start_token, end_line, end_token = grid.position(start, end)
        return f"{start_line}:{start_token}-{end_line}:{end_token}"

    markables = []
    for concept in document.concepts:
        semantic_class = next((name for name in SEMANTIC_CLASSES if name == concept.type.replace(" ", "_")), None)
        if semantic_class is None:
            raise SourceError(
                concept.source or where,
                f"concept {excerpt(concept.text)} has type {concept.type!r}; expected one of "
                f"{[name.replace('_', ' ') for name in SEMANTIC_CLASSES]}",
                line=concept.line,
                record=None if concept.line else document.doc_id,
            )
        markables.append(
            Markable(
                id=markable_id(concept.start, concept.end),
                start=concept.start,
                end=concept.end,
                text=concept.text,
                fragments=_fragments(document.text, [(concept.start, concept.end)]),
                grammatical_category=None,
                sentence_function=None,
                semantic_class=semantic_class,
            )
        )
    offsets = sorted(sorted((c.start, c.end) for c in chain.concepts) for chain in document.chains)
    chains = [[markable_id(start, end) for start, end in chain] for chain in offsets]  # text order
    position = {m.id: (m.start, m.end) for m in markables}
    links = (
        [
            (markable_id(p.anaphor.start, p.anaphor.end), markable_id(p.antecedent.start, p.antecedent.end))
            for p in document.pairs
        ]
        if document.pairs
        else [(anaphor, antecedent) for chain in chains for antecedent, anaphor in pairwise(chain)]
    )
    links.sort(key=lambda link: (position[link[0]], position[link[1]]))
    pairs = [
        Pair(
            id=f"{anaphor}>{antecedent}",
            anaphor_id=anaphor,
            antecedent_id=antecedent,
            bagga_class=None,
            relation="identity",
        )
        for anaphor, antecedent in links
    ]
    return OdieDocument(
        id=document.doc_id,
        institution=institution,
        note_type=note_type,
        text=document.text,
        markables=markables,
        pairs=pairs,
        chains=_chains(chains),
    )


@dataclass(frozen=True)
class _Comparison:
    """One annotation against a reference: pair tables per group (and ``"all"``), chain scores."""

    label: str
    groups: dict[str, PairwiseReport]
    chains: dict[str, Score]

    @property
    def overall(self) -> AgreementTable:
        return self.groups["all"].overall


class OdieAnaphoraBuilder(Builder):
    VERSION = "1.1.0"
    CONFIGS = {CONFIG: OdieDocument, bigbio.CONFIG: bigbio.KbDocument}
    DOCUMENTS = {
        "knowtator": f"one Knowtator file per note, <institution>_<note_type>_<nn>{KNOWTATOR_SUFFIX}",
        "i2b2": f"one text file per note, {DOCS_DIR}/<institution>_<note_type>_<nn>.txt",
    }

    def count(self, ctx: BuildContext) -> int:
        if ctx.has_source("i2b2"):
            return len(i2b2_documents(ctx.source("i2b2"), quiet=True))
        return len(_gold_notes(ctx, quiet=True))

    def source_documents(self, ctx: BuildContext, config: str, row: Mapping[str, Any]) -> list[str]:
        """The note's text file: ``i2b2:docs/<id>.txt`` for the i2b2 input, else ``text:<id>.txt``."""
        if config not in (CONFIG, bigbio.CONFIG):
            return super().source_documents(ctx, config, row)
        if ctx.has_source("i2b2"):
            return [locator("i2b2", f"{DOCS_DIR}/{row['id']}{TEXT_SUFFIX}")]
        return [locator("text", f"{row['id']}{TEXT_SUFFIX}")]

    def read_documents(self, ctx: BuildContext, locators: Collection[str]) -> Iterator[tuple[str, str]]:
        """The wanted note texts, found as a build finds them (suffixes in any case)."""
        if keys_of("text", locators):
            texts = find_documents(ctx.source("text"), [TEXT_SUFFIX], what="note texts <doc>.txt", quiet=True)
            yield from read_document_files("text", texts, locators)
        wanted = set(keys_of("i2b2", locators))
        if wanted:
            for files in i2b2_documents(ctx.source("i2b2"), quiet=True):
                key = f"{DOCS_DIR}/{files.doc_id}{TEXT_SUFFIX}"
                if key in wanted and files.has(DOCS_DIR):
                    yield locator("i2b2", key), read_utf8(files.path(DOCS_DIR))

    def shards(self, ctx: BuildContext) -> dict[str, list[Any]]:
        """The i2b2 documents, or the gold notes (doc id, Knowtator file, text file): each note builds alone."""
        if ctx.has_source("i2b2"):
            return {"notes": list(i2b2_documents(ctx.source("i2b2")))}
        return {"notes": list(_gold_notes(ctx).items())}

    def generate_shard(self, ctx: BuildContext, notes: Sequence[Any] = ()) -> Iterator[Row]:
        """One row per note. A note missing a file (text, concepts or chains; a Knowtator file without its
        text or a text without its Knowtator file) fails the build naming it, or is quarantined."""
        if ctx.has_source("i2b2"):
            for files in notes:
                text_path = files.path(DOCS_DIR)
                with ctx.record(f"{text_path} [{files.doc_id}]"):
                    i2b2_document = read_i2b2_files(files)
                    _quarantine(ctx, i2b2_document.problems)
                    record = i2b2_record(i2b2_document, text_path)
                    yield Row(CONFIG, SPLIT, record)
                    yield Row(bigbio.CONFIG, SPLIT, bigbio.kb_document(record))
            return
        for doc_id, (xml_path, note_path) in notes:
            with ctx.record(f"{xml_path or note_path} [{doc_id}]"):
                if xml_path is None:
                    raise SourceError(
                        note_path or doc_id,
                        f"no {doc_id}{KNOWTATOR_SUFFIX} in source knowtator: expected every note's annotations",
                    )
                document = read_knowtator_file(xml_path, ctx.source("text"))
                _quarantine(ctx, document.problems)
                record = knowtator_record(document, xml_path)
                yield Row(CONFIG, SPLIT, record)
                yield Row(bigbio.CONFIG, SPLIT, bigbio.kb_document(record))

    def agreement(self, ctx: BuildContext, release: ReleaseView) -> AgreementReport | None:
        """Savova et al. 2011's pair-wise F and kappa, and chain scores, of the two annotators of the
        Knowtator input."""
        given = [name for name in ANNOTATOR_SOURCES if ctx.has_source(name)]
        if ctx.has_source("i2b2") or not given:
            return None
        if len(given) == 1:
            raise ClincorpError(
                f"only source {given[0]!r} is given: the agreement needs both "
                f"{' and '.join(ANNOTATOR_SOURCES)}, or neither"
            )
        gold_dir, text_dir = ctx.source("knowtator"), ctx.source("text")
        gold_files = knowtator_files(gold_dir, quiet=True)
        gold = {row["id"]: read_knowtator_file(gold_files[row["id"]], text_dir) for _, row in release.rows(CONFIG)}
        folders = annotator_folders({name: ctx.source(name) for name in ANNOTATOR_SOURCES}, KNOWTATOR_SUFFIX)
        first, second = (_read_annotator(folder, text_dir) for folder in folders.values())
        broken = [p for annotator in (first, second) for d in annotator.values() for p in d.problems]
        _quarantine(ctx, broken)
        comparisons = [
            _compare(BETWEEN_ANNOTATORS, first, second, _by_note_type),
            _compare("annotator_a vs gold", first, gold, _by_annotator(first)),
            _compare("annotator_b vs gold", second, gold, _by_annotator(second)),
        ]
        between, first_gold, second_gold = comparisons
        measures = {
            "kappa": between.overall.kappa,
            "f_score": between.overall.f_score,
            **{f"chains_{metric}_f1": between.chains[metric].f1 for metric in CHAIN_METRICS},
            "annotator_a_gold_kappa": first_gold.overall.kappa,
            "annotator_b_gold_kappa": second_gold.overall.kappa,
        }
        left_out = [
            *(f"{doc_id} (not in the released gold)" for doc_id in sorted({*first, *second} - set(gold))),
            *(f"{doc_id} (annotated by one annotator only)" for doc_id in sorted(set(first) ^ set(second))),
        ]
        sections = _agreement_sections(comparisons, left_out)
        if broken:
            sections.append(
                CardSection(
                    "Annotators' annotations left out of the agreement",
                    "Broken annotations of the annotators' files (quarantined with --on-error quarantine; "
                    "the pairs that need them are left out too): "
                    + "; ".join(f"{ctx.relative(p.location)}: {p.message}" for p in broken),
                )
            )
        return AgreementReport(measures, sections)

    def statistics(self, release: ReleaseView) -> list[CardSection]:
        """Savova et al. 2011's corpus characteristics, from the released rows."""
        rows = [row for _, row in release.rows(CONFIG)]
        markables = [m for row in rows for m in row["markables"]]
        pairs = [(row["note_type"], p) for row in rows for p in row["pairs"]]
        chain_sizes = [len(c["markable_ids"]) for row in rows for c in row["chains"]]
        documents = max(len(rows), 1)
        overview = Table(
            ["", "total", "per note"],
            [
                ["notes", len(rows), 1.0],
                ["markables", len(markables), len(markables) / documents],
                ["pairs", len(pairs), len(pairs) / documents],
                ["identity chains", len(chain_sizes), len(chain_sizes) / documents],
            ],
        )
        chain_text = (
            f"Chain length (markables per chain) ranges from {min(chain_sizes)} to {max(chain_sizes)}."
            if chain_sizes
            else "No identity chains."
        )
        note_types = sorted({note_type for note_type, _ in pairs})
        by_note_type = Counter((note_type, p["relation"]) for note_type, p in pairs)
        relation_rows = [
            [
                relation,
                *(by_note_type[(t, relation)] for t in note_types),
                sum(by_note_type[(t, relation)] for t in note_types),
            ]
            for relation in RELATION_TYPES
        ]
        return [
            CardSection("Corpus statistics", chain_text, overview),
            _distribution("Semantic classes of markables", (m["semantic_class"] for m in markables)),
            _distribution("Grammatical categories of markables", (m["grammatical_category"] for m in markables)),
            CardSection(
                "Relation types of pairs, per note type", table=Table(["relation", *note_types, "all"], relation_rows)
            ),
            _distribution("Bagga classes of pairs", (p["bagga_class"] for _, p in pairs)),
        ]

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


def _gold_notes(ctx: BuildContext, *, quiet: bool = False) -> dict[str, tuple[Path | None, Path | None]]:
    """Note id → its gold Knowtator file and its text (None when missing), sorted by id."""
    annotated = knowtator_files(ctx.source("knowtator"), quiet=quiet)
    texts = find_documents(ctx.source("text"), [TEXT_SUFFIX], what="note texts <doc>.txt", quiet=quiet)
    text_of = {document.id: document.require(TEXT_SUFFIX) for document in texts}
    return {doc_id: (annotated.get(doc_id), text_of.get(doc_id)) for doc_id in sorted({*annotated, *text_of})}


def _quarantine(ctx: BuildContext, problems: Iterable[SourceError]) -> None:
    """Each broken annotation of a note fails the build, or with --on-error quarantine goes to
    rejects.jsonl alone while the note is released without it."""
    for problem in problems:
        with ctx.annotation(problem.location):
            raise problem


def _read_annotator(folder: Path, text_dir: Path) -> dict[str, KnowtatorDocument]:
    documents = {}
    for xml_path in knowtator_files(folder).values():
        document = read_knowtator_file(xml_path, text_dir)
        document_kind(document.doc_id, xml_path)
        documents[document.doc_id] = document
    return documents


Grouping = Callable[[str], str]


def _by_note_type(doc_id: str) -> str:
    return doc_id.split("_")[1]


def _by_annotator(documents: dict[str, KnowtatorDocument]) -> Grouping:
    return lambda doc_id: "+".join(documents[doc_id].annotators) or "unnamed annotator"


def _annotated(document: KnowtatorDocument) -> AnnotatedPairs:
    return AnnotatedPairs(document.semantic_classes_by_key(), document.pair_keys())


def _compare(
    label: str, response: dict[str, KnowtatorDocument], reference: dict[str, KnowtatorDocument], group: Grouping
) -> _Comparison:
    """Pair tables (summed per group) and chain scores over the documents both annotations have."""
    shared = sorted(set(response) & set(reference))
    groups = sum_by_group(
        (group(doc_id), document_agreement(_annotated(response[doc_id]), _annotated(reference[doc_id]), RELATION_TYPES))
        for doc_id in shared
    )
    chains = score_documents_all(
        {d: reference[d].identity_chain_keys() for d in shared},
        {d: response[d].identity_chain_keys() for d in shared},
        CHAIN_METRICS,
    )
    return _Comparison(label, groups, chains)


MEASURE_ROWS = {
    "true_positive": "True positive",
    "false_positive": "False positive",
    "false_negative": "False negative",
    "true_negative": "True negative",
    "precision": "Precision",
    "recall": "Recall",
    "f_score": "F-score",
    "kappa": "κ",
}


def _measure_table(columns: dict[str, AgreementTable]) -> Table:
    """Savova et al. 2011's layout: one row per measure, one column per group."""
    values = {name: table.as_dict() for name, table in columns.items()}
    return Table(
        ["", *columns], [[label, *(values[name][key] for name in columns)] for key, label in MEASURE_ROWS.items()]
    )


def _agreement_sections(comparisons: list[_Comparison], left_out: list[str]) -> list[CardSection]:
    between, *against_gold = comparisons
    totals = between.groups["all"]
    note_types = {name: between.groups[name].overall for name in sorted(between.groups) if name != "all"}
    sections = [
        CardSection(
            "Pair-wise agreement between the annotators",
            "Annotator A against annotator B (the reference) over (anaphor, antecedent, relation) "
            "triples, summed over notes, overall and per note type; κ counts as true negatives every "
            "other ordered markable pair with each of the four relation types (Savova et al. 2011, "
            "eqns 1-8).",
            _measure_table({"all": between.overall, **note_types}),
        ),
        CardSection("Pair-wise agreement per relation type", table=_measure_table(dict(totals.by_relation))),
        CardSection(
            "Pair-wise agreement per markable type",
            "Pairs grouped by the semantic class of their anaphor.",
            _measure_table(dict(sorted(totals.by_markable_type.items()))),
        ),
        CardSection(
            "Pair-wise agreement of each annotator with the gold standard",
            "Columns name the annotators recorded in the Knowtator files.",
            _measure_table(
                {
                    f"{name} and gold": report.overall
                    for comparison in against_gold
                    for name, report in sorted(comparison.groups.items())
                    if name != "all"
                }
            ),
        ),
        CardSection(
            "Identity chains scored as coreference",
            "Identity chains of the response against the reference with the CoNLL-2012 scorer's "
            "definitions, mentions matched by exact span.",
            Table(
                ["comparison", *(f"{metric} {part}" for metric in CHAIN_METRICS for part in ("R", "P", "F1"))],
                [[c.label, *(value for metric in CHAIN_METRICS for value in c.chains[metric])] for c in comparisons],
            ),
        ),
    ]
    if left_out:
        sections.append(CardSection("Annotated notes left out of the agreement", ", ".join(left_out)))
    return sections


def _distribution(title: str, values: Iterable[str | None]) -> CardSection:
    counts = Counter(NOT_ANNOTATED if value is None else value for value in values)
    total = sum(counts.values()) or 1
    rows = [[name, count, count / total] for name, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return CardSection(title, table=Table(["value", "count", "share"], rows))
