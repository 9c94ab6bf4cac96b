"""Digests of the input files the readers read whole, recorded on the bytes they already hold."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from clinical_corpora.builders.sources.brat import iter_brat_folder
from clinical_corpora.builders.sources.read_digests import FileDigest, read_input, recording


def test_files_read_inside_a_recording_carry_their_sha256_and_size(tmp_path: Path) -> None:
    text = "Smokes daily. Café.\n"
    (tmp_path / "n1.txt").write_text(text, encoding="utf-8")
    (tmp_path / "n1.ann").write_text("T1\tTobacco 0 6\tSmokes\n", encoding="utf-8")

    with recording() as digests:
        [(doc_id, text) for doc_id, text, _ in iter_brat_folder(tmp_path)]

    assert digests == {
        os.path.abspath(tmp_path / name): FileDigest(
            hashlib.sha256((tmp_path / name).read_bytes()).hexdigest(), (tmp_path / name).stat().st_size
        )
        for name in ("n1.txt", "n1.ann")
    }


def test_nothing_is_recorded_outside_a_recording(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"x")
    with recording() as digests:
        pass
    assert read_input(path) == b"x" and digests == {}
