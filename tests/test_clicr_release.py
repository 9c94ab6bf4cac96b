"""End-to-end release of the clicr sample, its gates and card, splits, queries and bad input.

Expected values are read off the sample by hand: the pages under corpora/clicr/sample/bmj_html,
the mini UMLS (MRCONSO.RRF rows quoted where used) and the BRAT gold.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.contract.text_units import token_strings
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.checks import quality_tables
from clinical_corpora.builders.release.pipeline import Outcome, run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.release.writer import rows_per_row_group
from clinical_corpora.builders.sources.bmj_html import read_case_report
from clinical_corpora.core.errors import GateError, SourceError
from clinical_corpora.corpora.clicr import statistics as clicr_statistics
from clinical_corpora.corpora.clicr.agreement import entity_scores
from clinical_corpora.corpora.clicr.builder import ClicrBuilder, blank_repeats_passage
from clinical_corpora.corpora.clicr.entities import case_text
from clinical_corpora.corpora.clicr.entity_matcher import Entity
from clinical_corpora.corpora.clicr.records import ClicrDocument, ClicrQuery
from clinical_corpora.corpora.clicr.splits import assign_splits
from clinical_corpora.corpora.clicr.statistics import DocumentTally, PassageTally, QueryTally, query_tallies
from tests.conftest import SampleRelease

SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "clicr" / "sample"


@pytest.fixture(scope="module")
def released(sample_release: SampleRelease) -> Outcome:
    return sample_release("clicr")


@pytest.fixture(scope="module")
def view(released: Outcome) -> ReleaseView:
    return ReleaseView(released.folder)


@pytest.fixture(scope="module")
def queries(view: ReleaseView) -> dict[str, tuple[str, dict]]:
    return {row["id"]: (split, row) for split, row in view.rows("clicr")}


@pytest.fixture(scope="module")
def documents(view: ReleaseView) -> dict[str, tuple[str, dict]]:
    return {row["id"]: (split, row) for split, row in view.rows("clicr_documents")}


def test_release_counts_pages_and_rows_and_caches_the_index(released: Outcome, clincorp_cache: Path) -> None:
    """10 case documents and 40 queries, each query also in clicr_bigbio_qa."""
    assert released.manifest.counts.model_dump() == {
        "read": 10,
        "written": 90,
        "rejected": 0,
        "rejected_annotations": 0,
    }
    assert list(clincorp_cache.glob("umls-index-*"))


def test_one_document_per_case_split_8_1_1(documents: dict) -> None:
    assert len(documents) == 10
    assert sorted(split for split, _ in documents.values()).count("train") == 8
    assert {split for split, _ in documents.values()} == {"train", "dev", "test"}


def test_queries_share_their_case_split_and_passage(queries: dict, documents: dict) -> None:
    for split, query in queries.values():
        document_split, document = documents[query["document_id"]]
        assert split == document_split
        assert query["context"] == document["passage"]
        assert query["title"] == document["title"]
        assert query["query"].count("@placeholder") == 1


def test_queries_of_a_case_from_its_learning_points(queries: dict) -> None:
    # bcr-2019-228512: "Exertional rhabdomyolysis should be suspected in anyone with muscle pain and
    # dark urine after unaccustomed exercise." and "Early intravenous fluids can prevent acute kidney injury."
    case = {qid: row for qid, (_, row) in queries.items() if row["document_id"] == "bcr-2019-228512"}
    assert [case[f"bcr-2019-228512.{n}"]["query"] for n in range(1, 6)] == [
        "@placeholder should be suspected in anyone with muscle pain and dark urine after unaccustomed exercise.",
        "Exertional rhabdomyolysis should be suspected in anyone with @placeholder and dark urine after "
        "unaccustomed exercise.",
        "Exertional rhabdomyolysis should be suspected in anyone with muscle pain and @placeholder after "
        "unaccustomed exercise.",
        "Early @placeholder can prevent acute kidney injury.",
        "Early intravenous fluids can prevent @placeholder.",
    ]
    assert len(case) == 5


def test_answers_are_the_entity_then_its_umls_synonyms(queries: dict) -> None:
    # MRCONSO C9000030: Myalgia (MTH PN, SNOMEDCT_US PT: one after case-insensitive de-duplication),
    # Muscle pain (the original, left out), Muscle ache; MRSTY: T184 Sign or Symptom → problem.
    _, query = queries["bcr-2019-228512.2"]
    assert [(a["text"], a["origin"]) for a in query["answers"]] == [
        ("muscle pain", "dataset"),
        ("Myalgia", "UMLS"),
        ("Muscle ache", "UMLS"),
    ]
    assert {(a["cui"], a["sem_type"], a["category"]) for a in query["answers"]} == {
        ("C9000030", "Sign or Symptom", "problem")
    }


def test_answer_in_passage_uses_synonyms_and_whole_tokens(queries: dict) -> None:
    # bcr-2019-228962's passage says "macrocytic anaemia" but never "vitamin B12 deficiency",
    # "cobalamin deficiency" or "B12 deficiency" (it has "B12 level").
    assert queries["bcr-2019-228962.4"][1]["answer_in_passage"] is True
    assert queries["bcr-2019-228962.1"][1]["answer_in_passage"] is False
    # bcr-2019-228214: the passage says "bedwetting", a synonym of the answer "enuresis".
    assert queries["bcr-2019-228214.2"][1]["answer_in_passage"] is True


def test_learning_point_repeating_the_passage_gives_no_query(queries: dict, documents: dict) -> None:
    # bcr-2019-228859's third learning point copies a passage sentence: both its entities
    # (laparoscopic appendicectomy, antibiotics) are removed.
    _, document = documents["bcr-2019-228859"]
    assert document["repeated_queries_removed"] == 2
    assert len(document["learning_points"]) == 3
    assert sorted(qid for qid, (_, row) in queries.items() if row["document_id"] == "bcr-2019-228859") == [
        "bcr-2019-228859.1",
        "bcr-2019-228859.2",
        "bcr-2019-228859.3",
    ]


def test_case_without_learning_points_is_kept_as_passage(queries: dict, documents: dict) -> None:
    _, document = documents["bcr-2019-229047"]
    assert document["learning_points"] == []
    assert document["passage"].startswith("Summary\n\n")
    assert not any(row["document_id"] == "bcr-2019-229047" for _, row in queries.values())


def test_document_sections_entities_and_metadata(documents: dict) -> None:
    _, document = documents["bcr-2019-228512"]
    assert [s["heading"] for s in document["sections"]] == [
        "Summary",
        "Background",
        "Case presentation",
        "Investigations",
        "Treatment",
        "Outcome and follow-up",
        "Discussion",
    ]
    passage = document["passage"]
    for section in document["sections"]:
        assert passage[section["start"] : section["end"]].startswith(section["heading"])
    assert document["metadata"] == {
        "series": ["Unexpected outcome (positive or negative) including adverse drug reactions"],
        "specialties": ["Nephrology", "Sports and exercise medicine"],
        "year": 2019,
    }
    first = document["entities"][0]
    assert (first["text"], first["start"], first["category"]) == ("muscle pain", 39, "problem")
    assert "Learning points" not in passage and "References" not in passage


def test_agreement_against_the_gold_sample(released: Outcome) -> None:
    # Gold: 23 + 27 entities; recognised: 20 + 23; identical spans 20 + 19 = 39. Overlapping: 3 of
    # the 4 recognised-only spans (pulmonary embolism, chest pain, tachycardia; not "recurrence")
    # and 3 of the 11 gold-only ones (bilateral pulmonary embolism, sharp left-sided chest pain,
    # sinus tachycardia).
    validation = json.loads((released.folder / "validation.json").read_text(encoding="utf-8"))
    measures = validation["agreement"]
    assert measures["precision_exact"] == pytest.approx(39 / 43)
    assert measures["recall_exact"] == pytest.approx(39 / 50)
    assert measures["f1_exact"] == pytest.approx(78 / 93)
    assert measures["precision_overlap"] == pytest.approx(42 / 43)
    assert measures["recall_overlap"] == pytest.approx(42 / 50)


def test_card_reports_table_2_and_baselines(released: Outcome) -> None:
    card = (released.folder / "README.md").read_text(encoding="utf-8")
    assert "| cases | 10 |" in card
    assert "| cases without Learning points (passage only) | 1 |" in card
    assert "| queries removed (learning point repeats the passage) | 2 |" in card
    assert "## Answer categories" in card and "| rand-entity | test |" in card
    assert "Entity recognition against the gold sample" in card


def test_card_statistics_are_the_same_with_the_passages_counted_in_a_child_process(
    view: ReleaseView, monkeypatch: pytest.MonkeyPatch
) -> None:
    inline = ClicrBuilder().statistics(view)
    monkeypatch.setattr(clicr_statistics, "PASSAGES_APART", 1)  # the sample's 10 cases are counted apart
    assert ClicrBuilder().statistics(view) == inline


def test_card_tallies_read_in_arrow_agree_with_the_decoded_rows(
    view: ReleaseView, queries: dict, documents: dict
) -> None:
    expected = []
    for query_id, (split, row) in queries.items():
        answers = row["answers"]
        texts = tuple(answer["text"] for answer in answers)
        originals = tuple(answer["text"] for answer in answers if answer["origin"] == "dataset")
        in_passage = row["answer_in_passage"]
        expected.append(
            QueryTally(split, query_id, row["document_id"], texts, originals, answers[0]["category"], in_passage)
        )
    assert query_tallies(view) == expected
    tally = DocumentTally.of(view)
    entities = {case_id: [entity["text"] for entity in row["entities"]] for case_id, (_, row) in documents.items()}
    assert tally.entity_types == len({text.lower() for texts in entities.values() for text in texts})
    assert (tally.cases, tally.without_learning_points, tally.queries_removed) == (10, 1, 2)
    tokens = [token_strings(row["passage"].lower()) for _, row in documents.values()]
    assert PassageTally.of(view) == (
        sum(map(len, tokens)),
        len({token for found in tokens for token in found}),
        tuple(map(len, tokens)),
    )


def test_load_dataset_gives_class_labels(released: Outcome) -> None:
    loaded = datasets.load_dataset(str(released.folder), "clicr")
    answer = loaded["test"].features["answers"].feature
    assert answer["origin"].names == ["dataset", "UMLS"]
    assert answer["category"].names == ["problem", "treatment", "test"]
    assert loaded["test"][0]["id"] == "bcr-2019-228214.1"


def test_each_expectation_table_reads_its_own_fields_a_row_group_at_a_time(
    view: ReleaseView, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The passage check reads no entity, the entity checks no passage, 1k cases at a time (wide rows)."""
    manifest = find_corpus("clicr")
    tables = quality_tables(ClicrBuilder(), view, manifest.gates.expectations)
    cases = sum(1 for _ in view.rows("clicr_documents"))
    reads: list[tuple[list[str], int]] = []
    iter_batches = pq.ParquetFile.iter_batches

    def recorded(self: pq.ParquetFile, batch_size: int = 65_536, **options: Any) -> Any:
        reads.append((options["columns"], batch_size))
        return iter_batches(self, batch_size=batch_size, **options)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", recorded)
    passages = pa.concat_tables(tables["clicr_documents"](["passage"]))
    assert {tuple(columns) for columns, _ in reads} == {("id", "passage")} and {size for _, size in reads} == {1_000}
    assert passages.num_rows == cases
    reads.clear()
    entities = pa.concat_tables(tables["clicr_documents.entities"](["start", "end"]))
    assert {tuple(columns) for columns, _ in reads} == {("entities",)}
    assert entities.column_names == ["_split", "_row", "_parent", "start", "end"]
    assert rows_per_row_group(ClicrDocument) == rows_per_row_group(ClicrQuery) == 1_000


