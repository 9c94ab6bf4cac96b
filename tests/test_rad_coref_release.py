"""rad_coref end to end on the embedded sample, and its bad-input errors.

Expected numbers are counted by hand from the invented sample (corpora/rad_coref/sample): patient
91234 has 32 mentions in 18 chains (7 singletons), 92871 has 23 in 11 (6), 93310 has 14 in 7 (3).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from datasets import load_dataset

from clinical_corpora.builders.contract.base import BuildContext
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.manifest import CorpusManifest, load_manifest
from clinical_corpora.corpora.rad_coref.builder import RadCorefBuilder, modality_of
from clinical_corpora.corpora.rad_coref.string_match import string_match_chains
from clinical_corpora.validation.published import number_text
from tests.conftest import SampleRelease

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "rad_coref"


@pytest.fixture(scope="module")
def release(sample_release: SampleRelease) -> Path:
    return sample_release("rad_coref").folder


@pytest.fixture(scope="module")
def patients(release: Path) -> dict[str, dict]:
    dataset = load_dataset(str(release), "rad_coref")["train"]
    modality = dataset.features["reports"].feature["modality"]
    kind = dataset.features["mentions"].feature["type"]
    rows = {}
    for row in dataset:
        for report in row["reports"]:
            report["modality"] = modality.int2str(report["modality"])
        for mention in row["mentions"]:
            mention["type"] = kind.int2str(mention["type"])
        rows[row["patient_id"]] = row
    return rows


def test_one_row_per_patient_with_typed_fields(release: Path, patients: dict[str, dict]) -> None:
    dataset = load_dataset(str(release), "rad_coref")["train"]
    assert dataset.features["reports"].feature["modality"].names == ["XR", "CT", "CTA", "MR", "US", "OTHER"]
    assert dataset.features["mentions"].feature["type"].names == ["Finding", "Device"]
    assert dataset.features["mentions"].feature["start"].dtype == "int32"
    assert sorted(patients) == ["91234", "92871", "93310"]
    assert {pid: (len(p["reports"]), len(p["mentions"]), len(p["chains"])) for pid, p in patients.items()} == {
        "91234": (6, 32, 18),
        "92871": (5, 23, 11),
        "93310": (5, 14, 7),
    }


def test_reports_in_charttime_order_with_modality(patients: dict[str, dict]) -> None:
    reports = patients["93310"]["reports"]
    assert [r["row_id"] for r in reports] == [1000301, 1000302, 1000303, 1000304, 1000305]
    assert [r["modality"] for r in reports] == ["CTA", "MR", "CT", "XR", "CT"]
    assert reports[0]["charttime"] == "2143-06-01 11:00:00"
    assert "[**Clip Number (Radiology) 40010**]" in reports[0]["text"]
    assert [r["modality"] for r in patients["92871"]["reports"]] == ["XR", "XR", "CT", "US", "XR"]


def test_mentions_match_their_report_and_chains_follow_the_guideline(patients: dict[str, dict]) -> None:
    patient = patients["91234"]
    for mention in patient["mentions"]:
        assert patient["reports"][mention["report_index"]]["text"][mention["start"] : mention["end"]] == mention["text"]
    text_of = {m["id"]: (m["report_index"], m["text"]) for m in patient["mentions"]}
    chains = {c["id"]: [text_of[m] for m in c["mention_ids"]] for c in patient["chains"]}
    assert chains["E108"] == [(1, "endotracheal tube"), (3, "endotracheal tube")]
    assert chains["E117"] == [(4, "endotracheal tube"), (4, "ETT")]  # re-inserted: a new chain
    assert chains["E109"] == [(1, "nasogastric tube"), (1, "tip"), (2, "nasogastric tube"), (3, "NG tube")]
    assert chains["E110"] == [(1, "left pleural effusion"), (3, "left pleural effusion"), (4, "left pleural effusion")]
    assert chains["E113"] == [(2, "pleural effusions")]  # bilateral: not the left effusion's chain
    assert chains["E112"] == [(2, "free intraabdominal air"), (2, "Free air")]
    assert patient["mentions"][0]["id"] == "1000101-T1"
    lengths = [len(c["mention_ids"]) for p in patients.values() for c in p["chains"]]
    assert (sum(n == 1 for n in lengths), max(lengths)) == (16, 5)


def test_mention_pairs(release: Path) -> None:
    pairs = load_dataset(str(release), "mention_pairs")["train"]
    assert len(pairs) == 32 * 31 // 2 + 23 * 22 // 2 + 14 * 13 // 2
    assert sum(pairs["coreferent"]) == 18 + 22 + 10
    by_id = {row["id"]: row for row in pairs}
    reinserted = by_id["1000102-T1|1000105-T1"]
    assert (reinserted["first"]["text"], reinserted["second"]["text"]) == ("endotracheal tube", "endotracheal tube")
    assert not reinserted["coreferent"] and not reinserted["same_report"]
    same = by_id["1000105-T1|1000105-T2"]
    assert same["coreferent"] and same["same_report"] and same["second"]["text"] == "ETT"
    side = same["second"]
    assert side["sentence"][side["start"] - side["sentence_start"] : side["end"] - side["sentence_start"]] == "ETT"
    assert side["sentence"].endswith("in\n standard position.")


def test_agreement_gates_and_card(release: Path) -> None:
    validation = json.loads((release / "validation.json").read_text())
    # A marks 68 mentions, B 69; 61 exact spans agree. On those 61, MUC links: A 28, B 30, shared 26.
    assert validation["agreement"]["span_f1"] == pytest.approx(2 * 61 / 137)
    assert validation["agreement"]["muc_f1"] == pytest.approx(2 * 26 / (28 + 30))
    assert 0 < validation["agreement"]["conll_f1"] < 1
    card = (release / "README.md").read_text()
    assert "| Total mention chains | 36 |" in card and "| Total singleton mention chains | 16 |" in card
    assert "| Total entities (Finding) | 54 |" in card and "| Total entities (Device) | 15 |" in card
    # string match: 20 of 33 key links found, 20 of its 26 links right
    muc = 2 * (20 / 33) * (20 / 26) / (20 / 33 + 20 / 26)
    assert f"| string-match | train | this release | {number_text(muc, 4)} |" in card
    assert "| CT, CTA, MR | 3 | 2 |" in card
    assert "| agreement.span_f1 | pass |" in card


@pytest.mark.parametrize(
    ("description", "modality"),
    [
        ("CHEST (PORTABLE AP)", "XR"),
        ("CHEST (PA & LAT)", "XR"),
        ("CT HEAD W/O CONTRAST", "CT"),
        ("CTA CHEST W&W/O C&RECONS, NON-CORONARY", "CTA"),
        ("MR HEAD W & W/O CONTRAST", "MR"),
        ("MRA BRAIN W/O CONTRAST", "MR"),
        ("LIVER OR GALLBLADDER US (SINGLE ORGAN)", "US"),
        ("RENAL U.S.", "US"),
        ("BILAT LOWER EXT VEINS", "US"),
        ("NUCLEAR MEDICINE BONE SCAN", "OTHER"),
    ],
)
def test_modality_from_description(description: str, modality: str) -> None:
    assert modality_of(description) == modality


def test_string_match_closes_over_lower_cased_strings() -> None:
    assert string_match_chains([(1, "ETT"), (2, "tip"), (3, "ett"), (4, "Tip"), (5, "line")]) == [[1, 3], [2, 4], [5]]


# ---- bad input: each error names the file and line (or record) and what was expected ----------


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "rad_coref"
    shutil.copytree(CORPUS, folder)
    return folder


def build(corpus: Path, on_error: str = "fail") -> tuple[list, BuildContext]:
    manifest: CorpusManifest = load_manifest(corpus)
    ctx = BuildContext(manifest, resolve_sources(manifest, {}), on_error)  # type: ignore[arg-type]
    return list(RadCorefBuilder().generate(ctx)), ctx


def gold(corpus: Path, subject: int, row_id: int) -> Path:
    return corpus / "sample" / "annotations" / "gold" / str(subject) / f"{row_id}.ann"


def test_unknown_row_id(corpus: Path) -> None:
    shutil.copy(gold(corpus, 91234, 1000101), gold(corpus, 91234, 1999999))
    with pytest.raises(SourceError, match="ROW_ID 1999999 is not in NOTEEVENTS") as error:
        build(corpus)
    assert error.value.path.endswith("91234/1999999.ann")


def test_non_radiology_row_id(corpus: Path) -> None:
    gold(corpus, 92871, 999002).write_text("")
    with pytest.raises(SourceError, match="CATEGORY 'Discharge summary'.*expected Radiology"):
        build(corpus)


def test_span_text_differs_from_report(corpus: Path) -> None:
    path = gold(corpus, 91234, 1000102)
    path.write_text(path.read_text().replace("\ttip\n", "\ttube\n"))
    with pytest.raises(SourceError, match="T3 text 'tube' differs") as error:
        build(corpus)
    assert (error.value.path, error.value.line) == (str(path), 3)


def test_mention_without_chain_id(corpus: Path) -> None:
    path = gold(corpus, 93310, 1000304)
    path.write_text("".join(line for line in path.read_text().splitlines(keepends=True) if not line.startswith("#2\t")))
    with pytest.raises(SourceError, match="T2 has no chain id") as error:
        build(corpus)
    assert (error.value.path, error.value.line) == (str(path), 2)


def test_chain_id_used_by_two_patients(corpus: Path) -> None:
    path = gold(corpus, 92871, 1000204)
    path.write_text(path.read_text().replace("chain=E209", "chain=E101"))
    with pytest.raises(SourceError, match="chain id E101 is already used by patient 91234") as error:
        build(corpus)
    assert (error.value.path, error.value.line) == (str(path), 2)


def test_text_file_checked_against_noteevents(corpus: Path) -> None:
    path = gold(corpus, 93310, 1000301).with_suffix(".txt")
    path.write_text(path.read_text().replace("Questionable", "Definite"))
    with pytest.raises(SourceError, match="differs from the TEXT of ROW_ID 1000301") as error:
        build(corpus)
    assert error.value.line == 9


def test_quarantine_keeps_the_other_patients(corpus: Path) -> None:
    path = gold(corpus, 92871, 1000201)
    path.write_text(path.read_text() + "T9\tAnatomy 0 1\t[\n#9\tAnnotatorNotes T9\tchain=E299\n")
    rows, ctx = build(corpus, "quarantine")
    assert sorted(row.record.patient_id for row in rows if row.config == "rad_coref") == ["91234", "93310"]
    assert len(ctx.rejects) == 1 and ctx.read == 3
    assert ctx.rejects[0].where.endswith("92871/1000201.ann:11")
    assert "expected Finding or Device" in ctx.rejects[0].reason


def test_agreement_skips_patients_whose_gold_is_quarantined(corpus: Path, tmp_path: Path) -> None:
    """Issue 16: a quarantined gold patient used to fail the agreement with "is not a released (gold)
    report", losing the real reason; now the agreement runs on the surviving patients and names it."""
    from clinical_corpora.builders.release.pipeline import run
    from clinical_corpora.builders.release.request import ReleaseRequest

    path = gold(corpus, 92871, 1000201)
    path.write_text(path.read_text() + "T9\tAnatomy 0 1\t[\n#9\tAnnotatorNotes T9\tchain=E299\n")
    outcome = run(ReleaseRequest(load_manifest(corpus), tmp_path / "out", on_error="quarantine", max_rejects=1))
    rejects = (outcome.folder / "rejects.jsonl").read_text().splitlines()
    assert len(rejects) == 1 and "expected Finding or Device" in json.loads(rejects[0])["reason"]
    card = (outcome.folder / "README.md").read_text()
    assert "Patients left out of the agreement" in card and "patients 92871" in card
    agreement = [gate.model_dump() for gate in outcome.manifest.gates if gate.gate.startswith("agreement")]
    assert agreement and all(gate["status"] == "pass" for gate in agreement)


