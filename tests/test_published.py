"""Releases against their papers' published numbers (corpus.yaml ``published:``): the schema, the comparison
of each corpus's numbers, the card's "Against the published corpus" section and the ``published`` gate of
``clincorp release`` and ``clincorp validate`` (a warning, never a failure)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest
import yaml

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.base import make_builder
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.plugins import all_corpora, find_corpus
from clinical_corpora.builders.release.card.published import recomputed_values
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.manifest import CorpusManifest, PublishedNumber, load_manifest
from clinical_corpora.validation.published import Recomputed, ReleaseScope, compare_published, published_gate
from tests.conftest import SampleRelease

CORPORA = [manifest.name for manifest in all_corpora()]


def recomputed_of(corpus: CorpusManifest, release: Path) -> Recomputed:
    """What the corpus's statistics, recorded agreement measures and baselines give for a written release."""
    builder, view = make_builder(corpus.builder), ReleaseView(release)
    measures = json.loads((release / "validation.json").read_text())["agreement"]
    return recomputed_values(builder.statistics(view), measures, builder.baselines(view))


def add_published(corpus_folder: Path, entries: list[dict[str, object]]) -> Path:
    """The corpus.yaml of ``corpus_folder`` with ``entries`` as its published: section."""
    path = corpus_folder / "corpus.yaml"
    manifest = yaml.safe_load(path.read_text(encoding="utf-8"))
    path.write_text(yaml.safe_dump({**manifest, "published": entries}, allow_unicode=True), encoding="utf-8")
    return path


TINY = {"release": "the tiny corpus", "splits": ["train", "test"]}
NUMBER = {"key": "spans", "value": 6, "source": "Tiny 2026, Table 1", "applies_to": TINY}
IN_ENTRY = "published number 'spans' (entry 1)"


def described_scope(numbers: list[PublishedNumber], rows: int = 1000) -> ReleaseScope:
    """The release a corpus's numbers describe (each number of a corpus describes one, or any splits)."""
    scopes = {
        (tuple(n.applies_to.splits), tuple(n.applies_to.note_sources or ()))
        for n in numbers
        if n.applies_to.splits != "any"
    }
    assert len(scopes) == 1, scopes
    splits, sources = scopes.pop()
    return ReleaseScope("rows", rows, splits, sources or None)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({**NUMBER, "tolerance": -1}, f"{IN_ENTRY}: tolerance"),
        ({key: value for key, value in NUMBER.items() if key != "source"}, f"{IN_ENTRY}: source"),
        ({**NUMBER, "value": "many"}, f"{IN_ENTRY}: value"),
        ({**NUMBER, "deviation": {"kind": "typo", "reason": "x"}}, f"{IN_ENTRY}: deviation.kind"),
        ({**NUMBER, "requires_sources": ["test_annotations"]}, "published number 'spans' names unknown sources"),
        ({**NUMBER, "key": ""}, "published number '' (entry 1): key"),
        ({**NUMBER, "applies_to": "the tiny corpus"}, f"{IN_ENTRY}: applies_to"),
        ({**NUMBER, "applies_to": {"release": "the tiny corpus"}}, f"{IN_ENTRY}: applies_to.splits"),
        (
            {**NUMBER, "applies_to": {**TINY, "splits": ["train", "dev"]}},
            "published number 'spans': applies_to.splits ['train', 'dev'] names splits the default config 'notes' "
            "does not declare (it declares ['train', 'test'])",
        ),
    ],
)
def test_a_malformed_published_entry_is_an_error_naming_the_file_and_key(
    tiny_corpus: Path, entry: dict[str, object], expected: str
) -> None:
    path = add_published(tiny_corpus, [entry])
    with pytest.raises(SourceError) as raised:
        load_manifest(tiny_corpus)
    assert str(path) in str(raised.value) and expected in str(raised.value)


def test_a_key_given_twice_is_an_error(tiny_corpus: Path) -> None:
    add_published(tiny_corpus, [NUMBER, {**NUMBER, "value": 7}])
    with pytest.raises(SourceError, match=r"published: keys given twice: \['spans'\]"):
        load_manifest(tiny_corpus)


