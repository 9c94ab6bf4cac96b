"""snomed_el: the release of the embedded sample, the builder's checks on bad input, splits, trimming,
and the concept difficulty features. Expected values are read off the sample files by hand."""

from __future__ import annotations

import csv
import gzip
import json
import shutil
from pathlib import Path

import pytest
from datasets import ClassLabel, load_dataset

from clinical_corpora.builders.contract.base import BuildContext, Row
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.core.manifest import CorpusManifest, load_manifest
from clinical_corpora.corpora.snomed_el.builder import SnomedElBuilder, SnomedElOptions
from clinical_corpora.validation.metrics.concept_difficulty import Mention, concept_difficulty
from tests.conftest import SampleRelease

CORPUS = Path(__file__).parents[1] / "corpora" / "snomed_el"
ANNOTATIONS = "sample/train_annotations.csv"
TERMINOLOGY = "sample/rf2/SnomedCT_SampleRF2_PRODUCTION_20230531T120000Z/Snapshot/Terminology"
HYPERTENSION, CHEST_PAIN, INACTIVE, ASPIRIN = 99900005002, 99900028001, 99900078004, 99900077009
H_QUARTER = 0.8112781244591328  # entropy in bits of (1/4, 3/4)


@pytest.fixture(scope="module")
def release(sample_release: SampleRelease) -> Path:
    return sample_release("snomed_el").folder


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A copy of corpora/snomed_el that a test may edit."""
    folder = tmp_path / "snomed_el"
    shutil.copytree(CORPUS, folder)
    return folder


def generate(
    folder: Path,
    builder: SnomedElBuilder | None = None,
    on_error: str = "fail",
    overrides: dict[str, Path] | None = None,
) -> tuple[list[Row], BuildContext]:
    manifest = load_manifest(folder)
    sources = resolve_sources(manifest, overrides or {}, samples=sample_for(manifest, overrides or {}))
    ctx = BuildContext(manifest, sources, on_error)  # type: ignore[arg-type]
    return list((builder or SnomedElBuilder()).generate(ctx)), ctx


def sample_for(manifest: CorpusManifest, overrides: dict[str, Path]) -> list[str]:
    """The required sources not given: read from the invented sample on purpose (a sample build)."""
    return [name for name, spec in manifest.sources.items() if spec.required and name not in overrides]


def append_annotation(folder: Path, line: str) -> None:
    with (folder / ANNOTATIONS).open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")


def sample_annotations() -> list[dict[str, str]]:
    with (CORPUS / ANNOTATIONS).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


# --- the release of the sample -------------------------------------------------------------------


def test_release_agreement_and_counts(release: Path) -> None:
    validation = json.loads((release / "validation.json").read_text())
    assert validation["agreement"]["mean_jaccard"] == pytest.approx(54 / 61)
    manifest = json.loads((release / "manifest.json").read_text())
    # notes, concepts, concept_stats, notes again in snomed_el_bigbio_kb
    assert manifest["counts"] == {"read": 9, "written": 9 + 57 + 57 + 9, "rejected": 0, "rejected_annotations": 0}


def test_notes_config_keeps_the_annotated_notes_with_typed_spans(release: Path) -> None:
    notes = load_dataset(str(release), "snomed_el")
    annotated = {row["note_id"] for row in sample_annotations()}
    assert {split: len(rows) for split, rows in notes.items()} == {"train": 7, "test": 2}
    ids = [row["note_id"] for split in notes.values() for row in split]
    assert sorted(ids) == sorted(annotated) and len(annotated) == 9
    features = notes["train"].features["annotations"].feature
    assert isinstance(features["hierarchy"], ClassLabel)
    assert features["hierarchy"].names == ["finding", "procedure", "body_structure"]
    assert features["concept_id"].dtype == "int64" and features["start"].dtype == "int32"
    split_label = notes["train"].features["split"]
    assert {split_label.int2str(row["split"]) for row in notes["test"]} == {"test"}
    rows = {row["note_id"]: row for split in notes.values() for row in split}
    assert sum(len(row["annotations"]) for row in rows.values()) == 156
    first = rows["19990001-DS-4"]["annotations"][0]
    assert (first["start"], first["end"], first["text"], first["concept_id"]) == (232, 242, "chest pain", CHEST_PAIN)
    assert (first["fsn"], first["semantic_tag"]) == ("Chest pain (finding)", "finding")
    assert features["hierarchy"].int2str(first["hierarchy"]) == "finding"


def test_concepts_config_describes_each_linked_concept(release: Path) -> None:
    concepts = load_dataset(str(release), "concepts")["full"]
    assert len(concepts) == 57
    hypertension = next(row for row in concepts if row["concept_id"] == HYPERTENSION)
    assert hypertension["fsn"] == "Hypertensive disorder (disorder)"
    assert hypertension["semantic_tag"] == "disorder"
    assert hypertension["synonyms"] == ["Hypertension", "HTN", "High blood pressure"]
    assert concepts.features["hierarchy"].int2str(hypertension["hierarchy"]) == "finding"
    assert hypertension["depth"] == 4  # root > Clinical finding > 99900001006 > 99900002004 > it


def test_concept_stats_hold_the_difficulty_features(release: Path) -> None:
    stats = {row["concept_id"]: row for row in load_dataset(str(release), "concept_stats")["full"]}
    hypertension = stats[HYPERTENSION]  # HTN, hypertension, hypertension, Hypertension in 3 notes
    assert hypertension["mean_span_length"] == pytest.approx(39 / 4)
    assert hypertension["concept_entropy"] == pytest.approx(H_QUARTER)
    assert hypertension["annotation_entropy"] == 0.0
    assert (hypertension["examples"], hypertension["notes"], hypertension["depth"]) == (4, 3, 4)
    assert stats[CHEST_PAIN]["depth"] == 3


def test_card_reports_statistics_agreement_and_gates(release: Path) -> None:
    card = (release / "README.md").read_text()
    for section in (
        "## Notes, annotations and concepts per split",
        "## Annotations per hierarchy",
        "## Concept difficulty features",
        "## Span boundaries",
        "## Agreement",
    ):
        assert section in card
    assert "| annotator_b | released | 3 | 54 | 3 | 4 | 0.8852 |" in card
    assert "| agreement.mean_jaccard | pass | 0.8852 | >= 0.8 |" in card
    assert "0 annotated spans start or end with whitespace" in card


def test_given_annotators_sharing_no_note_are_an_error(release: Path, tmp_path: Path) -> None:
    (tmp_path / "annotator_c.csv").write_text("note_id,start,end,concept_id\n19999999-DS-1,0,4,99900028001\n")
    manifest = load_manifest(CORPUS)
    given = {"annotators": tmp_path}
    ctx = BuildContext(manifest, resolve_sources(manifest, given, samples=sample_for(manifest, given)))
    with pytest.raises(ClincorpError, match="no two annotators share a note"):
        SnomedElBuilder().agreement(ctx, ReleaseView(release))


# --- splits ---------------------------------------------------------------------------------------


def test_challenge_split_when_test_annotations_are_given(corpus: Path, tmp_path: Path) -> None:
    rows = sample_annotations()
    for name, keep in (
        ("train.csv", lambda r: r["note_id"] != "19990009-DS-1"),
        ("test.csv", lambda r: r["note_id"] == "19990009-DS-1"),
    ):
        with (tmp_path / name).open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=["note_id", "start", "end", "concept_id"])
            writer.writeheader()
            writer.writerows(filter(keep, rows))
    out, ctx = generate(
        corpus, overrides={"annotations": tmp_path / "train.csv", "test_annotations": tmp_path / "test.csv"}
    )
    assert ctx.sources["annotators"] is None  # the sample's annotators do not apply to other annotations
    splits = {row.record.note_id: row.split for row in out if row.config == "snomed_el"}
    assert [note for note, split in splits.items() if split == "test"] == ["19990009-DS-1"]
    assert len(splits) == 9
    hypertension = next(
        row.record for row in out if row.config == "concept_stats" and row.record.concept_id == HYPERTENSION
    )
    assert (hypertension.training_examples, hypertension.examples) == (2, 4)


def test_challenge_notes_layout_is_read_too(corpus: Path, tmp_path: Path) -> None:
    """The challenge's mimic-iv_notes_training_set.csv (note_id,text) instead of discharge.csv.gz."""
    with gzip.open(CORPUS / "sample" / "discharge.csv.gz", "rt", encoding="utf-8", newline="") as handle:
        notes = [(row["note_id"], row["text"]) for row in csv.DictReader(handle)]
    challenge = tmp_path / "mimic-iv_notes_training_set.csv"
    with challenge.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([("note_id", "text"), *notes])
    rows, _ = generate(corpus, overrides={"notes": challenge})
    released = {row.record.note_id: row.record.text for row in rows if row.config == "snomed_el"}
    assert set(released) == {row["note_id"] for row in sample_annotations()}
    assert all(released[note_id] == text for note_id, text in notes if note_id in released)