def test_assign_splits_is_seeded_and_proportional() -> None:
    ids = [f"bcr-{n:04d}" for n in range(1000)]
    splits = assign_splits(ids)
    assert splits == assign_splits(list(reversed(ids)))
    counts = {name: list(splits.values()).count(name) for name in ("train", "dev", "test")}
    assert counts == {"train": 870, "dev": 60, "test": 70}


def test_blank_repetition_uses_the_longer_side() -> None:
    point = "Sepsis received antibiotics for 24 hours after surgery."
    sepsis = Entity(0, 6, "Sepsis", "C0000001", "Disease or Syndrome", "problem")
    antibiotics = Entity(16, 27, "antibiotics", "C0000002", "Antibiotic", "treatment")
    assert blank_repeats_passage(point, sepsis, "She received antibiotics for 24 hours after surgery.")
    # sides "Sepsis received" (15 characters) and "for 24 hours after surgery." (27): only the longer counts
    assert blank_repeats_passage(point, antibiotics, "Given for 24 hours after surgery.")
    assert not blank_repeats_passage(point, antibiotics, "Sepsis received treatment.")


def test_entity_scores_by_hand() -> None:
    gold = {("d", 0, 5), ("d", 10, 20), ("d", 30, 35)}
    predicted = {("d", 0, 5), ("d", 12, 15), ("d", 40, 45)}
    scores = entity_scores(predicted, gold)
    assert scores["precision_exact"] == pytest.approx(1 / 3)
    assert scores["recall_overlap"] == pytest.approx(2 / 3)
    assert scores["f1_overlap"] == pytest.approx(2 / 3)


