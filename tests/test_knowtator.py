"""Knowtator XML reader: the ODIE sample, the seed's figure 1 example, and bad input."""

from __future__ import annotations

import shutil
from copy import deepcopy
from pathlib import Path

import pytest
from lxml import etree

from clinical_corpora.builders.sources.knowtator.xml import iter_knowtator_dir, read_knowtator_file
from clinical_corpora.core.errors import SourceError

SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "odie_anaphora" / "sample"
DOC_IDS = ["mayo_cc_01", "mayo_p_01", "upmc_ds_01", "upmc_er_01", "upmc_rad_01", "upmc_sp_01"]


def read(folder: str, doc_id: str):
    return read_knowtator_file(SAMPLE / folder / f"{doc_id}.txt.knowtator.xml", SAMPLE / "text")


def by_text(document, text: str, occurrence: int = 0):
    return [m for m in document.markables if m.text == text][occurrence]


def test_every_folder_reads_all_six_notes() -> None:
    for folder in ("annotator_a", "annotator_b", "gold"):
        documents = list(iter_knowtator_dir(SAMPLE / folder, SAMPLE / "text"))
        assert [d.doc_id for d in documents] == DOC_IDS


def test_markable_spans_point_into_the_text() -> None:
    gold = read("gold", "mayo_cc_01")
    for markable in gold.markables:
        assert len(markable.fragments) == 1
        assert gold.text[markable.start : markable.end] == markable.text
    assert [m.start for m in gold.markables] == sorted(m.start for m in gold.markables)
    assert gold.annotators == ("adjudicator",)


def test_seed_figure_1_markables_and_pairs() -> None:
    """The seed's figure 1: bareNP/prepositional object, bareNP/surface subject,
    demonstrative NP/direct object; identity pairs by identical lexical head and demonstrative."""
    gold = read("gold", "mayo_cc_01")
    first = by_text(gold, "neck muscle weakness")
    second = by_text(gold, "Neck weakness")
    third = by_text(gold, "these neck difficulties")
    assert (first.grammatical_category, first.sentence_function, first.semantic_class) == (
        "bare_np",
        "prepositional_object",
        "sign_or_symptom",
    )
    assert (second.grammatical_category, second.sentence_function) == ("bare_np", "surface_subject")
    assert (third.grammatical_category, third.sentence_function, third.semantic_class) == (
        "demonstrative_np",
        "direct_object",
        "other",
    )
    links = {(p.anaphor_id, p.antecedent_id): (p.relation, p.bagga_class) for p in gold.pairs}
    assert links[second.id, first.id] == ("identity", "identical_lexical_head")
    assert links[third.id, second.id] == ("identity", "demonstrative")
    assert (first.id, second.id, third.id) in gold.identity_chains()


def test_identity_chains_start_with_the_grounding_instance_and_skip_other_relations() -> None:
    gold = read("gold", "mayo_cc_01")
    chains = [[gold.markable(i).text for i in chain] for chain in gold.identity_chains()]
    assert ["Mrs. Jane Doe", "She", "she", "She", "The patient", "Her", "her"] in chains
    assert ["dysphagia", "the swallowing difficulty"] in chains
    # "the left deltoid" is part of "her left arm": a part/whole pair makes no chain.
    assert all("the left deltoid" not in chain for chain in chains)
    assert len(chains) == 3


def test_set_subset_and_part_whole_pairs() -> None:
    pathology = read("gold", "mayo_p_01")
    relations = {
        (
            pathology.markable(p.anaphor_id).text,
            pathology.markable(p.antecedent_id).text,
        ): p.relation
        for p in pathology.pairs
    }
    assert relations["Two of the lymph nodes", "Twelve lymph nodes"] == "set/subset"
    assert relations["The colonic mucosa", "the sigmoid colon"] == "part/whole"


def test_discontinuous_markable() -> None:
    radiology = read("annotator_b", "upmc_rad_01")
    split = by_text(radiology, "CT ... pelvis")
    assert [radiology.text[s:e] for s, e in split.fragments] == ["CT", "pelvis"]
    assert split.semantic_class == "procedure"