def test_a_note_in_both_train_and_test_annotations_is_an_error(corpus: Path) -> None:
    with pytest.raises(SourceError, match="19990001-DS-4 is also annotated in train_annotations.csv") as error:
        generate(corpus, overrides={"test_annotations": corpus / ANNOTATIONS})
    assert error.value.line == 2


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("19999999-DS-1,0,5,99900028001", "note_id '19999999-DS-1' is not in the notes file discharge.csv.gz"),
        (
            "19990011-DS-6,380,400,99900028001",
            "note 19990011-DS-6 span 380-400: ends past the end of the note text "
            r"\(392 characters\)",
        ),
        (f"19990001-DS-4,0,5,{INACTIVE}", f"span 0-5: concept {INACTIVE} is inactive in the RF2 snapshot"),
        ("19990001-DS-4,0,5,99900099999", "concept 99900099999 is not in the RF2 snapshot"),
        (f"19990001-DS-4,0,5,{ASPIRIN}", "'Aspirin \\(substance\\)' is not under Clinical finding, Procedure, Body"),
    ],
)
def test_bad_annotation_names_file_line_note_and_offsets(corpus: Path, line: str, message: str) -> None:
    append_annotation(corpus, line)
    with pytest.raises(SourceError, match=message) as error:
        generate(corpus)
    assert (Path(error.value.path).name, error.value.line) == ("train_annotations.csv", 158)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("19990001-DS-4,235,240,99900028001", "note 19990001-DS-4: span 235-240 overlaps span 232-242"),
        ("19990001-DS-4,0,1,99900028001", "note 19990001-DS-4: span 0-1 is only whitespace"),
    ],
)
def test_overlapping_and_blank_spans_are_rejected_with_note_and_offsets(corpus: Path, line: str, message: str) -> None:
    append_annotation(corpus, line)
    with pytest.raises(SourceError, match=message) as error:
        generate(corpus)
    assert error.value.path.endswith("discharge.csv.gz:2 [19990001-DS-4]")


