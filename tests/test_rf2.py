"""RF2 Snapshot reader on the embedded mini snapshot and on hand-written broken snapshots."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clinical_corpora.builders.sources.rf2 import (
    CONCEPT_COLUMNS,
    DESCRIPTION_COLUMNS,
    RELATIONSHIP_COLUMNS,
    Terminology,
    load_snapshot,
    locate_snapshot_files,
    semantic_tag_of,
)
from clinical_corpora.core.errors import SourceError

SAMPLE_RF2 = Path(__file__).resolve().parents[1] / "corpora" / "snomed_el" / "sample" / "rf2"
FSN, SYNONYM = "900000000000003001", "900000000000013009"
MODULE = "900000000000207008"


@pytest.fixture(scope="module")
def sample() -> Terminology:
    return load_snapshot(SAMPLE_RF2)


def _by_fsn(terminology: Terminology, fsn: str) -> int:
    (concept_id,) = [concept_id for concept_id, term in terminology.fsn.items() if term == fsn]
    return concept_id


@pytest.mark.parametrize(
    ("fsn", "hierarchy", "depth"),
    [
        ("Clinical finding (finding)", "finding", 1),
        ("Sepsis (disorder)", "finding", 3),  # also under Infectious disease (depth 4): shortest chain wins
        ("Congestive heart failure (disorder)", "finding", 5),
        ("Community acquired pneumonia (disorder)", "finding", 5),
        ("Computed tomography of head (procedure)", "procedure", 4),
        ("Physical therapy (regime/therapy)", "procedure", 2),
        (
            "Structure of left anterior descending branch of left coronary artery (body structure)",
            "body_structure",
            4,
        ),
        ("Aspirin (substance)", None, 2),
        ("Is a (attribute)", None, 2),
    ],
)
def test_hierarchy_and_depth_follow_active_is_a_chains(
    sample: Terminology, fsn: str, hierarchy: str | None, depth: int
) -> None:
    concept = sample.concept(_by_fsn(sample, fsn))

    assert (concept.hierarchy, concept.depth) == (hierarchy, depth)


def test_sample_counts_and_inactive_concept(sample: Terminology) -> None:
    assert len(sample.active) == 85
    assert sample.inactive == {99900078004}
    assert 99900078004 not in sample.fsn and 99900078004 not in sample.depth
    assert sum(1 for name in sample.hierarchy.values() if name == "finding") == 42
    with pytest.raises(KeyError):
        sample.concept(99900078004)


def test_fsn_semantic_tag_and_synonyms_without_quote_processing(sample: Terminology) -> None:
    stable = sample.concept(_by_fsn(sample, "Patient's condition stable (finding)"))
    infarction = sample.concept(_by_fsn(sample, "Myocardial infarction (disorder)"))

    assert stable.semantic_tag == "finding"
    assert stable.synonyms == ("Patient's condition stable", 'Condition "stable"')
    assert infarction.synonyms == (
        "Myocardial infarction",
        "MI",
        "Heart attack",
    )  # the retired synonym is left out


def test_only_is_a_relationships_make_the_graph(sample: Terminology) -> None:
    heart_failure = _by_fsn(sample, "Congestive heart failure (disorder)")
    pneumonia = _by_fsn(sample, "Pneumonia (disorder)")

    assert sample.parents[heart_failure] == (_by_fsn(sample, "Heart failure (disorder)"),)
    assert set(sample.parents[pneumonia]) == {
        _by_fsn(sample, "Disorder of respiratory system (disorder)"),
        _by_fsn(sample, "Infectious disease (disorder)"),
    }


@pytest.mark.parametrize(
    ("fsn", "tag"),
    [
        ("Asthma (disorder)", "disorder"),
        ("Structure of heart (body structure)", "body structure"),
        ("Finding of pH (acidity) (finding)", "finding"),
        ("No tag here", None),
    ],
)
def test_semantic_tag_is_the_trailing_parenthesis(fsn: str, tag: str | None) -> None:
    assert semantic_tag_of(fsn) == tag


def test_snapshot_files_are_found_from_the_release_root(sample: Terminology) -> None:
    files = locate_snapshot_files(SAMPLE_RF2)

    assert files.concept.name == "sct2_Concept_Snapshot_INT_20230531.txt"
    assert files.description.name == "sct2_Description_Snapshot-en_INT_20230531.txt"
    assert files.relationship.parent.name == "Terminology"


# --- broken snapshots -------------------------------------------------------------------------

ROOT, FINDING, PROCEDURE, BODY, DISEASE = "138875005", "404684003", "71388002", "123037004", "99900007004"


def _write_snapshot(
    folder: Path, concepts: list[list[str]], descriptions: list[list[str]], relationships: list[list[str]]
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, header, rows in (
        ("sct2_Concept_Snapshot_INT_20230531.txt", CONCEPT_COLUMNS, concepts),
        ("sct2_Description_Snapshot-en_INT_20230531.txt", DESCRIPTION_COLUMNS, descriptions),
        ("sct2_Relationship_Snapshot_INT_20230531.txt", RELATIONSHIP_COLUMNS, relationships),
    ):
        lines = ["\t".join(header), *("\t".join(row) for row in rows)]
        (folder / name).write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-8"))
    return folder


def _concept(concept_id: str, active: str = "1") -> list[str]:
    return [concept_id, "20230531", active, MODULE, "900000000000074008"]


def _description(description_id: str, concept_id: str, type_id: str, term: str, active: str = "1") -> list[str]:
    return [description_id, "20230531", active, MODULE, concept_id, "en", type_id, term, "900000000000448009"]


def _is_a(relationship_id: str, child: str, parent: str, active: str = "1") -> list[str]:
    return [
        relationship_id,
        "20230531",
        active,
        MODULE,
        child,
        parent,
        "0",
        "116680003",
        "900000000000011006",
        "900000000000451002",
    ]


def _valid_parts() -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
    """Lines 2.. of each file: concepts root, finding, procedure, body, disease; descriptions: their
    FSNs in that order, then a synonym of disease; relationships: the three tops under the root, then
    disease under finding."""
    concepts = [_concept(ROOT), _concept(FINDING), _concept(PROCEDURE), _concept(BODY), _concept(DISEASE)]
    descriptions = [
        _description("99950001101", ROOT, FSN, "SNOMED CT Concept (SNOMED RT+CTV3)"),
        _description("99950002109", FINDING, FSN, "Clinical finding (finding)"),
        _description("99950007105", PROCEDURE, FSN, "Procedure (procedure)"),
        _description("99950008102", BODY, FSN, "Body structure (body structure)"),
        _description("99950003106", DISEASE, FSN, 'Disease "proper" (disorder)'),
        _description("99950004103", DISEASE, SYNONYM, '"Disease'),
    ]
    relationships = [
        _is_a("99970001026", FINDING, ROOT),
        _is_a("99970005029", PROCEDURE, ROOT),
        _is_a("99970006027", BODY, ROOT),
        _is_a("99970002021", DISEASE, FINDING),
    ]
    return concepts, descriptions, relationships


def test_minimal_snapshot_loads(tmp_path: Path) -> None:
    terminology = load_snapshot(_write_snapshot(tmp_path / "rf2", *_valid_parts()))

    disease = terminology.concept(int(DISEASE))
    assert (disease.fsn, disease.synonyms, disease.depth, disease.hierarchy) == (
        'Disease "proper" (disorder)',
        ('"Disease',),
        2,
        "finding",
    )


@pytest.mark.parametrize(
    ("breakage", "file_prefix", "line", "message"),
    [
        (
            "short_header",
            "sct2_Concept",
            1,
            "expected the RF2 header id effectiveTime active moduleId definitionStatusId",
        ),
        ("missing_column", "sct2_Description", 3, "expected 9 tab-separated fields, found 8"),
        ("bad_active", "sct2_Concept", 3, "column active: expected 0 or 1, found 'yes'"),
        ("bad_id", "sct2_Relationship", 2, "column sourceId: expected an SCTID"),
        (
            "second_fsn",
            "sct2_Description",
            8,
            "a second active FSN for concept 99900007004 \\(first at line 6\\)",
        ),
        ("untagged_fsn", "sct2_Description", 6, "has no semantic tag"),
        ("unknown_concept", "sct2_Description", 8, "conceptId 99900099000 is not in the concept file"),
        ("is_a_to_inactive", "sct2_Relationship", 6, "destinationId 99900008000, not an active concept"),
    ],
)
def test_broken_snapshot_errors_name_file_and_line(
    tmp_path: Path, breakage: str, file_prefix: str, line: int, message: str
) -> None:
    concepts, descriptions, relationships = _valid_parts()
    if breakage == "short_header":
        folder = _write_snapshot(tmp_path / "rf2", concepts, descriptions, relationships)
        concept_file = next(folder.glob("sct2_Concept*"))
        concept_file.write_text(concept_file.read_text().replace("\tdefinitionStatusId", "", 1))
    else:
        if breakage == "missing_column":
            descriptions[1] = descriptions[1][:-1]
        elif breakage == "bad_active":
            concepts[1][2] = "yes"
        elif breakage == "bad_id":
            relationships[0][4] = "4046x4003"
        elif breakage == "second_fsn":
            descriptions.append(_description("99950005100", DISEASE, FSN, "Disease (disorder)"))
        elif breakage == "untagged_fsn":
            descriptions[4][7] = "Disease"
        elif breakage == "unknown_concept":
            descriptions.append(_description("99950005100", "99900099000", SYNONYM, "Ghost"))
        elif breakage == "is_a_to_inactive":
            concepts.append(_concept("99900008000", active="0"))
            relationships.append(_is_a("99970003029", DISEASE, "99900008000"))
        folder = _write_snapshot(tmp_path / "rf2", concepts, descriptions, relationships)

    with pytest.raises(SourceError, match=message) as error:
        load_snapshot(folder)
    assert Path(error.value.path).name.startswith(file_prefix)
    assert error.value.line == line


def test_inactive_rows_are_ignored(tmp_path: Path) -> None:
    concepts, descriptions, relationships = _valid_parts()
    concepts.append(_concept("99900008000", active="0"))
    descriptions.append(_description("99950005100", "99900008000", FSN, "Retired (disorder)"))
    descriptions.append(_description("99950006108", DISEASE, FSN, "Old name (disorder)", active="0"))
    relationships.append(_is_a("99970003029", DISEASE, "99900008000", active="0"))

    terminology = load_snapshot(_write_snapshot(tmp_path / "rf2", concepts, descriptions, relationships))

    assert terminology.fsn[int(DISEASE)] == 'Disease "proper" (disorder)'
    assert terminology.parents[int(DISEASE)] == (int(FINDING),)
    assert terminology.inactive == {99900008000}


def test_missing_or_duplicated_files_are_reported(tmp_path: Path) -> None:
    folder = _write_snapshot(tmp_path / "a" / "Snapshot" / "Terminology", *_valid_parts())
    shutil.copytree(folder, tmp_path / "a" / "Copy")
    next(folder.glob("sct2_Relationship*")).unlink()

    with pytest.raises(SourceError, match=r"expected exactly one sct2_Relationship_Snapshot\*\.txt, found \[\]"):
        locate_snapshot_files(folder)
    with pytest.raises(SourceError, match=r"expected exactly one sct2_Concept_Snapshot\*\.txt"):
        locate_snapshot_files(tmp_path / "a")


def test_overlapping_hierarchies_are_reported_by_concept(tmp_path: Path) -> None:
    concepts, descriptions, relationships = _valid_parts()
    relationships.append(_is_a("99970004024", DISEASE, PROCEDURE))

    with pytest.raises(SourceError, match="under both finding and procedure") as error:
        load_snapshot(_write_snapshot(tmp_path / "rf2", concepts, descriptions, relationships))
    assert error.value.record == DISEASE


def test_missing_hierarchy_top_is_reported(tmp_path: Path) -> None:
    concepts, descriptions, relationships = _valid_parts()
    concepts[3][2] = "0"  # Body structure retired

    with pytest.raises(SourceError, match="expected an active concept") as error:
        load_snapshot(_write_snapshot(tmp_path / "rf2", concepts, descriptions, relationships))
    assert error.value.record == BODY


def test_concept_without_fsn_is_reported_by_id(tmp_path: Path) -> None:
    concepts, descriptions, relationships = _valid_parts()
    concepts.append(_concept("99900008000"))

    with pytest.raises(SourceError, match="active concept without an active FSN") as error:
        load_snapshot(_write_snapshot(tmp_path / "rf2", concepts, descriptions, relationships))
    assert error.value.record == "99900008000"


def test_terminology_folder_directly_under_the_root_loads_the_same(tmp_path: Path, sample: Terminology) -> None:
    """A real International Edition subset whose ``Terminology/`` sits directly under the root (no
    ``Snapshot/`` level), beside a ``Refset/`` folder: found and loaded as the full layout is."""
    release = next(SAMPLE_RF2.iterdir())
    root = tmp_path / "SnomedCT_InternationalRF2_PRODUCTION_20230531T120000Z"
    shutil.copytree(release / "Snapshot" / "Terminology", root / "Terminology")
    (root / "Refset" / "Language").mkdir(parents=True)
    (root / "Refset" / "Language" / "der2_cRefset_LanguageSnapshot-en_INT_20230531.txt").write_text(
        "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\tacceptabilityId\n", encoding="utf-8"
    )
    files = locate_snapshot_files(root)
    assert files.concept.parent == root / "Terminology"
    loaded = load_snapshot(root)
    assert (loaded.active, loaded.fsn, loaded.parents, loaded.hierarchy, loaded.depth) == (
        sample.active,
        sample.fsn,
        sample.parents,
        sample.hierarchy,
        sample.depth,
    )
    assert len(loaded.active) > 0
