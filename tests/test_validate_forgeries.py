"""``clincorp validate`` on forged releases (issue 16): manifest.json is not hashed, so every claim it makes
is checked against the data it describes and the installed corpus, and nothing it names is imported.

Each forgery below passed the validate of 0.2.0 (the hashes it checked were manifest.json's own).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.validate.run import check_release
from clinical_corpora.core.manifest import load_manifest
from clinical_corpora.core.registry import corpora
from clinical_corpora.core.release_manifest import read_manifest
from tests.conftest import TINY

CARD_DIFFERS = "README.md: differs from what the package draws from the release's data and records"
CROISSANT_DIFFERS = "croissant.json: differs from what the package draws from the release's data and records"
TEST_SHARD = "data/notes/test-00000-of-00001.parquet"
TRAIN_SHARD = "data/notes/train-00000-of-00001.parquet"


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sample release of the tiny corpus (read only: tests forge a copy)."""
    corpus = tmp_path_factory.mktemp("tiny") / "tiny"
    shutil.copytree(TINY, corpus, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return run(ReleaseRequest(load_manifest(corpus), tmp_path_factory.mktemp("out"))).folder


@pytest.fixture
def forged(release: Path, tmp_path: Path) -> Path:
    """A copy of the release, in a folder of the same corpus and version names."""
    return Path(shutil.copytree(release, tmp_path / "tiny" / release.name))


def validate(folder: Path, corpus: str | Path | None = TINY) -> tuple[int, str]:
    """``clincorp validate`` in process (``--corpus`` tests/tiny_corpus, or the installed corpora)."""
    out, err = io.StringIO(), io.StringIO()
    options = ["--corpus", str(corpus)] if corpus is not None else []
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["validate", str(folder), *options])
    return status, out.getvalue() + err.getvalue()


def failures(folder: Path, corpus: str | Path | None = TINY) -> dict[str, list[str]]:
    """The failed checks with their problems; the CLI must agree (exit 1, no traceback)."""
    status, printed = validate(folder, corpus)
    assert status == 1 and "Traceback" not in printed, printed
    return {
        gate.gate: [str(detail.get("problem", detail)) for detail in gate.details]
        for gate in check_release(folder, corpus=corpus)
        if not gate.success
    }


def edit_json(folder: Path, name: str, edit: Callable[[Any], None]) -> None:
    """Edit a JSON file of the release; a file other than manifest.json gets its hash recomputed (a
    forger who edits a hashed file fixes its hash too)."""
    path = folder / name
    content = json.loads(path.read_text(encoding="utf-8"))
    edit(content)
    path.write_text(json.dumps(content, indent=2), encoding="utf-8")
    if name != "manifest.json":
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        edit_json(folder, "manifest.json", lambda m: _set_hash(m, name, digest))


def _set_hash(manifest: dict[str, Any], name: str, digest: str) -> None:
    for output in manifest["outputs"]:
        if output["file"] == name:
            output["sha256"] = digest


def output(manifest: dict[str, Any], name: str) -> dict[str, Any]:
    return next(o for o in manifest["outputs"] if o["file"] == name)


def test_the_untouched_release_passes_every_check(release: Path) -> None:
    assert validate(release)[0] == 0
    assert [gate.gate for gate in check_release(release, corpus=TINY) if not gate.success] == []


def test_edited_shard_rows(forged: Path) -> None:
    edit_json(forged, "manifest.json", lambda m: output(m, TRAIN_SHARD).update(rows=5))
    assert failures(forged) == {"files": [f"{TRAIN_SHARD}: manifest.json says 5 rows, the parquet holds 2"]}


def test_edited_counts(forged: Path) -> None:
    edit_json(forged, "manifest.json", lambda m: m["counts"].update(written=300, rejected=4))
    found = failures(forged)
    assert found["manifest"] == [
        "manifest.json counts.written is 300, the parquet files hold 3 rows",
        "manifest.json counts.read is 3, but 3 records were released (config notes, one row per record read) "
        "and 4 rejected",
        "manifest.json counts.rejected is 4, rejects.jsonl holds 0",
    ]
    assert found["descriptions"] == [CARD_DIFFERS]  # its provenance section states the counts


def test_edited_gates(forged: Path) -> None:
    edit_json(forged, "manifest.json", lambda m: m["gates"][2].update(observed=0.99))
    assert failures(forged) == {"manifest": ["manifest.json gates differ from validation.json's"]}


