"""``clincorp rehydrate --re-key``: a text-free release restored from a notes table whose ids are all other
than the maintainer's (an OMOP ``NOTE`` export, MIMIC-III ``NOTEEVENTS``, MIMIC-IV ``note``), each document
found by its content; a document no note or two notes match is named in rekey.csv, never mapped by chance."""

from __future__ import annotations

import csv
import gzip
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks.perturb import SENTENCE
from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.rehydrate.rekey import Rekeyed, read_notes_table, rekeyed_by_share
from clinical_corpora.builders.rehydrate.run import source_texts
from clinical_corpora.core.errors import SourceError
from tests.conftest import SampleVariant, copy_beside


def _write_csv(path: Path, header: tuple[str, str], rows: list[tuple[str, str]]) -> Path:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8", newline="") as stream:  # type: ignore[operator]
        writer = csv.writer(stream)
        writer.writerow(("person_id", *header))
        writer.writerows(("1", note_id, text) for note_id, text in rows)
    return path


def _rekey_csv(folder: Path) -> dict[str, tuple[str, str]]:
    with folder.with_name(folder.name + ".rekey.csv").open(encoding="utf-8", newline="") as stream:
        return {row["document"]: (row["note_id"], row["evidence"]) for row in csv.DictReader(stream)}


def test_a_table_of_other_ids_is_re_keyed_by_content_and_nothing_is_guessed(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every id replaced; one note removed, one given twice, one with CRLF line ends, one with a sentence added
    in the middle: the others map by sha256, those two by the normalised sha256 and the block hashes, the
    removed and the repeated ones are named."""
    full, text_free = copy_beside(sample_variant("sdoh", "full"), sample_variant("sdoh", "text-free"), tmp_path)
    texts = source_texts(text_free)
    rng = random.Random(5)
    new_ids = {locator: str(rng.randrange(10**8, 10**9)) for locator in texts}
    removed, repeated, crlf, edited = sorted(texts)[:4]
    rows = []
    for locator, text in sorted(texts.items(), key=lambda item: new_ids[item[0]]):
        if locator == crlf:
            text = text.replace("\n", "\r\n")
        elif locator == edited:
            middle = text.index(" ", len(text) // 2)
            text = text[:middle] + SENTENCE + text[middle:]
        if locator != removed:
            rows.append((new_ids[locator], text))
    rows.append(("999", texts[repeated]))
    table = _write_csv(tmp_path / "NOTE.csv", ("note_id", "note_text"), rows)

    assert main(["rehydrate", str(text_free), "--re-key", str(table), "--out", str(tmp_path / "out")]) == 0
    folder = tmp_path / "out" / "sdoh" / full.name
    assert f"{len(texts) - 2} document(s) found" in capsys.readouterr().out
    rekeyed = _rekey_csv(folder)
    assert set(rekeyed) == set(texts)
    for locator, (note_id, evidence) in rekeyed.items():
        if locator == removed:
            assert note_id == "" and evidence.startswith("not found")
        elif locator == repeated:
            assert note_id == "" and evidence.startswith("ambiguous: 2 notes") and "999" in evidence
        else:
            assert note_id == new_ids[locator]  # never another note
            expected = {crlf: "normalised sha256", edited: "blocks"}.get(locator, "sha256")
            assert evidence.startswith(expected)
    assert main(["validate", str(folder)]) == 0, capsys.readouterr().out


@pytest.mark.parametrize(
    "name, header",
    [
        ("NOTEEVENTS.csv.gz", ("ROW_ID", "TEXT")),
        ("note.csv", ("note_id", "text")),
        ("NOTE.parquet", ("note_id", "note_text")),
    ],
)
def test_known_notes_layouts_are_read_by_their_columns(name: str, header: tuple[str, str], tmp_path: Path) -> None:
    rows = [("11", 'Lives alone.\nSmokes daily, "1 ppd".\n'), ("12", "Denies alcohol use.")]
    path = tmp_path / name
    if name.endswith(".parquet"):
        pq.write_table(pa.table({"person_id": ["1", "1"], header[0]: [11, 12], header[1]: [t for _, t in rows]}), path)
    else:
        _write_csv(path, header, rows)
    assert read_notes_table(path, None, None).notes == dict(rows)


def test_an_unknown_layout_or_a_repeated_id_is_an_error_naming_the_file(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _write_csv(tmp_path / "export.csv", ("doc", "body"), [("1", "a note")])
    text_free = sample_variant("sdoh", "text-free")
    assert main(["rehydrate", str(text_free), "--re-key", str(table), "--out", str(tmp_path / "out")]) == 1
    error = capsys.readouterr().err
    assert "export.csv" in error and "--id-column and --text-column" in error and "Traceback" not in error
    assert read_notes_table(table, "doc", "body").notes == {"1": "a note"}
    repeated = _write_csv(tmp_path / "repeated.csv", ("doc", "body"), [("1", "a note"), ("1", "another")])
    with pytest.raises(SourceError, match="repeated.csv.*the id '1' of column doc is given to two notes"):
        read_notes_table(repeated, "doc", "body")
    assert not (tmp_path / "out").exists()


def test_a_note_is_taken_by_its_blocks_only_well_ahead_of_every_other() -> None:
    """Notes written from one template share blocks: the best note is taken only when it holds at least half
    of the document's blocks and a quarter more than any other; otherwise every close note is named."""
    rekeyed = Rekeyed()
    rekeyed_by_share(rekeyed, "ahead", {"n1": 0.95, "n2": 0.6})
    rekeyed_by_share(rekeyed, "close", {"n1": 0.9, "n2": 0.8, "n3": 0.3})
    rekeyed_by_share(rekeyed, "too little", {"n1": 0.4})
    assert rekeyed.mapped == {"ahead": ("n1", "blocks: 95% of its blocks found, the next note 60%")}
    assert rekeyed.unmapped["close"] == "ambiguous: 2 notes hold 80% to 90% of its blocks (n1, n2)"
    assert rekeyed.unmapped["too little"].startswith("not found")
