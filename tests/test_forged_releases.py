"""Releases forged in ways tests/test_one_door.py, test_validate_forgeries.py and test_hostile_releases.py do not
list, full and text-free, opened with every command that reads a release: validate (and --json), view, diff
both ways, rehydrate (strict, --re-anchor, --check), export in each format, the corpus's scorer with the release
as gold, and baseline. None may crash (no traceback), validate must refuse each with parseable JSON, nothing
may be written outside --out, and a forgery the door refuses is refused by every command.

Each forger records the sha256 (and rows) of what it changed, so only the content checks can catch it. Found
on 0.5.0 and fixed: shards of another schema, a label id outside its set or a null id crashed view, diff,
export, score and baseline; a manifest with a key given twice passed validate.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.plugins import load_plugins
from clinical_corpora.core.registry import exporters
from tests import forgeries as forge
from tests.conftest import SampleVariant

SCORERS = {"sdoh": "sdoh", "rad_coref": "coref", "odie_anaphora": "coref", "snomed_el": "snomed", "clicr": "clicr"}
PREDICTIONS = {"sdoh": "", "rad_coref": "train.conll", "odie_anaphora": "train.conll", "snomed_el": "train.csv"}


@dataclass(frozen=True)
class Case:
    """A forgery of one corpus's sample release (``full`` or ``text-free``); ``door`` when the door must refuse
    it for every command, else validate alone must (the others may read it, but never crash on it)."""

    corpus: str
    variant: str
    name: str
    forgery: forge.Forgery
    door: bool

    def __str__(self) -> str:
        return f"{self.corpus}-{self.variant}-{self.name}"


def _manifest_cases() -> Iterator[Case]:
    """Every JSON value of :data:`forge.JSON_VALUES` at keys of the sdoh manifests, rotated so each key and
    each value is tried (the full manifest's keys, then the text-free one's). A value of the right type (a
    count too high) is validate's to refuse: a command that reads no count may read the release."""
    keys = {
        "full": [("corpus",), ("version",), ("builder",), ("inputs", "shac", "bytes"), ("counts", "written"),
                 ("outputs",), ("outputs", 0, "file"), ("outputs", 0, "rows"), ("outputs", 0, "sha256"),
                 ("gates", 0, "gate"), ("schema_fingerprint",), ("options",), ("release",)],
        "text-free": [("variant",), ("documents", "shac"), ("licensed_fields", "sdoh"), ("outputs", 1, "file"),
                      ("full_schema_fingerprint",), ("package_version",), ("gates",)],
    }  # fmt: skip
    values = list(forge.JSON_VALUES.items())
    position = 0
    for variant, paths in keys.items():
        for path in paths:
            for _ in range(2):
                label, value = values[position % len(values)]
                position += 1
                name = f"manifest-{'.'.join(map(str, path))}={label}"
                yield Case("sdoh", variant, name, forge.json_value_at("manifest.json", path, value), False)


def _text_cases() -> Iterator[Case]:
    for variant, name in [("full", "manifest.json"), ("text-free", "manifest.json"), ("full", "validation.json")]:
        for label, make in forge.TEXT_FORGERIES.items():
            door = name == "manifest.json"  # diff reads no validation.json; view refuses it
            yield Case("sdoh", variant, f"{name}-{label}", forge.raw_bytes(name, make), door)
    yield Case("sdoh", "text-free", "full-manifest-duplicated-key", forge.raw_bytes("full/manifest.json",
               forge.duplicated_key), False)  # fmt: skip


CORPORA = list(SCORERS)
SHARDS = {
    "sdoh": "data/sdoh/train-00000-of-00001.parquet",
    "rad_coref": "data/rad_coref/train-00000-of-00001.parquet",
    "snomed_el": "data/snomed_el/train-00000-of-00001.parquet",
    "clicr": "data/clicr/test-00000-of-00001.parquet",
    "odie_anaphora": "data/odie_anaphora/train-00000-of-00001.parquet",
}
HARMLESS_SHAPES = {"start-after-end", "offsets-past-end", "negative-offsets", "empty-row-group", "no-rows",
                   "type-changed", "offsets-over-int32"}  # fmt: skip
"""Shard forgeries that may keep the record model's shape (an id column already text, offsets already int64, a
split emptied): validate's records gate (and rehydrate's) judge their values; the others may read them."""