def test_a_failed_gate_recorded_in_both_files(forged: Path) -> None:
    def fail(gates: list[dict[str, Any]]) -> None:
        gates[2].update(status="fail")

    edit_json(forged, "validation.json", lambda v: fail(v["gates"]))
    edit_json(forged, "manifest.json", lambda m: fail(m["gates"]))
    assert failures(forged) == {
        "files": [
            "validation.json: not a release's validation record: gates[2]: gate agreement.span_f1: status fail with "
            "success True"
        ]
    }


def test_a_failed_gate_recorded_as_such_is_judged_again(forged: Path) -> None:
    edit_json(forged, "validation.json", lambda v: v["gates"][2].update(status="fail", success=False))
    edit_json(forged, "manifest.json", lambda m: m["gates"][2].update(status="fail"))
    assert failures(forged)["manifest"] == [
        "gate agreement.span_f1: validation.json says fail against '>= 0.8'; tiny's thresholds make it pass "
        "against '>= 0.8' (observed 0.909091)",
        "gate agreement.span_f1: recorded as failed in a release",
    ]


def test_edited_inputs(forged: Path) -> None:
    recorded = json.loads((forged / "manifest.json").read_text())["inputs"]["notes"]["sha256"]
    edit_json(forged, "manifest.json", lambda m: m["inputs"]["notes"].update(sha256="0" * 64, bytes=1))
    found = failures(forged)
    assert found["manifest"] == [
        "inputs.jsonl: source 'notes' bytes is 150, manifest.json says 1",
        f"inputs.jsonl: source 'notes' sha256 is {recorded}, manifest.json says {'0' * 64}",
    ]
    assert found["descriptions"] == [CARD_DIFFERS, CROISSANT_DIFFERS]  # both state the inputs' sha256


@pytest.mark.parametrize(
    ("version", "sample", "problem"),
    [
        ("1.0.1+sample", True, "manifest.json version is '1.0.1+sample'; a sample release of the installed tiny is "),
        ("1.0.0", False, "manifest.json sample is False, but its inputs do not include samples"),
    ],
)
def test_edited_version(forged: Path, version: str, sample: bool, problem: str) -> None:
    edit_json(forged, "manifest.json", lambda m: m.update(version=version, sample=sample))
    problems = failures(forged)["manifest"]
    assert any(p.startswith(problem) for p in problems), problems


def test_a_release_in_a_folder_of_another_version(forged: Path) -> None:
    moved = forged.rename(forged.parent / "1.0.0")
    edit_json(moved, "manifest.json", lambda m: m.update(version="1.0.0"))
    edit_json(moved, "validation.json", lambda v: v.update(version="1.0.0"))
    assert failures(moved) == {
        "files": ["manifest.json: not a release manifest: version '1.0.0' and sample True disagree"]
    }


def test_a_deleted_split_with_its_manifest_entry(forged: Path) -> None:
    """The forger deletes the test shard, its outputs entry and fixes counts.written: still a failed check."""
    (forged / TEST_SHARD).unlink()

    def drop(manifest: dict[str, Any]) -> None:
        manifest["outputs"] = [o for o in manifest["outputs"] if o["file"] != TEST_SHARD]
        manifest["counts"]["written"] = 2

    edit_json(forged, "manifest.json", drop)
    found = failures(forged)
    assert found["manifest"] == [
        "config notes: splits ['train'] in the release, tiny's corpus.yaml declares ['test', 'train']",
        "manifest.json counts.read is 3, but 2 records were released (config notes, one row per record read) "
        "and 0 rejected",
    ]
    assert found["descriptions"] == [CARD_DIFFERS, CROISSANT_DIFFERS]


@pytest.mark.parametrize("path", ["../../../../etc/hostname", "/etc/hostname", "data/../../../outside.txt"])
def test_an_output_outside_the_release_is_never_read(forged: Path, path: str) -> None:
    outside = forged.parent.parent / "outside.txt"
    outside.write_text("secret\n")
    digest = hashlib.sha256(outside.read_bytes()).hexdigest()
    edit_json(forged, "manifest.json", lambda m: m["outputs"].append({"file": path, "sha256": digest}))
    [problem] = failures(forged)["files"]
    assert problem.startswith("manifest.json: not a release manifest: outputs[6].file: ")
    assert problem.endswith("a release lists only files inside its folder") and repr(path) in problem


def test_a_symbolic_link_leaving_the_release(forged: Path) -> None:
    outside = forged.parent.parent / "outside.txt"
    outside.write_text("secret\n")
    (forged / "extra.txt").symlink_to(outside)
    digest = hashlib.sha256(outside.read_bytes()).hexdigest()
    edit_json(forged, "manifest.json", lambda m: m["outputs"].append({"file": "extra.txt", "sha256": digest}))
    problems = failures(forged)["files"]
    assert problems[0] == "extra.txt: a symbolic link (a release holds only regular files and folders)"
    assert "extra.txt: listed in manifest.json but missing" in problems


