"""``clincorp validate`` of a text-free release, after its file hashes: the schema derived from the installed
corpus's record models, the full release it restores, the leak gate it passed, and tamper evidence.

The leak gate itself needs the source documents, which a modeller may not hold; it is re-run by
``clincorp rehydrate`` followed by ``clincorp release --text-free`` from the same sources. Without them,
the tamper gate (``builders/text_free/tamper.py``) finds prose planted after the build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.base import Builder, make_builder
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.plugins import find_corpus, installed_corpus
from clinical_corpora.builders.release.card.changes import changes_problems
from clinical_corpora.builders.release.folder import read_json
from clinical_corpora.builders.text_free.layout import FULL_FOLDER
from clinical_corpora.builders.text_free.leak_gate import LEAK_LIMIT
from clinical_corpora.builders.text_free.tamper import tamper_problems
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.schemas.features import features_for, schema_fingerprint
from clinical_corpora.schemas.licensed import licensed_tree, text_free_features
from clinical_corpora.validation.gates import GateResult


def text_free_checks(
    folder: Path, manifest: dict[str, Any], announce: Callable[[str], None], corpus: str | Path | None = None
) -> Iterator[GateResult]:
    announce("text-free step 2/4: schema against the installed corpus's record models, and the full release")
    try:
        installed = find_corpus(str(corpus)) if corpus is not None else installed_corpus(manifest.get("corpus"))
    except ClincorpError as error:
        problem = f"manifest.json names corpus {manifest.get('corpus')!r}, which cannot be checked: {error}"
        yield _gate("text-free schema", "features derived from the record models", [problem])
        return
    builder = make_builder(installed.builder, manifest.get("options"))
    yield _gate(
        "text-free schema", "features derived from the record models", _schema_problems(folder, manifest, builder)
    )
    announce("text-free step 3/4: the leak gate recorded in validation.json")
    yield _gate("leak", "the leak gate passed when the release was written", _leak_problems(folder))
    announce("text-free step 4/4: no prose the package does not write (text planted after the build)")
    yield _gate(
        "tamper",
        f"no run of more than {LEAK_LIMIT} characters of prose that this package does not write",
        tamper_problems(folder, installed, builder),
    )


def _gate(name: str, expected: str, problems: list[str]) -> GateResult:
    return GateResult(
        name, not problems, f"{len(problems)} problems", expected, [{"problem": p} for p in problems[:20]]
    )


def _schema_problems(folder: Path, manifest: dict[str, Any], builder: Builder) -> list[str]:
    view = ReleaseView(folder)
    problems = []
    expected = {}
    for config in view.configs():
        if config not in builder.CONFIGS:
            problems.append(f"config {config}: not a config of the installed {manifest.get('corpus')}")
            continue
        model = builder.CONFIGS[config]
        expected[config] = text_free_features(features_for(model), licensed_tree(model))
        problems += [
            f"{shard.name}: embedded features differ from the text-free {config} record model"
            for shard in view.shards(config)
            if view.shard_features(shard) != expected[config]
        ]
    if schema_fingerprint(expected) != manifest.get("schema_fingerprint"):
        problems.append("the installed record models no longer match the release's schema fingerprint")
    full = (
        read_json(folder / FULL_FOLDER / "manifest.json") if (folder / FULL_FOLDER / "manifest.json").is_file() else {}
    )
    if (full.get("corpus"), full.get("version")) != (manifest.get("corpus"), manifest.get("version")):
        problems.append(f"{FULL_FOLDER}/manifest.json does not describe the full release of this corpus and version")
    if manifest.get("changes") != full.get("changes"):
        problems.append(f"manifest.json changes differ from those {FULL_FOLDER}/manifest.json records")
    problems += changes_problems(manifest, _card_text(folder), view.configs())
    return problems


def _card_text(folder: Path) -> str:
    try:
        return (folder / "README.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _leak_problems(folder: Path) -> list[str]:
    validation = read_json(folder / "validation.json") if (folder / "validation.json").is_file() else {}
    gate = next((g for g in validation.get("gates", []) if g.get("gate") == "leak"), None)
    if gate is None:
        return ["validation.json records no leak gate"]
    observed = gate.get("observed", {})
    if gate.get("status") != "pass" or observed.get("longest_shared_run", 0) > observed.get("limit", 0):
        return [f"the leak gate did not pass: {observed}"]
    return []