@pytest.mark.parametrize("name", CORPORA)
def test_every_published_key_names_a_statistic_the_corpus_computes(name: str, sample_release: SampleRelease) -> None:
    corpus = find_corpus(name)
    recomputed = recomputed_of(corpus, sample_release(name).folder)
    assert corpus.published, f"{name} declares no published numbers"
    assert [number.key for number in corpus.published if recomputed.get(number.key) is None] == []


@pytest.mark.parametrize("name", CORPORA)
def test_each_published_number_matches_within_tolerance_and_deviates_with_or_without_its_reason(name: str) -> None:
    """Injected statistics: the paper's own values match (at the tolerance's edge too); a value beyond it is an
    explained deviation where corpus.yaml declares a reason, else an unexplained one and the gate warns."""
    numbers = find_corpus(name).published
    given = {source for number in numbers for source in number.requires_sources}  # the release they describe
    scope = described_scope(numbers)
    at_edge = {number.key: number.value + number.tolerance for number in numbers}
    assert {c.verdict for c in compare_published(numbers, Recomputed(at_edge), given, scope)} == {"match"}
    assert published_gate(compare_published(numbers, Recomputed(at_edge), given, scope)).status == "pass"
    off = {number.key: number.value + 2 * number.tolerance + 1 for number in numbers}
    comparisons = compare_published(numbers, Recomputed(off), given, scope)
    assert [c.verdict for c in comparisons] == [
        "explained" if number.deviation is not None else "unexplained" for number in numbers
    ]
    explained = [c for c in comparisons if c.verdict == "explained"]
    assert all(c.note.endswith(c.number.deviation.reason.strip()) for c in explained if c.number.deviation)
    gate = published_gate(comparisons)
    assert gate.success and gate.status == "warning"
    assert gate.warning is not None and gate.warning.startswith(
        f"{len(comparisons) - len(explained)} published number(s) deviate without a declared reason"
    )


def test_a_number_of_another_release_is_not_compared() -> None:
    numbers = find_corpus("snomed_el").published + find_corpus("odie_anaphora").published
    everything = Recomputed({number.key: number.value for number in numbers})
    scope = ReleaseScope("snomed_el", 272, ("train", "test"))
    whole = [c for c in compare_published(numbers, everything, {"annotators"}, scope) if c.number.key == "notes"]
    assert whole[0].verdict == "not compared" and "built without test_annotations" in whole[0].note
    odie = compare_published(find_corpus("odie_anaphora").published, everything, {"i2b2", "text"}, scope)
    assert {c.verdict for c in odie} == {"not compared"}
    assert "another release: built from i2b2; the number is of the ODIE gold standard" in odie[0].note


def test_an_absent_count_is_zero_and_an_absent_measure_is_not_computed() -> None:
    numbers = [number for number in find_corpus("rad_coref").published if number.key.startswith(("mention", "agree"))]
    recomputed = Recomputed({"mentions": 5872.0}, counted=("mention_string.",))
    scope = ReleaseScope("rad_coref", 60, ("train",))
    verdicts = {c.number.key: (c.verdict, c.recomputed) for c in compare_published(numbers, recomputed, (), scope)}
    assert verdicts["mention_string.Finding.effusion"] == ("unexplained", 0.0)
    assert verdicts["agreement.span_f1"] == ("not compared", None)
    assert verdicts["mentions"] == ("match", 5872.0)


SHAC_2022 = (
    "SHAC as annotated for the n2c2 2022 Track 2 challenge (the train, dev and test splits, of mimic and uw notes)"
)


