"""Knowtator XML as real tools write it: eHOST's output, CRAFT's whitespace and repeated spans.

Every file here is invented, written in the layout eHOST (South et al. 2012) gives its
``saved/<doc>.txt.knowtator.xml``: four-space indent, ``EHOST_Instance_`` ids, ``<creationDate>``,
``hasSlotMention`` before ``mentionClass`` and a closing ``<eHOST_Adjudication_Status>``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clinical_corpora.builders.contract.base import BuildContext
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.inputs import resolve_sources
from clinical_corpora.builders.sources.knowtator.xml import read_knowtator_file
from clinical_corpora.core.errors import SourceError
from clinical_corpora.corpora.odie_anaphora.builder import OdieAnaphoraBuilder

DOC = "upmc_rad_09"
# Line 1 ends inside "CT abdomen and / pelvis"; every line ends in CR LF.
TEXT = "EXAM : CT abdomen and\r\npelvis .\r\nThe liver is normal .\r\nIt has no lesions .\r\n"
ADJUDICATION_STATUS = """\
    <eHOST_Adjudication_Status version="1.0">
        <Adjudication_Selected_Annotators version="1.0" />
        <Adjudication_Selected_Classes version="1.0" />
        <Adjudication_Others>
            <CHECK_OVERLAPPED_SPANS>false</CHECK_OVERLAPPED_SPANS>
            <CHECK_ATTRIBUTES>false</CHECK_ATTRIBUTES>
            <CHECK_RELATIONSHIP>false</CHECK_RELATIONSHIP>
            <CHECK_CLASS>false</CHECK_CLASS>
            <CHECK_COMMENT>false</CHECK_COMMENT>
        </Adjudication_Others>
    </eHOST_Adjudication_Status>
