"""Input discovery loses nothing (issue 16): every file under a source is read, named in an error, or
counted in a warning; suffixes in any case; linked folders followed and hashed; a document missing a
companion file is an error naming it (a counted reject under quarantine).

Each case runs a real reader or builder over a copy of a corpus's invented sample changed in tmp_path."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest

from clinical_corpora.builders.contract.base import BuildContext, Builder, Row
from clinical_corpora.builders.release.inputs import fingerprint_inputs, resolve_sources
from clinical_corpora.builders.sources.brat.folder import brat_documents
from clinical_corpora.builders.sources.brat.standoff import iter_brat_folder
from clinical_corpora.builders.sources.discovery import find_documents, walk_files
from clinical_corpora.builders.sources.i2b2.coref import i2b2_documents
from clinical_corpora.builders.sources.knowtator.folder import knowtator_files
from clinical_corpora.builders.sources.rf2 import locate_snapshot_files
from clinical_corpora.builders.sources.umls import locate_rrf_files
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.manifest import load_manifest
from clinical_corpora.corpora.clicr.builder import ClicrBuilder
from clinical_corpora.corpora.odie_anaphora.builder import OdieAnaphoraBuilder
from clinical_corpora.corpora.rad_coref.builder import RadCorefBuilder
from clinical_corpora.corpora.sdoh.builder import SdohBuilder
from clinical_corpora.schemas.bigbio import KbDocument, QaRecord

CORPORA = Path(__file__).resolve().parents[1] / "corpora"


def copied(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(CORPORA / name, folder)
    return folder


def generate(
    corpus: Path, builder: Builder, on_error: str = "fail", overrides: dict[str, Path] | None = None
) -> tuple[list[Row], BuildContext]:
    manifest = load_manifest(corpus)
    """The rows of the corpus's own configs (not their BigBio views) and the build's context."""
    ctx = BuildContext(manifest, resolve_sources(manifest, overrides or {}), on_error)  # type: ignore[arg-type]
    return [row for row in builder.generate(ctx) if not isinstance(row.record, KbDocument | QaRecord)], ctx


def ids(rows: list[Row], config: str) -> list[str]:
    return sorted(str(getattr(row.record, "id", None) or row.record.patient_id) for row in rows if row.config == config)


# ---- the walk -----------------------------------------------------------------------------------------


def test_linked_folders_are_followed(tmp_path: Path) -> None:
    (tmp_path / "elsewhere" / "dev").mkdir(parents=True)
    (tmp_path / "elsewhere" / "dev" / "a.txt").write_text("a")
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "dev").symlink_to(tmp_path / "elsewhere" / "dev", target_is_directory=True)
    assert walk_files(tmp_path / "root") == [tmp_path / "root" / "dev" / "a.txt"]


def test_a_link_loop_is_an_error_naming_the_link(tmp_path: Path) -> None:
    (tmp_path / "root" / "train").mkdir(parents=True)
    (tmp_path / "root" / "train" / "a.txt").write_text("a")
    (tmp_path / "root" / "train" / "again").symlink_to(tmp_path / "root", target_is_directory=True)
    with pytest.raises(SourceError, match="symbolic link looping back") as raised:
        walk_files(tmp_path / "root")
    assert raised.value.path == str(tmp_path / "root" / "train" / "again")


def test_a_link_to_a_folder_read_elsewhere_is_an_error_naming_both(tmp_path: Path) -> None:
    (tmp_path / "shac" / "train").mkdir(parents=True)
    (tmp_path / "shac" / "train" / "0101.txt").write_text("a")
    (tmp_path / "shac" / "dev").symlink_to(tmp_path / "shac" / "train", target_is_directory=True)
    with pytest.raises(SourceError, match=r"is the same folder as .*shac/dev .*read twice") as raised:
        walk_files(tmp_path / "shac")
    assert raised.value.path == str(tmp_path / "shac" / "train")


def test_a_dangling_link_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "gone.ann").symlink_to(tmp_path / "nowhere.ann")
    with pytest.raises(SourceError, match="which does not exist") as raised:
        walk_files(tmp_path)
    assert raised.value.path == str(tmp_path / "gone.ann")


def test_suffixes_in_any_case_pair_by_stem(tmp_path: Path) -> None:
    (tmp_path / "0101.TXT").write_text("Smokes.\n")
    (tmp_path / "0101.Ann").write_text("T1\tTobacco 0 6\tSmokes\n")
    [(doc_id, text, doc)] = list(iter_brat_folder(tmp_path))
    assert (doc_id, text, [t.text for t in doc.textbounds]) == ("0101", "Smokes.\n", ["Smokes"])


def test_two_files_differing_only_in_suffix_case_are_an_error_naming_both(tmp_path: Path) -> None:
    (tmp_path / "0101.txt").write_text("Smokes.\n")
    (tmp_path / "0101.ann").write_text("")
    (tmp_path / "0101.ANN").write_text("")
    with pytest.raises(SourceError, match=r"0101\.ANN and 0101\.ann|0101\.ann and 0101\.ANN"):
        brat_documents(tmp_path)


def test_files_ignored_by_design_are_counted_in_one_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    for name in ("0101.txt", "0101.ann", "annotation.conf", "visual.conf", "tools.conf", ".stats_cache"):
        (tmp_path / name).write_text("")
    with caplog.at_level(logging.WARNING):
        assert [d.id for d in brat_documents(tmp_path)] == ["0101"]
    [record] = caplog.records
    assert "4 file(s) left out" in record.getMessage()
    assert all(name in record.getMessage() for name in ("annotation.conf", "visual.conf", ".stats_cache"))


def test_any_other_file_is_an_error_naming_it(tmp_path: Path) -> None:
    for name in ("0101.txt", "0101.ann", "notes.docx"):
        (tmp_path / name).write_text("")
    with pytest.raises(SourceError, match=r"notes\.docx is not BRAT \.txt/\.ann files"):
        brat_documents(tmp_path)


def test_format_listings_read_suffixes_in_any_case(tmp_path: Path) -> None:
    odie = copied(tmp_path, "odie_anaphora") / "sample"
    (odie / "gold" / "mayo_cc_01.txt.knowtator.xml").rename(odie / "gold" / "mayo_cc_01.TXT.KNOWTATOR.XML")
    assert "mayo_cc_01" in knowtator_files(odie / "gold")
    (odie / "i2b2" / "concepts" / "mayo_cc_01.txt.con").rename(odie / "i2b2" / "concepts" / "mayo_cc_01.TXT.CON")
    [mayo] = [files for files in i2b2_documents(odie / "i2b2") if files.doc_id == "mayo_cc_01"]
    assert mayo.path("concepts").name == "mayo_cc_01.TXT.CON"
    meta = copied(tmp_path, "clicr") / "sample" / "umls" / "META"
    (meta / "MRSTY.RRF").rename(meta / "mrsty.rrf")
    assert locate_rrf_files(meta)[1].name == "mrsty.rrf"


def test_umls_and_rf2_count_the_release_files_they_do_not_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    meta = copied(tmp_path, "clicr") / "sample" / "umls" / "META"
    (meta / "MRREL.RRF").write_text("")
    with caplog.at_level(logging.WARNING):
        locate_rrf_files(meta)
    assert "MRREL.RRF" in caplog.text
    rf2 = copied(tmp_path, "snomed_el") / "sample"
    snapshot = next(path for path in walk_files(rf2) if path.name.startswith("sct2_Concept_Snapshot"))
    snapshot.rename(snapshot.with_name(snapshot.name.upper().replace(".TXT", ".txt")))
    assert locate_snapshot_files(snapshot.parent).concept.name.startswith("SCT2_CONCEPT_SNAPSHOT")


# ---- sdoh: suffix case and linked splits, read and hashed ---------------------------------------------


def test_sdoh_reads_upper_case_suffixes(tmp_path: Path) -> None:
    corpus = copied(tmp_path, "sdoh")
    notes = corpus / "sample" / "shac" / "train" / "mimic"
    for path in notes.glob("0101.*"):
        path.rename(path.with_suffix(path.suffix.upper()))
    rows, ctx = generate(corpus, SdohBuilder())
    [note] = [row.record for row in rows if row.record.id == "train/mimic/0101"]  # type: ignore[attr-defined]
    assert ctx.read == 12 and note.has_ann_file and note.events  # type: ignore[attr-defined]


def test_sdoh_follows_a_linked_split_and_hashes_it(tmp_path: Path) -> None:
    corpus = copied(tmp_path, "sdoh")
    shac = corpus / "sample" / "shac"
    shutil.move(shac / "dev", tmp_path / "dev-elsewhere")
    (shac / "dev").symlink_to(tmp_path / "dev-elsewhere", target_is_directory=True)
    rows, ctx = generate(corpus, SdohBuilder())
    assert ctx.read == 12 and sorted({row.split for row in rows}) == ["dev", "test", "train"]
    manifest = load_manifest(corpus)
    inputs = fingerprint_inputs(manifest, resolve_sources(manifest, {}), set())
    hashed = {item["file"] for item in inputs if item["source"] == "shac"}
    assert {"dev/mimic/0301.ann", "dev/uw/0402.txt"} <= hashed


def test_sdoh_ann_without_text_is_a_counted_reject(tmp_path: Path) -> None:
    corpus = copied(tmp_path, "sdoh")
    (corpus / "sample" / "shac" / "train" / "mimic" / "0101.txt").unlink()
    with pytest.raises(SourceError, match=r"0101\.ann has no companion train/mimic/0101\.txt"):
        generate(corpus, SdohBuilder())
    rows, ctx = generate(corpus, SdohBuilder(), "quarantine")
    assert ctx.read == 12 and len(rows) == 11 and ctx.rejected("record") == 1
    assert "0101.ann" in ctx.rejects[0].where


# ---- rad_coref: a report or patient without annotations ------------------------------------------------


def test_rad_coref_gold_report_without_ann_is_named(tmp_path: Path) -> None:
    corpus = copied(tmp_path, "rad_coref")
    gold = corpus / "sample" / "annotations" / "gold"
    (gold / "93310" / "1000304.ann").unlink()
    with pytest.raises(SourceError, match=r"1000304\.txt has no companion 93310/1000304\.ann"):
        generate(corpus, RadCorefBuilder())
    rows, ctx = generate(corpus, RadCorefBuilder(), "quarantine")
    assert ids(rows, "rad_coref") == ["91234", "92871"] and ctx.read == 3 and ctx.rejected("record") == 1
    assert "93310/1000304.txt" in ctx.rejects[0].where


@pytest.mark.parametrize("keep_texts", [True, False], ids=["texts only", "empty folder"])
def test_rad_coref_patient_without_annotations_is_named(tmp_path: Path, keep_texts: bool) -> None:
    corpus = copied(tmp_path, "rad_coref")
    patient = corpus / "sample" / "annotations" / "gold" / "92871"
    for path in list(patient.iterdir()):
        if path.suffix == ".ann" or not keep_texts:
            path.unlink()
    rows, ctx = generate(corpus, RadCorefBuilder(), "quarantine")
    assert ids(rows, "rad_coref") == ["91234", "93310"] and ctx.read == 3 and ctx.rejected("record") == 1
    assert "92871" in ctx.rejects[0].where


# ---- odie_anaphora: i2b2 files without their text, notes without their annotations -------------------


def test_odie_i2b2_concepts_and_chains_without_docs_are_named(tmp_path: Path) -> None:
    corpus = copied(tmp_path, "odie_anaphora")
    i2b2 = corpus / "sample" / "i2b2"
    (i2b2 / "docs" / "upmc_er_01.txt").unlink()
    overrides = {"i2b2": i2b2}
    with pytest.raises(SourceError, match=r"file not found; chains/upmc_er_01\.txt\.chains, concepts/") as raised:
        generate(corpus, OdieAnaphoraBuilder(), overrides=overrides)
    assert raised.value.path.endswith("docs/upmc_er_01.txt")
    rows, ctx = generate(corpus, OdieAnaphoraBuilder(), "quarantine", overrides)
    assert ctx.read == 6 and len(rows) == 5 and ctx.rejected("record") == 1


def test_odie_note_text_without_knowtator_file_is_named(tmp_path: Path) -> None:
    corpus = copied(tmp_path, "odie_anaphora")
    (corpus / "sample" / "gold" / "upmc_sp_01.txt.knowtator.xml").unlink()
    with pytest.raises(SourceError, match=r"no upmc_sp_01\.txt\.knowtator\.xml in source knowtator") as raised:
        generate(corpus, OdieAnaphoraBuilder())
    assert raised.value.path.endswith("text/upmc_sp_01.txt")
    rows, ctx = generate(corpus, OdieAnaphoraBuilder(), "quarantine")
    assert ctx.read == 6 and len(rows) == 5 and ctx.rejected("record") == 1


def test_odie_knowtator_file_without_its_text_is_named(tmp_path: Path) -> None:
    corpus = copied(tmp_path, "odie_anaphora")
    (corpus / "sample" / "text" / "upmc_sp_01.txt").unlink()
    rows, ctx = generate(corpus, OdieAnaphoraBuilder(), "quarantine")
    assert ctx.read == 6 and len(rows) == 5
    assert "upmc_sp_01.txt.knowtator.xml" in ctx.rejects[0].where and "not found" in ctx.rejects[0].reason


def test_i2b2_type_error_names_the_concepts_file_and_line(tmp_path: Path) -> None:
    corpus = copied(tmp_path, "odie_anaphora")
    i2b2 = corpus / "sample" / "i2b2"
    concepts = i2b2 / "concepts" / "mayo_cc_01.txt.con"
    lines = concepts.read_text().splitlines(keepends=True)
    lines[1] = lines[1].rsplit('t="', 1)[0] + 't="vegetable"\n'
    concepts.write_text("".join(lines))
    with pytest.raises(SourceError, match="has type 'vegetable'") as raised:
        generate(corpus, OdieAnaphoraBuilder(), overrides={"i2b2": i2b2})
    assert (raised.value.path, raised.value.line) == (str(concepts), 2)


# ---- clicr: pages in linked folders, one page per case id ---------------------------------------------


def test_clicr_duplicate_case_ids_name_both_files(tmp_path: Path) -> None:
    corpus = copied(tmp_path, "clicr")
    pages = corpus / "sample" / "bmj_html"
    shutil.copy(pages / "bcr-2019-228101.html", pages / "bcr-2019-228101.htm")
    with pytest.raises(SourceError, match=r"case id 'bcr-2019-228101' is also the id of .*228101\.htm") as raised:
        generate(corpus, ClicrBuilder())
    assert raised.value.path.endswith("bcr-2019-228101.html")


def test_fingerprint_hashes_files_under_linked_folders(tmp_path: Path) -> None:
    corpus = copied(tmp_path, "clicr")
    pages = corpus / "sample" / "bmj_html"
    (tmp_path / "more").mkdir()
    shutil.move(pages / "bcr-2019-228101.html", tmp_path / "more" / "bcr-2019-228101.html")
    os.symlink(tmp_path / "more", pages / "more", target_is_directory=True)
    manifest = load_manifest(corpus)
    inputs = fingerprint_inputs(manifest, resolve_sources(manifest, {}), set())
    assert "more/bcr-2019-228101.html" in {item["file"] for item in inputs if item["source"] == "bmj_html"}
    rows, _ = generate(corpus, ClicrBuilder())
    assert "bcr-2019-228101" in ids(rows, "clicr_documents")


def test_find_documents_refuses_a_file_for_a_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(SourceError, match="expected a folder of notes"):
        find_documents(tmp_path / "file", [".txt"], what="notes")


def test_clicr_concept_without_a_semantic_type_row_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CUI of MRCONSO with no MRSTY row used to vanish from the dictionary (and its queries) silently."""
    monkeypatch.setenv("CLINCORP_CACHE", str(tmp_path / "cache"))
    corpus = copied(tmp_path, "clicr")
    mrsty = corpus / "sample" / "umls" / "META" / "MRSTY.RRF"
    mrsty.write_text("".join(line for line in mrsty.read_text().splitlines(True) if not line.startswith("C9000002|")))
    mrconso = corpus / "sample" / "umls" / "META" / "MRCONSO.RRF"
    first = next(n for n, line in enumerate(mrconso.read_text().splitlines(), 1) if line.startswith("C9000002|"))
    with pytest.raises(SourceError, match="concept C9000002 has no row in MRSTY.RRF") as raised:
        generate(corpus, ClicrBuilder())
    assert (raised.value.path, raised.value.line) == (str(mrconso), first)
    rows, ctx = generate(corpus, ClicrBuilder(), "quarantine")
    assert rows and ctx.rejected("annotation") == 1 and "C9000002" in ctx.rejects[0].reason


# ---- bad bytes: every reader names the file (and line where it has lines), never a traceback ---------


@pytest.mark.parametrize(
    "relative",
    [
        "i2b2/docs/mayo_cc_01.txt",
        "i2b2/concepts/mayo_cc_01.txt.con",
        "i2b2/chains/mayo_cc_01.txt.chains",
        "text/mayo_cc_01.txt",
    ],
)
def test_odie_bytes_that_are_not_utf8_are_named(tmp_path: Path, relative: str) -> None:
    corpus = copied(tmp_path, "odie_anaphora")
    path = corpus / "sample" / relative
    path.write_bytes(path.read_bytes() + b"caf\xe9\n")
    overrides = {"i2b2": corpus / "sample" / "i2b2"} if relative.startswith("i2b2") else {}
    with pytest.raises(SourceError, match="expected UTF-8") as raised:
        generate(corpus, OdieAnaphoraBuilder(), overrides=overrides)
    assert raised.value.path == str(path)
