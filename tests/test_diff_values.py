"""What ``clincorp diff`` says of a change: the text of a moved or relabelled span (full releases; offsets only
when the releases are text-free), the values before and after as JSON values, and a warning when two releases
share a version and variant but not their bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.text_free.release import release_text_free
from tests.conftest import SampleRelease, SampleVariant
from tests.test_diff import moved_to_test
from tests.test_diff_mutations import Copy


def edited_rad_coref(release: Path, into: Path) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """A copy of a rad_coref release whose first mention moved one character right and whose second is
    relabelled; both mentions before the edit."""
    edited = Copy(release, into / "rad_coref" / release.name)
    rows, features = edited.rows("rad_coref", "train")
    patient = rows[0]
    moved, relabelled = patient["mentions"][0], patient["mentions"][1]
    before = dict(moved), dict(relabelled)
    text = patient["reports"][moved["report_index"]]["text"]
    moved["start"], moved["end"] = moved["start"] + 1, moved["end"] + 1
    moved["text"] = text[moved["start"] : moved["end"]]
    names = features["mentions"].feature["type"].names
    relabelled["type"] = next(i for i, name in enumerate(names) if name != relabelled["type_name"])
    relabelled["type_name"] = names[relabelled["type"]]
    edited.save()
    return edited.folder, *before


def diff_json(old: Path, new: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], str]:
    assert main(["diff", str(old), str(new), "--json", "--examples", "9"]) == 0
    printed = capsys.readouterr()
    return json.loads(printed.out), printed.err


def mention_examples(report: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return report["configs"]["rad_coref"]["splits"]["train"]["fields"]["mentions"][kind]["examples"]


def test_a_moved_and_a_relabelled_span_with_their_text_and_values(
    sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_release("rad_coref").folder
    edited, moved, relabelled = edited_rad_coref(release, tmp_path)
    start, end, text = moved["start"], moved["end"], moved["text"]
    report, _ = diff_json(release, edited, capsys)
    [move] = mention_examples(report, "moved")
    new_text = move["new"]["text"]
    assert move["item"] == moved["id"] and new_text != text
    assert move["old"] == {"start": start, "end": end, "text": text}
    assert move["new"] == {"start": start + 1, "end": end + 1, "text": new_text}
    assert move["detail"] == f"{start}-{end} “{text}” → {start + 1}-{end + 1} “{new_text}”"
    [label] = mention_examples(report, "relabelled")
    where = {"start": relabelled["start"], "end": relabelled["end"], "text": relabelled["text"]}
    assert label["old"] == {**where, "type": relabelled["type_name"]}
    assert label["new"]["type"] != relabelled["type_name"] and label["new"] == {**where, "type": label["new"]["type"]}
    assert label["detail"] == f"“{relabelled['text']}” type: {relabelled['type_name']} → {label['new']['type']}"

    assert main(["diff", str(release), str(edited)]) == 0
    lines = capsys.readouterr().out.splitlines()
    record = move["record"]
    assert f"      {record} {moved['id']}: {move['detail']}" in lines
    assert f"      {record} {relabelled['id']}: {label['detail']}" in lines


def test_text_free_releases_name_spans_by_their_offsets_only(
    sample_release: SampleRelease, sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = find_corpus("rad_coref")
    release = sample_release("rad_coref").folder
    edited, moved, relabelled = edited_rad_coref(release, tmp_path)
    old = sample_variant("rad_coref", "text-free")
    new = release_text_free(manifest, edited, resolve_sources(manifest, {})).folder
    report, _ = diff_json(old, new, capsys)
    [move] = mention_examples(report, "moved")
    start, end = moved["start"], moved["end"]
    assert move["old"] == {"start": start, "end": end} and move["new"] == {"start": start + 1, "end": end + 1}
    assert move["detail"] == f"{start}-{end} → {start + 1}-{end + 1}"
    [label] = mention_examples(report, "relabelled")
    assert label["old"] == {"start": relabelled["start"], "end": relabelled["end"], "type": relabelled["type_name"]}
    assert label["detail"].startswith("type: ")
    assert moved["text"] not in json.dumps(report, ensure_ascii=False)


def test_a_record_moved_to_another_split_gives_both_splits(
    sample_release: SampleRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_release("sdoh").folder
    edited, note = moved_to_test(release, tmp_path)
    report, _ = diff_json(release, edited, capsys)
    moved = report["configs"]["sdoh"]["splits"]["test"]["records"]["moved_in"]["examples"]
    assert moved == [{"record": note, "old": "train", "new": "test"}]


def test_one_version_with_other_bytes_is_a_warning(
    sample_release: SampleRelease, sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_release("rad_coref").folder
    edited, _, _ = edited_rad_coref(release, tmp_path)
    version = json.loads((release / "manifest.json").read_text(encoding="utf-8"))["version"]
    report, err = diff_json(release, edited, capsys)
    [warning] = report["warnings"]
    assert warning.startswith(f"both releases are rad_coref {version} (full) but their bytes differ (digest sha256:")
    assert warning.endswith("a release that changed needs a new version") and warning in err
    assert main(["diff", str(release), str(edited)]) == 0
    assert f"warning: {warning}" in capsys.readouterr().out.splitlines()
    for same_bytes in (sample_variant("rad_coref", "full"), sample_variant("rad_coref", "text-free")):
        report, err = diff_json(release, same_bytes, capsys)  # the same bytes, or another variant
        assert report["warnings"] == [] and err == ""