def _copy_sample(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLE, tmp_path / "sample")
    return tmp_path / "sample"


@pytest.mark.parametrize("workers", [1, 2])
def test_the_matcher_index_is_dropped_before_the_gates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """Built in this process or not, the index is not held while the expectations and the card run."""
    held: list[int] = []
    statistics = ClicrBuilder.statistics

    def counted(self: ClicrBuilder, release: ReleaseView) -> Any:
        held.append(len(self._matchers))
        return statistics(self, release)

    monkeypatch.setattr(ClicrBuilder, "statistics", counted)
    run(
        ReleaseRequest(
            find_corpus("clicr"),
            tmp_path / "out",
            sources={},
            samples=["bmj_html", "umls", "entity_gold"],
            workers=workers,
        )
    )
    assert held == [0]


def test_empty_page_fails_naming_the_file(tmp_path: Path) -> None:
    sample = _copy_sample(tmp_path)
    (sample / "bmj_html" / "bcr-2000-000001.html").write_text("", encoding="utf-8")
    with pytest.raises(SourceError, match=r"bcr-2000-000001\.html.*empty"):
        run(
            ReleaseRequest(
                find_corpus("clicr"), tmp_path / "out", sources={"bmj_html": sample / "bmj_html"}, samples=["umls"]
            )
        )
    assert not (tmp_path / "out" / "clicr" / f"clicr-{find_corpus('clicr').sample_version}").exists()