# ---- shards: patients build in blocks, whatever the number of workers ----------------------------------


def reuse_chain(corpus: Path, subject: int, row_id: int, chain: str) -> Path:
    """Rename a chain of one report to E101, a chain of patient 91234."""
    path = gold(corpus, subject, row_id)
    path.write_text(path.read_text().replace(f"chain={chain}", "chain=E101"))
    return path


@pytest.mark.parametrize(
    ("reused", "blocks"),
    [
        (None, [["91234"], ["92871"], ["93310"]]),
        ((92871, 1000204, "E209"), [["91234", "92871"], ["93310"]]),
        ((93310, 1000304, "E305"), [["91234", "92871", "93310"]]),
    ],
)
def test_patients_naming_a_chain_id_of_another_build_in_one_block(
    corpus: Path, reused: tuple[int, int, str] | None, blocks: list[list[str]]
) -> None:
    """A chain id's first patient owns it, so every patient from the first to the last naming it builds in
    one block (one worker job, one registry); each block carries its own reports' NOTEEVENTS rows."""
    if reused is not None:
        reuse_chain(corpus, *reused)
    manifest = load_manifest(corpus)
    documents = RadCorefBuilder().shards(BuildContext(manifest, resolve_sources(manifest, {})))
    assert [[str(subject) for subject, _ in block.patients] for block in documents["blocks"]] == blocks
    for block in documents["blocks"]:
        assert sorted(block.notes) == sorted(report.row_id for _, reports in block.patients for report in reports)


