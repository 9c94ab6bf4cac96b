"""Corpus manifests are read with libyaml's safe loader when PyYAML has it: the values are those of PyYAML's own."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from clinical_corpora.core import manifest
from clinical_corpora.core.manifest import load_manifest

ROOT = Path(__file__).resolve().parents[1]
MANIFESTS = sorted([*(ROOT / "corpora").glob("*/corpus.yaml"), ROOT / "tests" / "tiny_corpus" / "corpus.yaml"])


def test_libyaml_is_used_when_installed() -> None:
    assert manifest.YAML_LOADER is (yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
@pytest.mark.parametrize("path", MANIFESTS, ids=lambda path: path.parent.name)
def test_both_loaders_read_a_manifest_alike(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = path.read_text(encoding="utf-8")
    fast, pure = yaml.load(text, Loader=yaml.CSafeLoader), yaml.load(text, Loader=yaml.SafeLoader)
    assert fast == pure
    assert repr(fast) == repr(pure)  # the same types too (1 is not 1.0)
    monkeypatch.setattr(manifest, "YAML_LOADER", yaml.CSafeLoader)
    with_libyaml = load_manifest(path)
    monkeypatch.setattr(manifest, "YAML_LOADER", yaml.SafeLoader)
    assert load_manifest(path) == with_libyaml


def test_both_loaders_read_a_gate_overlay_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "gates:\n  max_rejects: 3\n  agreement:\n    overall_f1: {min: 0.75}\n"
    overlays = []
    for loader in {manifest.YAML_LOADER, yaml.SafeLoader}:
        monkeypatch.setattr(manifest, "YAML_LOADER", loader)
        overlays.append(manifest.parse_gate_overlay(text, Path("gates.yaml")))
    assert all(overlay == overlays[0] for overlay in overlays)