def _shard_cases() -> Iterator[Case]:
    """Each parquet forgery on a corpus and variant in turn, so every corpus meets most of them."""
    position = 0
    for name in forge.parquet_forgeries("x.parquet"):
        for _ in range(2):
            corpus, variant = CORPORA[position % 5], ("full", "text-free")[position // 5 % 2]
            position += 1
            if corpus == "clicr" and "offsets" in name or "after-end" in name and corpus == "clicr":
                corpus = "sdoh"  # a clicr query's shard holds no span with offsets
            yield Case(
                corpus, variant, name, forge.parquet_forgeries(SHARDS[corpus])[name], name not in HARMLESS_SHAPES
            )
    for position, (name, value) in enumerate(forge.HOSTILE_IDS.items()):  # ids that name files outside --out
        for corpus in (CORPORA[position % 5], CORPORA[(position + 2) % 5]):
            yield Case(corpus, "full", name, forge.rewrite_rows(SHARDS[corpus], forge.hostile_id(value)), False)
    for corpus in CORPORA:  # a null deep in a row, where the record model requires a value
        yield Case(
            corpus, "full", "null-nested-field", forge.rewrite_rows(SHARDS[corpus], forge.null_nested_field), True
        )
    for corpus in ("sdoh", "rad_coref"):
        for name, forgery in forge.RECIPE_FORGERIES.items():
            yield Case(corpus, "text-free", name, forgery, False)


def _file_cases() -> Iterator[Case]:
    yield Case("sdoh", "full", "readme-a-folder", forge.file_as_folder("README.md"), True)
    yield Case("rad_coref", "text-free", "shard-a-folder", forge.file_as_folder(SHARDS["rad_coref"]), True)
    yield Case("snomed_el", "full", "sparse-200mb-validation", forge.sparse_listed("validation.json"), True)
    yield Case("odie_anaphora", "text-free", "undeclared-config", forge.undeclared(
        SHARDS["odie_anaphora"], "data/planted/train-00000-of-00001.parquet"), False)  # fmt: skip
    yield Case("clicr", "full", "undeclared-split", forge.undeclared(
        SHARDS["clicr"], "data/clicr/holdout-00000-of-00001.parquet"), False)  # fmt: skip


CASES = [*_manifest_cases(), *_text_cases(), *_shard_cases(), *_file_cases()]


@pytest.fixture(scope="module")
def predictions(sample_variant: SampleVariant, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each corpus's first baseline's predictions on its sample release (what its scorer is given)."""
    made = {}
    for corpus in CORPORA:
        out = tmp_path_factory.mktemp(f"baseline-{corpus}")
        assert main(["baseline", corpus, str(sample_variant(corpus, "full")), "--out", str(out)]) == 0
        made[corpus] = out / PREDICTIONS.get(corpus, "test.json")
    return made


def commands(case: Case, release: Path, good: Path, predicted: Path, out: Path) -> list[list[str]]:
    """Every command that opens a release, on ``release``."""
    load_plugins()
    formats = sorted(name for name, owner in exporters.keys() if owner == case.corpus)
    score = ["score", SCORERS[case.corpus], str(release), str(predicted)]
    score += {"coref": [], "snomed": ["--split", "train", "--replicates", "5"]}.get(SCORERS[case.corpus], [])
    score += [] if SCORERS[case.corpus] == "coref" else ["--out", str(out / "scores.json")]
    return [
        ["view", str(release), "--out", str(out / "view")],
        ["diff", str(good), str(release)],
        ["diff", str(release), str(good)],
        ["rehydrate", str(release), "--out", str(out / "rehydrated")],
        ["rehydrate", str(release), "--out", str(out / "re-anchored"), "--re-anchor"],
        ["rehydrate", str(release), "--check"],
        *(["export", name, str(release), "--out", str(out / name)] for name in formats),
        score,
        ["baseline", case.corpus, str(release), "--out", str(out / "baseline")],
    ]


def everything_but(root: Path, out: Path) -> dict[str, tuple[int, int]]:
    return {
        str(path): (path.lstat().st_size, path.lstat().st_mtime_ns)
        for path in root.rglob("*")
        if out not in path.parents and path != out
    }


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(argv)
    printed = capsys.readouterr()
    assert "Traceback" not in printed.out + printed.err, argv
    return status, printed.out


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_forged_release_is_refused_or_read_without_a_crash(
    case: Case,
    sample_variant: SampleVariant,
    predictions: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good = sample_variant(case.corpus, "full")
    release = forge.copy_release(sample_variant(case.corpus, case.variant), tmp_path / "download")
    case.forgery(release)
    out = tmp_path / "out"
    before = everything_but(tmp_path, out)
    assert run(["validate", str(release)], capsys)[0] == 1
    status, printed = run(["validate", str(release), "--json"], capsys)
    assert status == 1 and json.loads(printed)["verdict"] == "invalid"
    for argv in commands(case, release, good, predictions[case.corpus], out):
        status, _ = run(argv, capsys)
        assert status != 0 or not case.door, argv
    assert everything_but(tmp_path, out) == before and not Path("/tmp/clincorp-escaped").exists()


def test_a_patient_id_that_is_no_subject_id_is_viewed_with_the_annotators(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rad_coref patient id is any identifier the record model takes; the annotators' overlay matches the
    annotation folders (MIMIC SUBJECT_IDs) by number and passes over the others instead of crashing."""
    release = Path(shutil.copytree(sample_variant("rad_coref", "full"), tmp_path / "rad_coref" / "rad_coref-forged"))
    shard = forge.first_shard(release)

    def rename_first_patient(rows: list[dict[str, Any]]) -> None:
        rows[0]["patient_id"] = "patient-a"

    forge.rewrite_rows(shard, rename_first_patient)(release)
    status = main(["view", str(release), "--out", str(tmp_path / "view")])
    assert status == 0 and "Traceback" not in capsys.readouterr().err
