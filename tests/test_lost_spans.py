"""A re-anchored release scored and exported as what it is: a span the re-anchoring lost (its text changed in the
user's copy, so it is written as null) is left out of every ``clincorp score`` and every ``clincorp export``,
counted and named, never written as ``None`` nor turned into the note's whole text."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.perturb import span_ranges
from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.plugins import load_plugins
from clinical_corpora.builders.rehydrate.request import RehydrateRequest
from clinical_corpora.builders.rehydrate.run import rehydrate, source_texts
from clinical_corpora.core.registry import exporters
from tests.conftest import SampleVariant

REFERENCE_SOURCES = ("terminology:", "umls:")
"""Terminology strings are not spans of a note: the changed character goes in a note's span."""


def re_anchored(corpus: str, sample_variant: SampleVariant, out: Path) -> Path:
    """The corpus's sample restored from a copy of its documents where one letter of one short span changed (the
    shortest span whose change loses a string: a letter in a report's header may only change its whole text)."""
    text_free = sample_variant(corpus, "text-free")
    texts = source_texts(text_free)
    spans = sorted(
        (end - start, locator, start, end)
        for locator, ranges in span_ranges(text_free, texts).items()
        for start, end in set(ranges)
        if end - start > 2 and not locator.startswith(REFERENCE_SOURCES)
    )
    for attempt, (_, locator, start, end) in enumerate(spans[:5]):
        text, middle = texts[locator], (start + end) // 2
        changed = text[:middle] + ("Q" if text[middle] != "Q" else "X") + text[middle + 1 :]
        request = RehydrateRequest(text_free, out / str(attempt), re_anchor=True, documents={**texts, locator: changed})
        outcome = rehydrate(request)
        assert outcome.status == "re-anchored" and outcome.reanchored is not None
        if outcome.reanchored.summary()["strings"]["lost"] > 0:
            return outcome.folder
    raise AssertionError(f"no change to the {corpus} sample's shortest spans loses a string")


def formats() -> list[tuple[str, str]]:
    load_plugins()
    return sorted(exporters.keys(), key=lambda key: (key[1], key[0]))


@pytest.mark.parametrize(("export", "corpus"), formats())
def test_every_export_leaves_lost_spans_out_and_lists_them(
    export: str, corpus: str, sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = re_anchored(corpus, sample_variant, tmp_path / "restored")
    capsys.readouterr()
    out = tmp_path / "export"
    assert main(["export", export, str(folder), "--out", str(out)]) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    assert "annotation(s) holding a span lost when re-anchoring, listed in" in captured.out
    assert f"{folder.name}: left out " in captured.err and "Traceback" not in captured.err
    lines = [line.split("\t") for line in (out / "dropped.tsv").read_text(encoding="utf-8").splitlines()]
    assert lines[0] == ["split", "record", "chain", "item", "start", "end", "reason"]
    lost = [line for line in lines[1:] if "lost when re-anchoring" in line[6]]
    assert lost and all(line[1] and line[3] for line in lost)
    written = [path for path in out.rglob("*") if path.is_file() and path.suffix in (".ann", ".xml", ".csv", ".con")]
    for path in written:  # nothing lost is written as None (no sample text holds the word)
        assert "\tNone None\t" not in path.read_text(encoding="utf-8") and ",,," not in path.read_text(encoding="utf-8")


def test_score_sdoh_on_a_re_anchored_release_leaves_the_lost_span_out(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 38's failure: scoring against a re-anchored sdoh release with one lost span wrote a BRAT line
    'T4 LivingStatus None None <whole note>' and failed."""
    folder = re_anchored("sdoh", sample_variant, tmp_path / "restored")
    predictions = tmp_path / "predictions"
    assert main(["export", "brat", str(sample_variant("sdoh", "full")), "--out", str(predictions)]) == 0
    capsys.readouterr()
    assert main(["score", "sdoh", str(folder), str(predictions), "--out", str(tmp_path / "scores.csv")]) == 0
    captured = capsys.readouterr()
    assert "OVERALL" in captured.out and "F1=1.0000" not in captured.out  # the prediction of the lost one: a miss
    assert f"{folder.name}: left out 1 annotation(s) holding a span lost when re-anchoring" in captured.err
    assert "sdoh/test [test/mimic/0501] events[" in captured.err


@pytest.mark.parametrize("corpus", ["rad_coref", "odie_anaphora"])
def test_score_coref_keys_leave_lost_mentions_out(
    corpus: str, sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = re_anchored(corpus, sample_variant, tmp_path / "restored")
    response = tmp_path / "response"
    assert main(["export", "conll2012", str(sample_variant(corpus, "full")), "--out", str(response)]) == 0
    capsys.readouterr()
    assert main(["score", "coref", str(folder), str(response / "train.conll"), "--metrics", "muc"]) == 0
    captured = capsys.readouterr()
    assert f"{folder.name}: left out " in captured.err and "Traceback" not in captured.err
    assert "[" in captured.err.split("re-anchored.jsonl says why): ")[1]


def test_score_snomed_leaves_the_lost_annotation_out(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = re_anchored("snomed_el", sample_variant, tmp_path / "restored")
    predictions = tmp_path / "predictions"
    assert main(["export", "challenge-csv", str(sample_variant("snomed_el", "full")), "--out", str(predictions)]) == 0
    capsys.readouterr()
    train, test = (
        (predictions / name).read_text(encoding="utf-8") for name in ("train_annotations.csv", "test_annotations.csv")
    )
    both = tmp_path / "predictions.csv"
    both.write_text(train + test.split("\n", 1)[1], encoding="utf-8")  # every split: one header
    argv = [str(folder), str(both), "--out", str(tmp_path / "iou.json")]
    assert main(["score", "snomed", *argv, "--replicates", "10"]) == 0
    captured = capsys.readouterr()
    assert f"{folder.name}: left out 1 annotation(s)" in captured.err and "annotations[" in captured.err