def test_quarantine_keeps_the_good_notes_and_records_the_bad_one(corpus: Path) -> None:
    append_annotation(corpus, "19990001-DS-4,235,240,99900028001")
    rows, ctx = generate(corpus, on_error="quarantine")
    kept = [row.record.note_id for row in rows if row.config == "snomed_el"]
    assert len(kept) == 8 and "19990001-DS-4" not in kept
    assert len(ctx.rejects) == 1 and "overlaps span 232-242" in ctx.rejects[0].reason
    assert ctx.rejects[0].where == "notes/discharge.csv.gz:2 [19990001-DS-4]"
    assert ctx.read == 9


def test_malformed_annotation_row_names_file_and_line(corpus: Path) -> None:
    append_annotation(corpus, "19990001-DS-4,abc,5,99900028001")
    with pytest.raises(SourceError, match="column start: expected an integer, found 'abc'") as error:
        generate(corpus)
    assert error.value.line == 158


def test_rf2_file_with_missing_columns_names_file_and_line(corpus: Path) -> None:
    path = next((corpus / TERMINOLOGY).glob("sct2_Relationship_Snapshot*.txt"))
    lines = path.read_bytes().split(b"\r\n")
    lines[2] = lines[2].rsplit(b"\t", 1)[0]
    path.write_bytes(b"\r\n".join(lines))
    with pytest.raises(SourceError, match="expected 10 tab-separated fields, found 9") as error:
        generate(corpus)
    assert (Path(error.value.path).name, error.value.line) == (path.name, 3)


# --- span boundaries with whitespace ----------------------------------------------------------------