def test_quarantined_page_is_counted_and_gated(tmp_path: Path) -> None:
    sample = _copy_sample(tmp_path)
    (sample / "bmj_html" / "bcr-2000-000002.html").write_text("plain text, not a page", encoding="utf-8")
    with pytest.raises(GateError, match="max_rejects"):
        run(
            ReleaseRequest(
                find_corpus("clicr"),
                tmp_path / "out",
                sources={"bmj_html": sample / "bmj_html"},
                on_error="quarantine",
                samples=["umls"],
            )
        )
    rejects = (tmp_path / "out" / "clicr" / f"clicr-{find_corpus('clicr').sample_version}.rejects.jsonl").read_text(
        encoding="utf-8"
    )
    assert "bcr-2000-000002.html" in rejects and "not an HTML page" in rejects


def test_malformed_rrf_line_fails_naming_file_and_line(tmp_path: Path) -> None:
    sample = _copy_sample(tmp_path)
    mrsty = sample / "umls" / "META" / "MRSTY.RRF"
    lines = mrsty.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = "C9000003|T047|B2.2.1.2.1\n"
    mrsty.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(SourceError, match=r"MRSTY\.RRF:3: expected 6 fields"):
        run(
            ReleaseRequest(
                find_corpus("clicr"), tmp_path / "out", sources={"umls": sample / "umls" / "META"}, samples=["bmj_html"]
            )
        )


def _write_standoff(folder: Path, annotations: dict[str, str]) -> None:
    """BRAT standoff for every sample case: its case text, and ``annotations`` (.ann content) by case id."""
    folder.mkdir()
    for page in sorted((SAMPLE / "bmj_html").glob("*.html")):
        text, _ = case_text(read_case_report(page))
        (folder / f"{page.stem}.txt").write_text(text, encoding="utf-8")
        (folder / f"{page.stem}.ann").write_text(annotations.get(page.stem, ""), encoding="utf-8")