def test_an_unlisted_symbolic_link_leaving_the_release(forged: Path) -> None:
    (forged / "data" / "elsewhere").symlink_to(forged.parent.parent, target_is_directory=True)
    assert failures(forged) == {
        "files": ["data/elsewhere: a symbolic link (a release holds only regular files and folders)"]
    }


def test_an_emptied_expectation_suite(forged: Path) -> None:
    edit_json(forged, "validation.json", lambda v: v.update(expectation_suite=[]))
    assert failures(forged) == {
        "expectations": ["validation.json's expectation_suite has 0 expectations, tiny's corpus.yaml has 3"]
    }


def test_a_relaxed_expectation_without_a_recorded_overlay(forged: Path) -> None:
    edit_json(forged, "validation.json", lambda v: v["expectation_suite"][2].update(mostly=0.1))
    assert failures(forged) == {
        "expectations": [
            "validation.json expectation 3 (notes.spans: expect_column_values_to_be_in_set (label)): "
            "{'mostly': None} -> {'mostly': 0.1} differs from tiny's corpus.yaml and no --gates overlay in "
            "manifest.json records that change"
        ]
    }


def test_a_replaced_expectation(forged: Path) -> None:
    edit_json(forged, "validation.json", lambda v: v["expectation_suite"][1].update(column="id"))
    assert failures(forged) == {
        "expectations": [
            "validation.json expectation 2 (notes: expect_column_value_lengths_to_be_between (id)): differs from "
            "tiny's corpus.yaml (notes: expect_column_value_lengths_to_be_between (text))"
        ]
    }


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda m: m.update(outputs="data"), "manifest.json: not a release manifest: outputs: Input should be a valid"),
        (lambda m: m["outputs"].append({"file": 3}), "manifest.json: not a release manifest: outputs[6].file: Input"),
        (lambda m: m["outputs"].append("README.md"), "manifest.json: not a release manifest: outputs[6]: Input"),
    ],
)
def test_malformed_outputs_are_a_failed_check(forged: Path, edit: Callable[[Any], None], problem: str) -> None:
    edit_json(forged, "manifest.json", edit)
    failed = failures(forged)
    assert any(p.startswith(problem) for p in failed["files"]), failed


def test_malformed_counts_and_rows_are_a_failed_check(forged: Path) -> None:
    def damage(manifest: dict[str, Any]) -> None:
        manifest["counts"] = [3]
        output(manifest, TEST_SHARD)["rows"] = "one"

    edit_json(forged, "manifest.json", damage)
    assert failures(forged) == {
        "files": ["manifest.json: not a release manifest: counts: Input should be an object (and 1 more problems)"]
    }


def test_a_release_of_a_corpus_that_is_not_installed(forged: Path) -> None:
    found = failures(forged, corpus=None)
    registered = ", ".join(sorted(map(str, corpora.keys())))  # whichever plugins are installed besides ours
    assert "sdoh" in registered and "tiny" not in registered
    assert found == {
        "manifest": [
            f"manifest.json names corpus 'tiny', which cannot be checked: no corpus 'tiny'; registered: {registered}"
        ]
    }