def test_slots_left_empty_by_an_annotator_read_as_none() -> None:
    annotator_a = read("annotator_a", "mayo_cc_01")
    assert annotator_a.annotators == ("A1",)
    assert all(m.grammatical_category is None and m.sentence_function is None for m in annotator_a.markables)
    assert all(p.bagga_class is None for p in annotator_a.pairs)
    assert by_text(annotator_a, "Neck weakness").semantic_class == "sign_or_symptom"


def test_pair_keys_are_comparable_across_annotators() -> None:
    gold, annotator_b = read("gold", "upmc_ds_01"), read("annotator_b", "upmc_ds_01")
    assert {m.id for m in gold.markables}.isdisjoint(m.id for m in annotator_b.markables)
    extra = annotator_b.pair_keys() - gold.pair_keys()
    assert len(extra) == 1
    anaphor, antecedent, relation = next(iter(extra))
    assert [gold.text[s:e] for s, e in anaphor + antecedent] == [
        "The pneumonia",
        "a right lower lobe infiltrate",
    ]
    assert relation == "identity"
    assert gold.semantic_classes_by_key()[anaphor] == "disease_or_syndrome"


# --- bad input: a copy of a sample file with one thing broken --------------------------------


def broken_copy(tmp_path: Path, old: str, new: str, doc_id: str = "mayo_p_01") -> tuple[Path, int]:
    """Copy a gold file with ``old`` replaced once by ``new``; return it and the changed line."""
    source = (SAMPLE / "gold" / f"{doc_id}.txt.knowtator.xml").read_text(encoding="utf-8")
    assert source.count(old) >= 1
    broken = source.replace(old, new, 1)
    (tmp_path / "text").mkdir(exist_ok=True)
    shutil.copy(SAMPLE / "text" / f"{doc_id}.txt", tmp_path / "text")
    path = tmp_path / f"{doc_id}.txt.knowtator.xml"
    path.write_text(broken, encoding="utf-8")
    line = broken[: broken.index(new)].count("\n") + 1 if new else None
    return path, line


def expect_error(path: Path, line: int | None, *phrases: str) -> SourceError:
    """The error of a file that cannot be read, or else its first broken annotation (the rest is read)."""
    try:
        document = read_knowtator_file(path, path.parent / "text")
    except SourceError as raised:
        error = raised
    else:
        assert document.problems, "expected an error or a broken annotation"
        assert document.markables, "a broken annotation must not cost the note its other markables"
        error = document.problems[0]
    assert error.path == str(path)
    assert error.line == line
    for phrase in phrases:
        assert phrase in error.message
    return error


def test_not_well_formed_xml(tmp_path: Path) -> None:
    path, line = broken_copy(tmp_path, "</spannedText>", "</spanedText>")
    expect_error(path, line, "not well formed")


def test_doctype_declaring_entities_is_refused_and_nothing_is_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read me", encoding="utf-8")
    doctype = f'<!DOCTYPE annotations [<!ENTITY leak SYSTEM "{secret.as_uri()}">]>\n<annotations'
    path, _ = broken_copy(tmp_path, "<annotations", doctype)
    error = expect_error(path, 1, "XXE")
    assert "do not read me" not in str(error)


def test_external_dtd_is_refused(tmp_path: Path) -> None:
    path, _ = broken_copy(
        tmp_path,
        "<annotations",
        '<!DOCTYPE annotations SYSTEM "http://example.org/k.dtd">\n<annotations',
    )
    expect_error(path, 1, "external DTD")


def test_pair_naming_a_missing_markable(tmp_path: Path) -> None:
    gold = read("gold", "mayo_p_01")
    antecedent = gold.pairs[0].antecedent_id
    old = f'<complexSlotMentionValue value="{antecedent}"/>'
    path, line = broken_copy(tmp_path, old, '<complexSlotMentionValue value="ODIE_Instance_99999"/>')
    expect_error(path, line, "ODIE_Instance_99999", "not a Markable")