def pad_chest_pain(corpus: Path) -> None:
    """Make the first annotation (232-242 'chest pain' of 19990001-DS-4) include the newline after it."""
    path = corpus / ANNOTATIONS
    path.write_text(path.read_text().replace("19990001-DS-4,232,242,", "19990001-DS-4,232,243,", 1))


@pytest.mark.parametrize(
    ("trim", "released"),
    [(False, (232, 243, "chest pain\n")), (True, (232, 242, "chest pain"))],
)
def test_padded_spans_are_reported_and_trimmed_on_request(
    corpus: Path, trim: bool, released: tuple[int, int, str]
) -> None:
    pad_chest_pain(corpus)
    instance = SnomedElBuilder(SnomedElOptions(trim_whitespace=trim))
    rows, _ = generate(corpus, instance)
    note = next(row.record for row in rows if row.config == "snomed_el" and row.record.note_id == "19990001-DS-4")
    first = note.annotations[0]
    assert (first.start, first.end, first.text) == released
    assert instance.padded_spans == [("19990001-DS-4", 232, 243)]


# --- concept difficulty features -------------------------------------------------------------------


def test_concept_difficulty_features_by_hand() -> None:
    mentions = [
        Mention("n1", "train", 1, "stable"),
        Mention("n1", "train", 1, "Stable"),
        Mention("n2", "train", 1, "stable"),
        Mention("n3", "test", 1, "no  change"),
        Mention("n3", "test", 2, "STABLE"),
    ]
    first, second = concept_difficulty(mentions, {1: 5, 2: 7})
    # concept 1: strings stable x3, no change x1; every "stable" span links to 1 (x3) or 2 (x1)
    assert first.mean_span_length == pytest.approx((6 * 3 + 10) / 4)
    assert first.concept_entropy == pytest.approx(H_QUARTER)
    assert first.annotation_entropy == pytest.approx(0.7219280948873623)  # bag 1 x4, 2 x1
    assert (first.examples, first.training_examples, first.notes, first.depth) == (4, 3, 3, 5)
    # concept 2: one string, "stable", which links to 1 x3 and 2 x1
    assert second.concept_entropy == 0.0
    assert second.annotation_entropy == pytest.approx(H_QUARTER)
    assert (second.examples, second.training_examples, second.notes, second.depth) == (1, 0, 1, 7)


# --- shards: notes build in workers, the concept tables over all of them --------------------------------


def test_quarantined_notes_concepts_and_card_alike_with_one_or_two_workers(corpus: Path, tmp_path: Path) -> None:
    """Notes shard across workers; the concept tables, the padded spans (here 0-5, which starts with
    whitespace, of a note then rejected for its inactive concept) and the rejects (the note missing from
    the notes file last) come out as one process makes them."""
    from clinical_corpora.builders.release.pipeline import run
    from clinical_corpora.builders.release.request import ReleaseRequest

    append_annotation(corpus, f"19990001-DS-4,0,5,{INACTIVE}")
    append_annotation(corpus, "19999999-DS-1,0,5,99900028001")
    manifest = load_manifest(corpus)
    folders = [
        run(
            ReleaseRequest(
                manifest,
                tmp_path / f"out-{workers}",
                on_error="quarantine",
                samples=sample_for(manifest, {}),
                max_rejects=2,
                workers=workers,
            )
        ).folder
        for workers in (1, 2)
    ]
    rejects = [json.loads(line) for line in (folders[0] / "rejects.jsonl").read_text().splitlines()]
    assert [reject["where"] for reject in rejects] == [
        "annotations/train_annotations.csv:158",
        "annotations/train_annotations.csv:159",
    ]
    assert "is inactive" in rejects[0]["reason"] and "is not in the notes file" in rejects[1]["reason"]
    card = (folders[0] / "README.md").read_text()
    assert "1 annotated spans start or end with whitespace" in card and "| 19990001-DS-4 | 0 | 5 |" in card
    view = ReleaseView(folders[0])
    assert view.arrow("concepts").num_rows == view.arrow("concept_stats").num_rows > 0
    files = [{p.relative_to(f): p.read_bytes() for p in sorted(f.rglob("*")) if p.is_file()} for f in folders]
    assert sorted(files[1]) == sorted(files[0])
    assert [name for name in files[0] if files[0][name] != files[1][name]] == []