@pytest.fixture
def booby_trap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A module on sys.path that writes a file when it is imported; returns the file's path."""
    site = tmp_path / "site"
    site.mkdir()
    witness = tmp_path / "imported.txt"
    (site / "forged_builder.py").write_text(
        f"from pathlib import Path\nPath({str(witness)!r}).write_text('ran')\n\nclass Builder:\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(site))
    yield witness
    sys.modules.pop("forged_builder", None)


@pytest.mark.parametrize("corpus", ["tiny", "forged_builder"])
def test_a_module_the_manifest_names_is_never_imported(forged: Path, booby_trap: Path, corpus: str) -> None:
    edit_json(forged, "manifest.json", lambda m: m.update(builder="forged_builder:Builder", corpus=corpus))
    failed = failures(forged, corpus=None if corpus == "forged_builder" else TINY)
    assert not booby_trap.exists() and "forged_builder" not in sys.modules
    problems = failed["manifest"]
    if corpus == "tiny":
        assert (
            "manifest.json names builder 'forged_builder:Builder', the installed corpus uses "
            "'tests.tiny_corpus.builder:TinyBuilder'" in problems
        )
    else:
        assert problems[0].startswith("manifest.json names corpus 'forged_builder', which cannot be checked")


# ---- the --gates overlay is recomputed from its recorded text; a release can be pinned by digest -----------


@pytest.fixture(scope="module")
def overlaid_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sample release of the tiny corpus made with a --gates overlay that only raises max_rejects."""
    corpus = tmp_path_factory.mktemp("tiny-overlay") / "tiny"
    shutil.copytree(TINY, corpus, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    overlay = tmp_path_factory.mktemp("overlay") / "gates.yaml"
    overlay.write_text("max_rejects: 2\n", encoding="utf-8")
    return run(ReleaseRequest(load_manifest(corpus), tmp_path_factory.mktemp("out"), gate_overlay=overlay)).folder


def test_a_release_with_an_overlay_passes_and_records_it(overlaid_release: Path) -> None:
    recorded = read_manifest(overlaid_release).gate_overlay
    assert recorded is not None and recorded.overlay.max_rejects == 2
    assert recorded.changes == ["max_rejects: 0 -> 2"]
    assert validate(overlaid_release)[0] == 0


def test_forged_overlay_changes_cannot_excuse_a_relaxed_expectation(overlaid_release: Path, tmp_path: Path) -> None:
    forged = Path(shutil.copytree(overlaid_release, tmp_path / "tiny" / overlaid_release.name))
    excuse = "notes.spans: expect_column_values_to_be_in_set (label): {'mostly': None} -> {'mostly': 0.1}"
    edit_json(forged, "validation.json", lambda v: v["expectation_suite"][2].update(mostly=0.1))
    edit_json(forged, "manifest.json", lambda m: m["gate_overlay"]["changes"].append(excuse))
    found = failures(forged)
    assert found["manifest"] == [
        f"manifest.json gate_overlay changes are ['max_rejects: 0 -> 2', {excuse!r}]; its overlay makes "
        "['max_rejects: 0 -> 2'] of tiny's corpus.yaml"
    ]
    assert found["expectations"] == [
        "validation.json expectation 3 (notes.spans: expect_column_values_to_be_in_set (label)): "
        "{'mostly': None} -> {'mostly': 0.1} differs from tiny's corpus.yaml and the --gates overlay recorded "
        "in manifest.json does not make that change"
    ]


def test_a_forged_overlay_is_judged_as_it_reads(overlaid_release: Path, tmp_path: Path) -> None:
    """An overlay edited to excuse more rejects: its recorded changes no longer follow from it, and the card that
    states them is not the one the package draws."""
    forged = Path(shutil.copytree(overlaid_release, tmp_path / "tiny" / overlaid_release.name))
    edit_json(forged, "manifest.json", lambda m: m["gate_overlay"]["overlay"].update(max_rejects=9))
    found = failures(forged)
    assert found["manifest"][0].startswith("manifest.json gate_overlay changes are ['max_rejects: 0 -> 2']")


def test_a_relaxed_agreement_threshold_is_judged_again(forged: Path) -> None:
    def relax(validation: dict[str, Any]) -> None:
        validation["agreement"]["span_f1"] = 0.5
        gate = next(g for g in validation["gates"] if g["gate"] == "agreement.span_f1")
        gate.update(observed=0.5, expected=">= 0.4")

    edit_json(forged, "validation.json", relax)
    edit_json(
        forged,
        "manifest.json",
        lambda m: next(g for g in m["gates"] if g["gate"] == "agreement.span_f1").update(observed=0.5),
    )
    found = failures(forged)
    assert found["manifest"] == [
        "gate agreement.span_f1: validation.json says pass against '>= 0.4'; tiny's thresholds make it fail "
        "against '>= 0.8' (observed 0.5)"
    ]
    assert found["descriptions"] == [CARD_DIFFERS]


def test_release_prints_a_digest_that_validate_pins(tmp_path: Path) -> None:
    corpus = tmp_path / "tiny"
    shutil.copytree(TINY, corpus, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["release", str(corpus), "--out", str(tmp_path / "out")]) == 0
    digest = out.getvalue().split("digest sha256:")[1].split()[0]
    folder = next((tmp_path / "out" / "tiny").iterdir())
    assert digest == hashlib.sha256((folder / "manifest.json").read_bytes()).hexdigest()
    for expected, status in ((digest, 0), (f"sha256:{digest.upper()}", 0), ("0" * 64, 1)):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            code = main(["validate", str(folder), "--corpus", str(TINY), "--expect-digest", expected])
        assert code == status, printed.getvalue()
    assert "not the pinned release" in printed.getvalue() and "step 1/" not in printed.getvalue()
    edit_json(folder, "manifest.json", lambda m: m.update(note="edited"))
    assert main(["validate", str(folder), "--corpus", str(TINY), "--expect-digest", digest]) == 1