def test_span_beyond_the_text(tmp_path: Path) -> None:
    length = len((SAMPLE / "text" / "mayo_p_01.txt").read_text(encoding="utf-8"))
    last = read("gold", "mayo_p_01").markables[-1]
    old = f'<span start="{last.start}" end="{last.end}"/>'
    path, line = broken_copy(tmp_path, old, f'<span start="{last.start}" end="{length + 5}"/>')
    expect_error(path, line, "outside the text")


def test_spanned_text_that_does_not_match_the_text(tmp_path: Path) -> None:
    path, line = broken_copy(tmp_path, "<spannedText>The tumor</spannedText>", "<spannedText>The tumour</spannedText>")
    expect_error(path, line, "'The tumour'", "'The tumor'")


def test_value_outside_the_seed_value_set(tmp_path: Path) -> None:
    path, line = broken_copy(tmp_path, 'value="part/whole"', 'value="whole/part"')
    expect_error(path, line, "relation_type", "whole/part")


def test_unsupported_slot(tmp_path: Path) -> None:
    path, line = broken_copy(tmp_path, '<mentionSlot id="sentence_function"/>', '<mentionSlot id="negation"/>')
    expect_error(path, line - 1, "negation")


def test_missing_required_slot(tmp_path: Path) -> None:
    path, _ = broken_copy(tmp_path, "<annotations", "<annotations")
    root = etree.parse(str(path)).getroot()
    relation_slot = root.xpath('stringSlotMention[mentionSlot/@id="relation_type"]')[0]
    slot_id = relation_slot.get("id")
    owner = root.xpath(f'classMention[hasSlotMention/@id="{slot_id}"]')[0]
    owner.remove(owner.xpath(f'hasSlotMention[@id="{slot_id}"]')[0])
    root.remove(relation_slot)
    path.write_bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
    text = path.read_text(encoding="utf-8")
    line = text[: text.index(f'<classMention id="{owner.get("id")}">')].count("\n") + 1
    expect_error(path, line, "relation_type", "required")


def test_text_source_must_match_the_file_name(tmp_path: Path) -> None:
    path, line = broken_copy(tmp_path, 'textSource="mayo_p_01.txt"', 'textSource="mayo_p_02.txt"')
    expect_error(path, line, "mayo_p_02.txt.knowtator.xml")


def test_annotation_without_class_mention(tmp_path: Path) -> None:
    last = read("gold", "mayo_p_01").pairs[-1].id
    path, _ = broken_copy(tmp_path, f'<classMention id="{last}">', '<classMention id="ODIE_Instance_77777">')
    text = path.read_text(encoding="utf-8")
    line = text[: text.index(f'<mention id="{last}"/>')].count("\n")  # the <annotation> line
    expect_error(path, line, last, "no <classMention>")


@pytest.mark.parametrize("mention_class", ["Pair", "Markable"])
def test_two_annotations_on_one_span_are_both_read(tmp_path: Path, mention_class: str) -> None:
    """Knowtator allows two annotations on one span (CRAFT has 185): both are kept, under their own ids."""
    path, _ = broken_copy(tmp_path, "<annotations", "<annotations")
    root = etree.parse(str(path)).getroot()
    original = root.xpath(f'classMention[mentionClass/@id="{mention_class}"]')[0]
    annotation = root.xpath(f'annotation[mention/@id="{original.get("id")}"]')[0]
    for element in (annotation, original):
        copy = deepcopy(element)
        (copy.find("mention") if copy.tag == "annotation" else copy).set("id", "ODIE_Instance_copy")
        root.append(copy)
    path.write_bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
    document = read_knowtator_file(path, tmp_path / "text")
    gold = read("gold", "mayo_p_01")
    assert document.problems == ()
    things = document.markables if mention_class == "Markable" else document.pairs
    assert len(things) == len(gold.markables if mention_class == "Markable" else gold.pairs) + 1
    copy = next(thing for thing in things if thing.id == "ODIE_Instance_copy")
    twin = next(thing for thing in things if thing.id == original.get("id"))
    assert {**vars(copy), "id": None} == {**vars(twin), "id": None}
    # Agreement matches markables by span: the copy adds no key and no pair triple.
    assert document.semantic_classes_by_key() == gold.semantic_classes_by_key()
    assert document.pair_keys() == gold.pair_keys()