"""


def annotation(mention: int, spans: list[tuple[int, int]], spanned_text: str, extra: str = "") -> str:
    span_lines = "".join(f'        <span start="{s}" end="{e}" />\n' for s, e in spans)
    return (
        "    <annotation>\n"
        f'        <mention id="EHOST_Instance_{mention}" />\n'
        '        <annotator id="eHOST_2010">RAD_A</annotator>\n'
        f"{span_lines}"
        f"        <spannedText>{spanned_text}</spannedText>\n"
        f"{extra}"
        "        <creationDate>Mon Mar 14 10:12:44 MDT 2011</creationDate>\n"
        "    </annotation>\n"
    )


def markable(mention: int, slot: int, semantic_class: str, text: str) -> str:
    return (
        f'    <classMention id="EHOST_Instance_{mention}">\n'
        f'        <hasSlotMention id="EHOST_Instance_{slot}" />\n'
        f'        <mentionClass id="Markable">{text}</mentionClass>\n'
        "    </classMention>\n"
        f'    <stringSlotMention id="EHOST_Instance_{slot}">\n'
        '        <mentionSlot id="semantic_class" />\n'
        f'        <stringSlotMentionValue value="{semantic_class}" />\n'
        "    </stringSlotMention>\n"
    )


def pair(mention: int, first_slot: int, anaphor: int, antecedent: int, text: str) -> str:
    slots = {"relation_type": first_slot, "anaphor": first_slot + 1, "antecedent": first_slot + 2}
    has_slots = "".join(f'        <hasSlotMention id="EHOST_Instance_{i}" />\n' for i in slots.values())
    return (
        f'    <classMention id="EHOST_Instance_{mention}">\n'
        f"{has_slots}"
        f'        <mentionClass id="Pair">{text}</mentionClass>\n'
        "    </classMention>\n"
        f'    <stringSlotMention id="EHOST_Instance_{first_slot}">\n'
        '        <mentionSlot id="relation_type" />\n'
        '        <stringSlotMentionValue value="identity" />\n'
        "    </stringSlotMention>\n"
        + "".join(
            f'    <complexSlotMention id="EHOST_Instance_{slots[role]}">\n'
            f'        <mentionSlot id="{role}" />\n'
            f'        <complexSlotMentionValue value="EHOST_Instance_{target}" />\n'
            "    </complexSlotMention>\n"
            for role, target in (("anaphor", anaphor), ("antecedent", antecedent))
        )
    )


def ehost_file(crlf_as_one: bool = True) -> str:
    """The eHOST output for TEXT; offsets count CR LF as one character unless told otherwise."""
    shift = 0 if crlf_as_one else 1  # one more character per line break before the span

    def at(start: int, end: int, breaks: int) -> tuple[int, int]:
        return start + shift * breaks, end + shift * breaks

    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<annotations textSource="{DOC}.txt">\n'
        # drawn "pelvis" first, then "CT": eHOST keeps that order, spannedText included
        + annotation(50001, [at(22, 28, 1), at(7, 9, 0)], "pelvis ... CT")
        # across the line break: eHOST writes the break as a space
        + annotation(50002, [(7, at(28, 29, 1)[0])], "CT abdomen and pelvis")
        + annotation(50003, [at(31, 40, 2)], "The liver", "        <annotationComment>checked</annotationComment>\n")
        + annotation(50004, [at(53, 55, 3)], "It")
        + annotation(50005, [at(53, 55, 3)], "It")
        + markable(50001, 50101, "procedure", "pelvis ... CT")
        + markable(50002, 50102, "procedure", "CT abdomen and pelvis")
        + markable(50003, 50103, "anatomical_site", "The liver")
        + markable(50004, 50104, "anatomical_site", "It")
        + pair(50005, 50105, 50004, 50003, "It")
        + ADJUDICATION_STATUS
        + "</annotations>\n"
    )


def write(tmp_path: Path, xml: str, text: str = TEXT) -> Path:
    (tmp_path / "text").mkdir(exist_ok=True)
    (tmp_path / "gold").mkdir(exist_ok=True)
    (tmp_path / "text" / f"{DOC}.txt").write_bytes(text.encode("utf-8"))
    path = tmp_path / "gold" / f"{DOC}.txt.knowtator.xml"
    path.write_text(xml, encoding="utf-8")
    return path


def spans(document) -> dict[str, list[str]]:
    return {
        m.id.removeprefix("EHOST_Instance_"): [document.text[s:e] for s, e in m.fragments] for m in document.markables
    }


def test_ehost_file_with_crlf_text_loads_into_odie_anaphora(tmp_path: Path) -> None:
    """Adjudication status skipped, fragments put in text order, spannedText's space for a line
    break accepted, offsets counting CR LF as one mapped back into the text as read."""
    path = write(tmp_path, ehost_file())
    manifest = find_corpus("odie_anaphora")
    sources = resolve_sources(manifest, {"text": tmp_path / "text", "knowtator": tmp_path / "gold"})
    ctx = BuildContext(manifest, sources)  # the default: any broken annotation would fail
    [row] = [row for row in OdieAnaphoraBuilder().generate(ctx) if row.config == "odie_anaphora"]
    note = row.record
    assert note.text == TEXT  # released byte for byte, CR LF kept
    by_id = {m.id: m for m in note.markables}
    ct = by_id["EHOST_Instance_50001"]
    assert [(f.start, f.end, f.text) for f in ct.fragments] == [(7, 9, "CT"), (23, 29, "pelvis")]
    assert (ct.start, ct.end) == (7, 29)
    assert by_id["EHOST_Instance_50002"].text == "CT abdomen and\r\npelvis"
    assert (by_id["EHOST_Instance_50003"].start, by_id["EHOST_Instance_50003"].text) == (33, "The liver")
    assert (by_id["EHOST_Instance_50004"].start, by_id["EHOST_Instance_50004"].text) == (56, "It")
    assert [(p.anaphor_id, p.antecedent_id) for p in note.pairs] == [("EHOST_Instance_50004", "EHOST_Instance_50003")]
    assert [c.markable_ids for c in note.chains] == [["EHOST_Instance_50003", "EHOST_Instance_50004"]]
    assert ctx.rejects == []
    assert read_knowtator_file(path, tmp_path / "text").crlf_as_one


def test_offsets_into_crlf_text_that_count_every_character_are_read_as_they_are(tmp_path: Path) -> None:
    """Knowtator itself counts CR as a character: the same note with such offsets reads the same."""
    crlf_counted = read_knowtator_file(write(tmp_path, ehost_file(crlf_as_one=False)), tmp_path / "text")
    assert not crlf_counted.crlf_as_one
    assert crlf_counted.problems == ()
    lf_counted = read_knowtator_file(write(tmp_path, ehost_file()), tmp_path / "text")
    assert spans(crlf_counted) == spans(lf_counted)
    assert [m.fragments for m in crlf_counted.markables] == [m.fragments for m in lf_counted.markables]


def test_lf_text_is_never_shifted(tmp_path: Path) -> None:
    lf_text = TEXT.replace("\r\n", "\n")
    document = read_knowtator_file(write(tmp_path, ehost_file(), lf_text), tmp_path / "text")
    assert not document.crlf_as_one and document.problems == ()
    assert spans(document)["50003"] == ["The liver"]


def test_crlf_offsets_that_fit_neither_way_are_quarantined_alone(tmp_path: Path) -> None:
    """One annotation off by a character under both readings: it alone is a problem, naming its line."""
    xml = ehost_file().replace('<span start="53" end="55" />', '<span start="54" end="56" />', 1)
    document = read_knowtator_file(write(tmp_path, xml), tmp_path / "text")
    assert document.crlf_as_one
    problem_lines = [(p.line, p.message.split(" does not")[0]) for p in document.problems]
    line = xml[: xml.index("<spannedText>It</spannedText>")].count("\n") + 1
    assert problem_lines[0] == (line, "spannedText 'It'")
    assert "EHOST_Instance_50004" not in spans(document)
    assert document.pairs == ()  # the pair needs "It": it is left out too, naming why
    assert "which is left out" in document.problems[1].message


def test_whitespace_only_differences_in_spanned_text_are_accepted(tmp_path: Path) -> None:
    """CRAFT's 177 spannedTexts equal to the text after whitespace normalisation."""
    xml = ehost_file().replace("<spannedText>The liver</spannedText>", "<spannedText> The\n\tliver  </spannedText>")
    document = read_knowtator_file(write(tmp_path, xml), tmp_path / "text")
    assert document.problems == ()
    assert spans(document)["50003"] == ["The liver"]