def test_shac_numbers_are_compared_only_with_a_release_of_all_splits_of_mimic_and_uw_notes() -> None:
    """The same recomputed values: a release of SHAC's splits and sources matches; one of the train split, or of
    MIMIC notes alone, is another release, said with what it holds and what the number describes."""
    numbers = find_corpus("sdoh").published
    assert {"notes": 4480, "events": 18000} == {n.key: n.value for n in numbers if n.key in ("notes", "events")}
    paper = Recomputed({number.key: number.value for number in numbers})
    whole = ReleaseScope("sdoh", 4480, ("train", "dev", "test"), ("mimic", "uw"))
    assert {c.verdict for c in compare_published(numbers, paper, {"shac"}, whole)} == {"match"}
    train = compare_published(numbers, paper, {"shac"}, ReleaseScope("sdoh", 3000, ("train",), ("mimic", "uw")))
    assert {c.verdict for c in train} == {"not compared"}
    assert train[0].note == (
        "another release: this release holds 3000 rows of its sdoh config, in the train split, of mimic and uw "
        f"notes; the number is of {SHAC_2022}"
    )
    mimic = compare_published(
        numbers, paper, {"shac"}, ReleaseScope("sdoh", 2000, ("train", "dev", "test"), ("mimic",))
    )
    assert {c.verdict for c in mimic} == {"not compared"}
    assert "in the train, dev and test splits, of mimic notes; the number is of SHAC" in mimic[0].note
    assert published_gate(train).skipped == "no published number describes this release"


def test_a_real_release_of_shacs_train_split_is_not_compared(tmp_path: Path) -> None:
    """A release from real inputs (a copy of the sample's train split, not the sample) holds another release than
    the papers describe: its card says so per number, and ``clincorp validate`` draws the same card."""
    shac = tmp_path / "shac"
    shutil.copytree(find_corpus("sdoh").folder / "sample" / "shac" / "train", shac / "train")
    outcome = run(ReleaseRequest(find_corpus("sdoh"), tmp_path / "out", sources={"shac": shac}))
    assert not outcome.manifest.sample
    card = (outcome.folder / "README.md").read_text(encoding="utf-8")
    section = card.split("## Against the published corpus\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith(("| subtypes", "| notes", "| events"))]
    assert len(rows) == 5 and all("| not compared | another release: this release holds 4 rows" in r for r in rows)
    assert "| match |" not in section
    assert (
        "This release holds 4 rows of its sdoh config, in the train split, of mimic and uw notes; the numbers "
        f"describe {SHAC_2022}; SHAC as Lybarger et al. 2021 describe it" in section
    )
    assert "| published | SKIPPED | not compared: no published number describes this release |" in card
    assert validate(outcome.folder)[0] == 0


@pytest.mark.parametrize("name", CORPORA)
def test_a_sample_release_says_it_cannot_be_compared(name: str, sample_release: SampleRelease) -> None:
    folder = sample_release(name).folder
    card = (folder / "README.md").read_text(encoding="utf-8")
    section = card.split("## Against the published corpus\n", 1)[1].split("\n## ", 1)[0]
    assert section.strip().startswith("Not compared: a sample release holds invented data")
    assert f"compares {len(find_corpus(name).published)} numbers published by" in section
    corpus = find_corpus(name)
    rows = sum(ReleaseView(folder).split_rows(corpus.default_config, split) for split in ("train", "dev", "test"))
    assert f"This release holds {rows} rows of its {corpus.default_config} config, in the " in section
    for unread in corpus.published_not_read:
        assert f"{unread.what} ({unread.source}): " in section
    assert "| statistic |" not in section  # no misleading comparison
    gates = {gate["gate"]: gate for gate in json.loads((folder / "validation.json").read_text())["gates"]}
    assert gates["published"]["status"] == "skipped"


def tiny_real_release(tiny_corpus: Path, tmp_path: Path) -> Path:
    """A release of the tiny corpus from real inputs (copies of its sample), with three published numbers:
    one its data matches, one it deviates from for a declared reason, one without."""
    spans = (tiny_corpus / "sample" / "spans.tsv").read_text().splitlines()[1:]
    problems = sum(line.split("\t")[3] == "problem" for line in spans)
    add_published(
        tiny_corpus,
        [
            {**NUMBER, "value": len(spans)},
            {
                **NUMBER,
                "key": "spans.problem",
                "value": problems + 3,
                "tolerance": 1,
                "deviation": {"kind": "erratum", "reason": "Tiny 2026 counts three problems twice (erratum of 2027)"},
            },
            {**NUMBER, "key": "spans.drug", "value": 2, "source": "Tiny 2026, §4"},
        ],
    )
    real = tmp_path / "real"
    real.mkdir()
    for name in ("notes.tsv", "spans.tsv"):
        shutil.copyfile(tiny_corpus / "sample" / name, real / name)
    sources = {"notes": real / "notes.tsv", "spans": real / "spans.tsv"}
    return run(ReleaseRequest(load_manifest(tiny_corpus), tmp_path / "out", sources=sources)).folder


def test_a_real_release_card_compares_each_number_with_its_verdict_and_reason(
    tiny_corpus: Path, tmp_path: Path
) -> None:
    card = (tiny_real_release(tiny_corpus, tmp_path) / "README.md").read_text(encoding="utf-8")
    section = card.split("## Against the published corpus\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| spans")]
    assert rows == [
        "| spans | 6 | 6 | 0 | match |  | Tiny 2026, Table 1 |",
        "| spans.problem | 6 | 3 | 1 | deviation (explained) | erratum: Tiny 2026 counts three problems twice "
        "(erratum of 2027) | Tiny 2026, Table 1 |",
        "| spans.drug | 2 | 0 | 0 | DEVIATION (no declared reason) |  | Tiny 2026, §4 |",
    ]
    assert (
        "1 deviate without one (a warning of the `published` gate). This release holds 3 rows of its notes config, "
        "in the train and test splits; the numbers describe the tiny corpus (the train and test splits)." in section
    )
    assert "| published | WARNING | 1 match, 1 explained, 1 unexplained |" in card
    assert "Passed with a WARNING (not a failure): published (1 published number(s) deviate" in card


