"""Shared fixtures: a writable copy of the tiny pipeline-test corpus."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

TINY = Path(__file__).parent / "tiny_corpus"


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> Path:
    """A copy of tests/tiny_corpus that a test may edit."""
    folder = tmp_path / "tiny"
    shutil.copytree(TINY, folder, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return folder
