"""The card's figures: every sample release draws its paper's data figures into files it lists and links, the
same bytes in any process and whatever the user's matplotlib settings, each PNG holding, as text, every string
it draws and no date or software tag; charts hold label names and counts only."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from clinical_corpora.builders.plugins import all_corpora
from clinical_corpora.builders.release.card.card import _kwargs_text
from clinical_corpora.builders.release.card.figures import figure_files, png_bytes
from clinical_corpora.builders.release.card.markdown import FIGURES_FOLDER
from clinical_corpora.builders.validate.run import check_release
from clinical_corpora.core.card import BarChart, CardSection, Series, Table, number_text
from clinical_corpora.core.errors import ClincorpError
from tests.conftest import SampleRelease

CORPORA = [manifest.name for manifest in all_corpora()]
IMAGE_LINK = re.compile(r"!\[([^\]]+)\]\(([^)]+)\)")

EXPECTED_FIGURES = {
    "clicr": {"passage-lengths", "query-lengths", "answer-lengths", "answer-categories"},
    "odie_anaphora": {
        "annotations-per-institution",
        "agreement-per-note-type",
        "agreement-per-relation-type",
        "agreement-per-markable-type",
    },
    "rad_coref": {
        "chains-by-reports-covered",
        "time-between-coreferent-mentions",
        "modality-combinations",
        "inter-annotator-agreement",
    },
    "sdoh": {"events-by-type", "arguments-by-type", "inter-annotator-agreement"},
    "snomed_el": {"hierarchy-shares", "concept-frequency", "inter-annotator-agreement"},
}

CHART = BarChart(
    "events-by-type",
    "Events by type",
    ("Alcohol", "Drug", "Tobacco"),
    (Series("train", (3, 1_200, 0)), Series("test", (1, 2, 5))),
    "event type",
    "events",
    stacked=True,
    horizontal=True,
)


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, payload) of each chunk of a PNG file."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, position = [], 8
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        chunks.append((data[position + 4 : position + 8], data[position + 8 : position + 8 + length]))
        position += 12 + length
    return chunks


@pytest.mark.parametrize("corpus", CORPORA)
def test_every_sample_release_draws_its_figures_lists_and_links_them(
    corpus: str, sample_release: SampleRelease
) -> None:
    folder = sample_release(corpus).folder
    drawn = {path.stem for path in (folder / FIGURES_FOLDER).iterdir()}
    assert drawn == EXPECTED_FIGURES[corpus]
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    listed = {entry["file"]: entry["sha256"] for entry in manifest["outputs"]}
    card = (folder / "README.md").read_text(encoding="utf-8")
    links = {target: alt for alt, target in IMAGE_LINK.findall(card)}
    for name in sorted(drawn):
        path = f"{FIGURES_FOLDER}/{name}.png"
        assert listed[path] == hashlib.sha256((folder / path).read_bytes()).hexdigest()
        assert links[path]  # relative to the card, with the chart's title as its text
    assert set(links) == {f"{FIGURES_FOLDER}/{name}.png" for name in drawn}


def test_validate_fails_a_release_whose_figure_was_changed(sample_release: SampleRelease, tmp_path: Path) -> None:
    folder = sample_release("sdoh").folder
    copy = Path(shutil.copytree(folder, tmp_path / "sdoh" / folder.name))
    assert [gate.gate for gate in check_release(copy) if not gate.success] == []
    (copy / FIGURES_FOLDER / "events-by-type.png").write_bytes(png_bytes(CHART))
    failed = {gate.gate: gate for gate in check_release(copy) if not gate.success}
    assert list(failed) == ["files"]
    assert "figures/events-by-type.png: sha256 differs from manifest.json" in json.dumps(failed["files"].details)


def test_a_figure_is_the_same_bytes_in_another_process_whatever_the_users_settings(tmp_path: Path) -> None:
    """Two fresh interpreters, one with another hash seed and a matplotlibrc changing fonts, sizes and colours."""
    config = tmp_path / "mplconfig"
    config.mkdir()
    (config / "matplotlibrc").write_text(
        "font.family: serif\nfont.size: 20\naxes.facecolor: red\nfigure.dpi: 40\nsavefig.dpi: 40\n", encoding="utf-8"
    )
    script = (
        "import hashlib, pickle, sys\n"
        "from clinical_corpora.builders.release.card.figures import png_bytes\n"
        "sys.stdout.write(hashlib.sha256(png_bytes(pickle.loads(sys.stdin.buffer.read()))).hexdigest())\n"
    )
    digests = []
    for seed, extra in (("1", {}), ("2", {"MPLCONFIGDIR": str(config)})):
        environment = {**os.environ, "PYTHONHASHSEED": seed, **extra}
        done = subprocess.run(
            [sys.executable, "-c", script], input=pickle.dumps(CHART), env=environment, capture_output=True, check=True
        )
        digests.append(done.stdout.decode())
    assert digests[0] == digests[1] == hashlib.sha256(png_bytes(CHART)).hexdigest()


def test_a_figure_records_every_string_it_draws_and_no_date_or_software() -> None:
    chunks = png_chunks(png_bytes(CHART))
    kinds = [kind for kind, _ in chunks]
    assert b"tIME" not in kinds
    texts = {payload.split(b"\0", 1)[0]: payload.split(b"\0", 1)[1] for kind, payload in chunks if kind == b"tEXt"}
    assert set(texts) == {b"Description"}
    described = texts[b"Description"].decode("latin-1").split(" | ")
    assert described == [
        "Events by type",
        "event type",
        "events",
        "Alcohol",
        "Drug",
        "Tobacco",
        "train",
        "test",
    ]


def test_a_string_beyond_latin_1_is_recorded_as_utf8_text() -> None:
    chart = BarChart.counts("kappa", "Agreement (κ)", {"identity": 0.9, "part/whole": 0.28}, "relation", "κ")
    chunks = dict(png_chunks(png_bytes(chart)))
    assert "Agreement (κ)".encode() in chunks[b"iTXt"]


def test_a_chart_checks_its_name_and_series() -> None:
    with pytest.raises(ValueError, match="lower-case words"):
        BarChart.counts("Events by type", "t", {"a": 1}, "x", "y")
    with pytest.raises(ValueError, match="has 1 values for 2 categories"):
        BarChart("events", "t", ("a", "b"), (Series("n", (1,)),), "x", "y")
    with pytest.raises(ValueError, match="no series"):
        BarChart("events", "t", ("a",), (), "x", "y")


def test_two_figures_of_one_name_are_an_error_and_a_section_without_figures_draws_none() -> None:
    sections = [CardSection("A", figures=[CHART]), CardSection("B", table=Table(["x"], [[1]]), figures=[CHART])]
    with pytest.raises(ClincorpError, match="two figures named events-by-type"):
        figure_files(sections)
    assert figure_files([CardSection("A")]) == {}


def test_a_histogram_bins_whole_numbers_in_round_widths_up_to_the_largest() -> None:
    chart = BarChart.histogram("lengths", "Lengths", [0, 3, 49, 50, 1_234], "tokens", "passages")
    assert chart.categories[:2] == ("0-199", "200-399") and chart.categories[-1] == "1,200-1,399"
    assert chart.series[0].values == (4, 0, 0, 0, 0, 0, 1)
    small = BarChart.histogram("answers", "Answers", [1, 1, 2, 4], "tokens", "answers")
    assert small.categories == ("1", "2", "3", "4") and small.series[0].values == (2, 1, 0, 1)


def test_card_numbers_are_formatted_for_people() -> None:
    assert [number_text(value) for value in (12_345, 0.89051, 6.5, 90.0, float("nan"), True, "12345")] == [
        "12,345",
        "0.8905",
        "6.5",
        "90",
        "n/a",
        "True",
        "12345",
    ]
    assert Table(["rows", "F1"], [[5_313, 0.5]]).markdown().splitlines()[-1] == "| 5,313 | 0.5 |"


def test_a_long_expectation_argument_is_summarised_with_a_link_to_validation_json() -> None:
    slots = [f"Drug/StatusTime/{number}" for number in range(45)]
    text = _kwargs_text({"column": "slot", "value_set": slots})
    assert text.startswith("column=slot, value_set=['Drug/StatusTime/0', 'Drug/StatusTime/1', 'Drug/StatusTime/2', …")
    assert "45 values in all, see [validation.json](validation.json)" in text
    assert "Drug/StatusTime/44" not in text
    assert _kwargs_text({"value_set": ["a", "b"]}) == "value_set=['a', 'b']"