def test_a_spanned_text_that_differs_in_more_than_whitespace_is_a_problem(tmp_path: Path) -> None:
    xml = ehost_file().replace("<spannedText>The liver</spannedText>", "<spannedText>The livers</spannedText>")
    document = read_knowtator_file(write(tmp_path, xml), tmp_path / "text")
    assert ["'The livers'" in p.message and "'The liver'" in p.message for p in document.problems][:1] == [True]


def test_repeated_fragment_and_suggestion_slot_read_as_ehost_reads_them(tmp_path: Path) -> None:
    """eHOST keeps a repeated <span> once and skips its own ``suggestion`` slots."""
    xml = ehost_file().replace(
        '        <span start="31" end="40" />\n',
        '        <span start="31" end="40" />\n        <span start="31" end="40" />\n',
    )
    xml = xml.replace("<spannedText>The liver</spannedText>", "<spannedText>The liver ... The liver</spannedText>")
    xml = xml.replace(
        '        <hasSlotMention id="EHOST_Instance_50103" />\n',
        '        <hasSlotMention id="EHOST_Instance_50103" />\n        <hasSlotMention id="EHOST_Instance_50199" />\n',
    )
    xml = xml.replace(
        "    <eHOST_Adjudication_Status",
        '    <stringSlotMention id="EHOST_Instance_50199">\n        <mentionSlot id="suggestion" />\n'
        '        <stringSlotMentionValue value="0" />\n    </stringSlotMention>\n    <eHOST_Adjudication_Status',
    )
    document = read_knowtator_file(write(tmp_path, xml), tmp_path / "text")
    assert document.problems == ()
    assert spans(document)["50003"] == ["The liver"]


def test_two_markables_on_one_span_in_two_chains(tmp_path: Path) -> None:
    """Legal in Knowtator: both are released; agreement sees one mention, so their chains join."""
    xml = ehost_file()
    extra = annotation(50006, [(53, 55)], "It") + annotation(50007, [(7, 28)], "CT abdomen and pelvis")
    extra += markable(50006, 50206, "anatomical_site", "It") + pair(50007, 50207, 50006, 50002, "It")
    xml = xml.replace("    <eHOST_Adjudication_Status", extra + "    <eHOST_Adjudication_Status")
    path = write(tmp_path, xml)
    manifest = find_corpus("odie_anaphora")
    ctx = BuildContext(
        manifest, resolve_sources(manifest, {"text": path.parent.parent / "text", "knowtator": path.parent})
    )
    [row] = [row for row in OdieAnaphoraBuilder().generate(ctx) if row.config == "odie_anaphora"]
    chains = [c.markable_ids for c in row.record.chains]
    assert chains == [
        ["EHOST_Instance_50002", "EHOST_Instance_50006"],
        ["EHOST_Instance_50003", "EHOST_Instance_50004"],
    ]
    document = read_knowtator_file(path, tmp_path / "text")
    assert [sorted(chain) for chain in document.identity_chain_keys()] == [[((7, 29),), ((33, 42),), ((56, 58),)]]


def test_adjudicating_working_copy_is_refused_with_what_to_give_instead(tmp_path: Path) -> None:
    xml = ehost_file().replace("<annotation>", "<adjudicating>", 1).replace("</annotation>", "</adjudicating>", 1)
    path = write(tmp_path, xml)
    with pytest.raises(SourceError, match="adjudication/ folder") as caught:
        read_knowtator_file(path, tmp_path / "text")
    assert (caught.value.path, caught.value.line) == (str(path), 3)