def test_entities_standoff_replaces_the_matcher(tmp_path: Path) -> None:
    case = read_case_report(SAMPLE / "bmj_html" / "bcr-2019-228512.html")
    text, point_starts = case_text(case)
    passage_start = text.index("her first spinning class")  # "her" is moved out of the entity
    urine = point_starts[0] + case.learning_points[0].index("dark urine")
    ann = (
        f"T1\ttreatment {passage_start} {passage_start + 24}\ther first spinning class\n"
        f"#1\tAnnotatorNotes T1\tC9000030\n"
        f"T2\tproblem {urine} {urine + 10}\tdark urine\n#2\tAnnotatorNotes T2\tC9000031\n"
    )
    _write_standoff(tmp_path / "entities", {"bcr-2019-228512": ann})
    (tmp_path / "no-gold").mkdir()
    sources = {"entities": tmp_path / "entities", "entity_gold": tmp_path / "no-gold"}
    # Only one case yields a query and the passages hold treatment entities only, so the query-yield
    # and entity-category expectations fail: build mode keeps the folder.
    with pytest.raises(GateError, match="expectations"):
        run(
            ReleaseRequest(
                find_corpus("clicr"), tmp_path / "out", sources=sources, mode="build", samples=["bmj_html", "umls"]
            )
        )
    view = ReleaseView(tmp_path / "out" / "clicr" / f"clicr-{find_corpus('clicr').sample_version}")
    validation = json.loads((view.folder / "validation.json").read_text(encoding="utf-8"))
    assert validation["agreement"] is None  # an empty entity_gold folder: the check is not run
    failed = [d for gate in validation["gates"] for d in gate["details"] if not d["success"]]
    assert [(d["table"], d["kwargs"].get("column")) for d in failed] == [
        ("clicr_documents.with_learning_points", "n_queries"),
        ("clicr_documents.entities", "category"),
    ]
    documents = {row["id"]: row for _, row in view.rows("clicr_documents")}
    assert [(e["text"], e["cui"], e["sem_type"], e["category"]) for e in documents["bcr-2019-228512"]["entities"]] == [
        ("first spinning class", "C9000030", "Sign or Symptom", "treatment")
    ]
    assert documents["bcr-2019-228101"]["entities"] == []
    (query,) = [row for _, row in view.rows("clicr")]
    assert query["id"] == "bcr-2019-228512.1"
    assert query["query"] == (
        "Exertional rhabdomyolysis should be suspected in anyone with muscle pain and "
        "@placeholder after unaccustomed exercise."
    )
    # MRCONSO C9000031: Dark urine, Dark coloured urine, Cola-coloured urine.
    assert [a["text"] for a in query["answers"]] == ["dark urine", "Dark coloured urine", "Cola-coloured urine"]


def test_stale_entities_standoff_is_an_error(tmp_path: Path) -> None:
    _write_standoff(tmp_path / "entities", {})
    (tmp_path / "entities" / "bcr-2019-228101.txt").write_text("another text", encoding="utf-8")
    with pytest.raises(SourceError, match=r"bcr-2019-228101\.txt: differs from the case text"):
        run(
            ReleaseRequest(
                find_corpus("clicr"),
                tmp_path / "out",
                sources={"entities": tmp_path / "entities"},
                samples=["bmj_html", "umls"],
            )
        )


def test_entities_standoff_in_any_suffix_case_and_none_unmatched(tmp_path: Path) -> None:
    """Issue 16: standoff files were found by exact lower-case name, and a standoff of no page was ignored."""
    from clinical_corpora.builders.contract.base import BuildContext
    from clinical_corpora.builders.release.inputs import resolve_sources
    from clinical_corpora.corpora.clicr.builder import ClicrBuilder

    _write_standoff(tmp_path / "entities", {})
    for path in (tmp_path / "entities").glob("bcr-2019-228101.*"):
        path.rename(path.with_suffix(path.suffix.upper()))
    manifest = find_corpus("clicr")
    sources = resolve_sources(manifest, {"entities": tmp_path / "entities"}, ["bmj_html", "umls"])
    rows = list(ClicrBuilder().generate(BuildContext(manifest, sources)))
    assert "bcr-2019-228101" in {row.record.id for row in rows if row.config == "clicr_documents"}  # type: ignore[attr-defined]
    (tmp_path / "entities" / "bcr-2000-000001.txt").write_text("text", encoding="utf-8")
    (tmp_path / "entities" / "bcr-2000-000001.ann").write_text("", encoding="utf-8")
    with pytest.raises(SourceError, match="standoff of no case in bmj_html: bcr-2000-000001"):
        list(ClicrBuilder().generate(BuildContext(manifest, sources)))