def validate(folder: Path, *options: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["validate", str(folder), *options])
    return status, out.getvalue()


def test_validate_reports_an_unexplained_deviation_as_a_warning_and_stays_valid(
    tiny_corpus: Path, tmp_path: Path
) -> None:
    release = tiny_real_release(tiny_corpus, tmp_path)
    status, printed = validate(release, "--corpus", str(tiny_corpus))
    assert status == 0
    assert "gate published passed with a WARNING: 1 published number(s) deviate without a declared reason: " in printed
    assert "spans.drug 0 vs 2 (Tiny 2026, §4)" in printed
    assert "  spans.problem: published 6, recomputed 3: explained (erratum: Tiny 2026 counts" in printed
    assert "  spans.drug: published 2, recomputed 0: unexplained" in printed
    status, printed = validate(release, "--corpus", str(tiny_corpus), "--json")
    report = json.loads(printed)
    published = next(gate for gate in report["gates"] if gate["name"] == "published")
    assert (status, report["verdict"], published["status"]) == (0, "valid", "warning")
    assert [row["verdict"] for row in published["where"]] == ["match", "explained", "unexplained"]


def test_the_sample_sdoh_card_says_what_it_holds_what_the_numbers_describe_and_what_was_not_read(
    sample_release: SampleRelease,
) -> None:
    card = (sample_release("sdoh").folder / "README.md").read_text(encoding="utf-8")
    section = card.split("## Against the published corpus\n", 1)[1].split("\n## ", 1)[0]
    assert (
        "This release holds 12 rows of its sdoh config, in the train, dev and test splits, of mimic and uw notes; "
        f"the numbers describe {SHAC_2022}; " in section
    )
    assert (
        "Not compared, as corpus.yaml does not hold them: notes and events per note source (MIMIC-III, UW) and per "
        "split (Lybarger et al. 2021, J Biomed Inform 113:103631, its tables of the corpus): its tables were not "
        "available to us" in section
    )
    assert (
        "notes and events per note source and per split of the challenge's subtasks A, B and C (Lybarger et al. "
        "2023, JAMIA 30(8), the n2c2/UW 2022 SDOH overview, its data tables): its tables were not available" in section
    )


def test_validate_does_not_compare_a_sample_release(sample_release: SampleRelease) -> None:
    status, printed = validate(sample_release("rad_coref").folder)
    assert status == 0
    assert "gate published skipped: a sample release holds invented data" in printed