@pytest.mark.parametrize(
    ("subject", "row_id", "chain", "line"), [(92871, 1000204, "E209", 2), (93310, 1000304, "E305", 1)]
)
def test_a_reused_chain_id_is_quarantined_alike_with_one_or_two_workers(
    corpus: Path, tmp_path: Path, subject: int, row_id: int, chain: str, line: int
) -> None:
    from clinical_corpora.builders.release.pipeline import run
    from clinical_corpora.builders.release.request import ReleaseRequest

    path = reuse_chain(corpus, subject, row_id, chain)
    folders = [
        run(
            ReleaseRequest(
                load_manifest(corpus),
                tmp_path / f"out-{workers}",
                on_error="quarantine",
                max_rejects=1,
                workers=workers,
            )
        ).folder
        for workers in (1, 2)
    ]
    [reject] = [json.loads(line) for line in (folders[0] / "rejects.jsonl").read_text().splitlines()]
    assert reject["where"].endswith(f"{path.parent.name}/{path.name}:{line}")
    assert "chain id E101 is already used by patient 91234" in reject["reason"]
    files = [{p.relative_to(f): p.read_bytes() for p in sorted(f.rglob("*")) if p.is_file()} for f in folders]
    assert sorted(files[1]) == sorted(files[0])
    assert [name for name in files[0] if files[0][name] != files[1][name]] == []
