"""n2c2 2022 SDOH scorer: every criterion, greedy order, repeated roles, folder pairing, CSV.

Expected counts are worked out by hand in the comments next to each case, following the
official scorer's rules (seed 003 and Lybarger's ``brat_scoring``), never taken from the code.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from clinical_corpora.builders.sources.brat.annotations import BratDocument, Event, TextBound
from clinical_corpora.builders.sources.brat.standoff import iter_brat_folder, parse_brat
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.corpora.sdoh.scoring import events_from_brat, score_folders, score_folders_to_csv
from clinical_corpora.validation.metrics.sdoh import (
    CSV_COLUMNS,
    EventSpan,
    ScoreRow,
    SdohEvent,
    _english_tokenizer,
    _tokens,
    detailed_csv_path,
    score_collections,
    write_scores_csv,
)

SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "sdoh" / "sample"
DOUBLE_A = SAMPLE / "shac_double" / "annotator_a"
DOUBLE_B = SAMPLE / "shac_double" / "annotator_b"


def table(rows: list[ScoreRow]) -> dict[tuple[str, str, str], tuple[int, int, int]]:
    """(event, argument, subtype) -> (NT, NP, TP) of the rows after OVERALL."""
    overall(rows)
    return {(r.event, r.argument, r.subtype): (r.nt, r.np, r.tp) for r in rows[1:]}


def overall(rows: list[ScoreRow]) -> tuple[int, int, int]:
    assert (rows[0].event, rows[0].argument, rows[0].subtype) == ("OVERALL",) * 3
    return rows[0].nt, rows[0].np, rows[0].tp


def write_doc(root: Path, doc_id: str, text: str, ann: str) -> None:
    path = root / doc_id
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_name(path.name + ".txt").write_text(text, encoding="utf-8")
    path.with_name(path.name + ".ann").write_text(ann, encoding="utf-8")


def span(type_: str, start: int, end: int, subtype: str | None = None, text: str = "") -> EventSpan:
    return EventSpan(type_, start, end, text or "x" * (end - start), subtype)


def event(trigger: EventSpan, *arguments: EventSpan) -> SdohEvent:
    return SdohEvent(trigger, tuple(arguments))


# --- the seed's Figure 2 on the embedded double-annotated note -------------------------
# Gold (annotator A) 0701: Drug "IVDU" {StatusTime "Hx" past, History}, Drug "cocaine"[55,62]
# {StatusTime "use"[63,66] current, Type "cocaine"}, Tobacco "Smokes" {StatusTime current, Amount}.
# B differs only in Event 2: trigger "cocaine use"[55,66], StatusTime "Recent"[48,54] current.
# NT = NP = 9 (3 triggers + 6 arguments).


@pytest.mark.parametrize(
    "criteria, expected_tp, cocaine_rows_tp",
    [
        # overlap: [55,62] and [55,66] share characters; label ignores the StatusTime spans.
        ({}, 9, (2, 1, 1)),
        # exact trigger: Event 2 is not aligned, so its trigger, StatusTime and Type are lost.
        ({"score_trig": "exact"}, 6, (1, 0, 0)),
        # min_dist: centre sums IVDU 48, cocaine 117 vs IVDU 48, cocaine use 121 -> same pairs.
        ({"score_trig": "min_dist"}, 9, (2, 1, 1)),
        # exact / overlap StatusTime: "use" [63,66] vs "Recent" [48,54]: not equal, no overlap.
        ({"score_labeled": "exact"}, 8, (2, 0, 1)),
        ({"score_labeled": "overlap"}, 8, (2, 0, 1)),
    ],
)
def test_figure_2_example_under_each_criterion(
    criteria: dict[str, str], expected_tp: int, cocaine_rows_tp: tuple[int, int, int]
) -> None:
    gold = {"0701": events_from_brat(_sample_doc(DOUBLE_A, "mimic/0701"), "a")}
    pred = {"0701": events_from_brat(_sample_doc(DOUBLE_B, "mimic/0701"), "b")}
    rows = score_collections(gold, pred, **criteria)
    assert overall(rows) == (9, 9, expected_tp)
    counts = table(rows)
    trigger_tp, current_tp, type_tp = cocaine_rows_tp
    assert counts[("Drug", "Trigger", "N/A")] == (2, 2, trigger_tp)
    assert counts[("Drug", "StatusTime", "current")] == (1, 1, current_tp)
    assert counts[("Drug", "Type", "N/A")] == (1, 1, type_tp)
    assert counts[("Drug", "StatusTime", "past")] == (1, 1, 1)
    assert counts[("Tobacco", "Amount", "N/A")] == (1, 1, 1)


def _sample_doc(root: Path, doc_id: str) -> BratDocument:
    return next(doc for found, _, doc in iter_brat_folder(root) if found == doc_id)


def test_double_annotated_sample_agreement_by_hand() -> None:
    # 0701: NT 9, NP 9, TP 9 (above).
    # 0702: A has LivingStatus 3 + Employment 3 (Type "mechanic") + Tobacco 3 + Alcohol 4 = 13;
    #   B has 3 + 2 (no Type) + 3 + 5 (Amount "3-4" and Type "beers") = 13.
    #   TP: LivingStatus 3, Employment 2, Tobacco 2 (History "10 yrs ago" vs "quit 10 yrs ago"
    #   not exact), Alcohol 3 (Amount "3-4 beers" vs "3-4" not exact) = 10.
    # 0801: A has Employment 2 + LivingStatus 3 + Tobacco 2 + Alcohol 2 + Drug 2 = 11;
    #   B has Employment 2 (on_disability) + 3 + 2 + Drug 2 ("drug" only) = 9.
    #   TP: Employment trigger 1 (subtypes differ), LivingStatus 3, Tobacco 2, Drug 2
    #   ("drug use" overlaps "drug") = 8.
    rows = score_folders(DOUBLE_A, DOUBLE_B)
    assert overall(rows) == (33, 31, 27)
    assert rows[0].f1 == pytest.approx(2 * 27 / (33 + 31))
    counts = table(rows)
    assert counts[("Employment", "StatusEmploy", "unemployed")] == (1, 0, 0)
    assert counts[("Employment", "StatusEmploy", "on_disability")] == (0, 1, 0)
    assert counts[("Employment", "StatusEmploy", "retired")] == (1, 1, 1)
    assert counts[("Alcohol", "Trigger", "N/A")] == (2, 1, 1)
    assert counts[("Alcohol", "Type", "N/A")] == (0, 1, 0)
    assert counts[("Tobacco", "History", "N/A")] == (1, 1, 0)
    assert [tuple(r.csv_fields()[:3]) for r in rows[1:]] == sorted(counts)


# --- trigger alignment -----------------------------------------------------------------


def test_overlap_alignment_is_greedy_in_gold_then_prediction_order() -> None:
    gold = [event(span("Drug", 0, 10)), event(span("Drug", 5, 8))]
    # G0 takes the first overlapping prediction [6,7]; G1 [5,8] cannot take [0,3]: TP 1 of 2.
    pred = [event(span("Drug", 6, 7)), event(span("Drug", 0, 3))]
    assert overall(score_collections({"d": gold}, {"d": pred})) == (2, 2, 1)
    # Reversed prediction order: G0 takes [0,3], G1 takes [6,7]: TP 2.
    assert overall(score_collections({"d": gold}, {"d": pred[::-1]})) == (2, 2, 2)


def test_min_dist_aligns_nearest_centres_first_without_a_cap() -> None:
    gold = [event(span("Drug", 0, 10)), event(span("Drug", 5, 8))]
    pred = [event(span("Drug", 6, 7)), event(span("Drug", 0, 3))]
    # Twice the centre distances: G1-P0 |13-13| = 0 first, then G0-P0 taken, G0-P1 |10-3| = 7.
    assert overall(score_collections({"d": gold}, {"d": pred}, "min_dist")) == (2, 2, 2)
    far = {"d": [event(span("Alcohol", 500, 505))]}
    near = {"d": [event(span("Alcohol", 0, 5))]}
    assert overall(score_collections(near, far, "min_dist")) == (1, 1, 1)
    assert overall(score_collections(near, far, "overlap")) == (1, 1, 0)


def test_min_dist_ties_go_to_the_earlier_prediction() -> None:
    gold = [event(span("Drug", 10, 12), span("StatusTime", 0, 2, "current"))]
    # Both predictions are 2 characters from the gold centre; P0 wins the tie, its StatusTime is
    # "past", so the argument does not match although P1 would have matched it.
    pred = [
        event(span("Drug", 8, 10), span("StatusTime", 0, 2, "past")),
        event(span("Drug", 12, 14), span("StatusTime", 0, 2, "current")),
    ]
    counts = table(score_collections({"d": gold}, {"d": pred}, "min_dist"))
    assert counts[("Drug", "Trigger", "N/A")] == (1, 2, 1)
    assert counts[("Drug", "StatusTime", "current")] == (1, 1, 0)


def test_triggers_align_only_within_the_same_event_type() -> None:
    gold = {"d": [event(span("Alcohol", 0, 5))]}
    pred = {"d": [event(span("Drug", 0, 5))]}
    for criterion in ("exact", "overlap", "min_dist"):
        counts = table(score_collections(gold, pred, criterion))
        assert counts == {
            ("Alcohol", "Trigger", "N/A"): (1, 0, 0),
            ("Drug", "Trigger", "N/A"): (0, 1, 0),
        }


# --- arguments -------------------------------------------------------------------------


def test_arguments_count_only_inside_aligned_events() -> None:
    gold = {"d": [event(span("Drug", 0, 7), span("Type", 0, 7))]}
    pred = {"d": [event(span("Drug", 20, 25), span("Type", 0, 7))]}
    # Same Type span, but the triggers do not overlap: nothing matches.
    assert overall(score_collections(gold, pred)) == (2, 2, 0)


@pytest.mark.parametrize(
    "pred_span, label_tp, exact_tp, overlap_tp",
    [((0, 5), 1, 1, 1), ((3, 9), 1, 0, 1), ((30, 35), 1, 0, 0)],
)
def test_span_with_value_criteria(pred_span: tuple[int, int], label_tp: int, exact_tp: int, overlap_tp: int) -> None:
    gold = {"d": [event(span("Tobacco", 40, 46), span("StatusTime", 0, 5, "current"))]}
    pred = {"d": [event(span("Tobacco", 40, 46), span("StatusTime", *pred_span, "current"))]}
    for criterion, tp in (("label", label_tp), ("exact", exact_tp), ("overlap", overlap_tp)):
        counts = table(score_collections(gold, pred, score_labeled=criterion))
        assert counts[("Tobacco", "StatusTime", "current")] == (1, 1, tp)


def test_span_with_value_needs_equal_subtypes() -> None:
    gold = {"d": [event(span("Tobacco", 40, 46), span("StatusTime", 0, 5, "current"))]}
    pred = {"d": [event(span("Tobacco", 40, 46), span("StatusTime", 0, 5, "past"))]}
    for criterion in ("label", "exact", "overlap"):
        counts = table(score_collections(gold, pred, score_labeled=criterion))
        assert counts[("Tobacco", "StatusTime", "current")] == (1, 0, 0)
        assert counts[("Tobacco", "StatusTime", "past")] == (0, 1, 0)


def test_span_only_exact_overlap_and_partial_tokens() -> None:
    text = "Drinks for the past 8 years."
    #       0         1         2
    #       0123456789012345678901234567
    gold_duration = EventSpan("Duration", 7, 27, text[7:27])  # "for the past 8 years"
    pred_duration = EventSpan("Duration", 11, 27, text[11:27])  # "the past 8 years"
    trigger = EventSpan("Alcohol", 0, 6, "Drinks")
    gold = {"d": [SdohEvent(trigger, (gold_duration,))]}
    pred = {"d": [SdohEvent(trigger, (pred_duration,))]}
    key = ("Alcohol", "Duration", "N/A")
    assert table(score_collections(gold, pred, score_span="exact"))[key] == (1, 1, 0)
    assert table(score_collections(gold, pred, score_span="overlap"))[key] == (1, 1, 1)
    # partial: 5 gold tokens, 4 predicted, longest common run "the past 8 years" = 4.
    assert table(score_collections(gold, pred, score_span="partial"))[key] == (5, 4, 4)


def test_partial_without_spacy_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "spacy", None)  # as if spaCy were not installed
    _english_tokenizer.cache_clear()
    _tokens.cache_clear()
    text = "Drinks for the past 8 years."
    trigger = EventSpan("Alcohol", 0, 6, "Drinks")
    events = {"d": [SdohEvent(trigger, (EventSpan("Duration", 7, 27, text[7:27]),))]}
    try:
        with pytest.raises(ClincorpError, match=r"pip install 'clinical-corpora\[spacy\]'"):
            score_collections(events, events, score_span="partial")
    finally:
        _english_tokenizer.cache_clear()


def test_partial_lets_overlapping_pairs_match_many_to_many() -> None:
    text = "beer and wine"
    trigger = EventSpan("Alcohol", 0, 4, "beer")
    gold = {"d": [SdohEvent(trigger, (EventSpan("Type", 0, 13, text),))]}
    pred = {"d": [SdohEvent(trigger, (EventSpan("Type", 0, 4, "beer"), EventSpan("Type", 9, 13, "wine")))]}
    # Gold has 3 tokens; both one-token predictions overlap it and add 1 each: TP 2, NP 2.
    counts = table(score_collections(gold, pred, score_span="partial"))
    assert counts[("Alcohol", "Type", "N/A")] == (3, 2, 2)
    # Exact is one-to-one and neither span equals the gold one.
    assert table(score_collections(gold, pred))[("Alcohol", "Type", "N/A")] == (1, 2, 0)


def test_span_only_overlap_is_one_to_one_and_greedy() -> None:
    trigger = span("Tobacco", 40, 46)
    gold = {"d": [event(trigger, span("Type", 0, 10), span("Type", 5, 8))]}
    pred = {"d": [event(trigger, span("Type", 6, 7), span("Type", 0, 3))]}
    # Gold [0,10] takes [6,7]; gold [5,8] does not overlap [0,3].
    counts = table(score_collections(gold, pred, score_span="overlap"))
    assert counts[("Tobacco", "Type", "N/A")] == (2, 2, 1)


def test_repeated_roles_and_argument_type_not_role(tmp_path: Path) -> None:
    text = "Retired electrician and farmer.\n"
    #       0123456789012345678901234567890
    write_doc(
        tmp_path / "gold", "uw/0001", text,
        "T1\tEmployment 0 7\tRetired\nT2\tStatusEmploy 0 7\tRetired\n"
        "T3\tType 8 19\telectrician\nT4\tType 24 30\tfarmer\n"
        "E1\tEmployment:T1 Status:T2 Type:T3 Type2:T4\nA1\tStatusEmployVal T2 retired\n",
    )  # fmt: skip
    write_doc(
        tmp_path / "pred", "uw/0001", text,
        "T1\tEmployment 0 7\tRetired\nT2\tStatusEmploy 0 7\tRetired\nT3\tType 24 30\tfarmer\n"
        "E1\tEmployment:T1 Job:T2 Occupation:T3\nA1\tStatusEmployVal T2 retired\n",
    )  # fmt: skip
    counts = table(score_folders(tmp_path / "gold", tmp_path / "pred"))
    # Roles differ ("Job", "Occupation") but the text-bound types match: StatusEmploy 1 of 1,
    # Type: "electrician" finds nothing, "farmer" (role Type2) matches the prediction.
    assert counts[("Employment", "StatusEmploy", "retired")] == (1, 1, 1)
    assert counts[("Employment", "Type", "N/A")] == (2, 1, 1)
    assert counts[("Employment", "Trigger", "N/A")] == (1, 1, 1)


def test_discontinuous_trigger_is_scored_on_its_covering_span() -> None:
    text = "Recreational drug (marijuana) use."
    #       0         1         2         3
    #       0123456789012345678901234567890123
    doc = parse_brat("T1\tDrug 13 17;30 33\tdrug use\nE1\tDrug:T1\n", text)
    gold = {"d": events_from_brat(doc, "gold.ann")}
    pred = {"d": [event(span("Drug", 20, 25))]}  # inside the gap between the fragments
    assert overall(score_collections(gold, pred)) == (1, 1, 1)


# --- document pairing, conversion errors, criteria ---------------------------------------


def test_document_in_one_folder_only_is_an_error_listing_it(tmp_path: Path) -> None:
    write_doc(tmp_path / "gold", "test/mimic/0001", "x\n", "")
    write_doc(tmp_path / "gold", "test/mimic/0002", "x\n", "")
    write_doc(tmp_path / "pred", "test/mimic/0001", "x\n", "")
    write_doc(tmp_path / "pred", "test/uw/0009", "x\n", "")
    with pytest.raises(SourceError) as raised:
        score_folders(tmp_path / "gold", tmp_path / "pred")
    message = str(raised.value)
    assert "documents only in gold: test/mimic/0002" in message
    assert "documents only in predictions: test/uw/0009" in message
    with pytest.raises(ValueError, match="documents only in gold: b"):
        score_collections({"a": [], "b": []}, {"a": []})


def test_empty_gold_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "gold").mkdir()
    (tmp_path / "pred").mkdir()
    with pytest.raises(SourceError, match="no BRAT documents"):
        score_folders(tmp_path / "gold", tmp_path / "pred")


def test_two_workers_give_the_same_rows_and_report_bad_input_by_file_and_line(
    tmp_path: Path,
) -> None:
    detailed: list[str] = []
    rows = score_folders(DOUBLE_A, DOUBLE_B, workers=2, on_document=lambda doc_id, _: detailed.append(doc_id))
    assert rows == score_folders(DOUBLE_A, DOUBLE_B)
    assert detailed == ["mimic/0701", "mimic/0702", "uw/0801"]
    write_doc(tmp_path / "gold", "uw/0001", "smokes\n", "T1\tTobacco 0 6\tsmokes\nE1\tTobacco:T1\n")
    write_doc(tmp_path / "pred", "uw/0001", "smokes\n", "T1\tTobacco 0 6\tsmoked\n")
    with pytest.raises(SourceError) as raised:
        score_folders(tmp_path / "gold", tmp_path / "pred", workers=2)
    assert raised.value.location == f"{tmp_path / 'pred' / 'uw' / '0001.ann'}:1"


def test_events_from_brat_rejects_unscorable_annotations() -> None:
    doc = BratDocument(
        textbounds=(TextBound("T1", "Drug", ((0, 4),), "drug"),),
        events=(Event("E1", "Drug", "T1", ()), Event("E2", "Drug", "T1", (("Cause", "E1"),))),
    )
    with pytest.raises(SourceError, match="E2 argument Cause:E1 is an event"):
        events_from_brat(doc, "x.ann")
    text = "drug"
    conflicting = parse_brat("T1\tStatusTime 0 4\tdrug\nA1\tStatusTimeVal T1 past\nA2\tStatusTimeVal T1 none\n", text)
    with pytest.raises(SourceError, match="expected one value per text-bound"):
        events_from_brat(conflicting, "x.ann")


def test_unknown_criterion_is_rejected() -> None:
    with pytest.raises(ValueError, match="score_trig must be one of exact, overlap, min_dist"):
        score_collections({}, {}, score_trig="partial")  # type: ignore[arg-type]


# --- CSV output ----------------------------------------------------------------------------


def test_csv_has_official_columns_overall_first_and_detailed_rows(tmp_path: Path) -> None:
    out = tmp_path / "scores.csv"
    rows = score_folders_to_csv(DOUBLE_A, DOUBLE_B, out, detailed=True)
    with open(out, newline="") as handle:
        written = list(csv.reader(handle))
    assert tuple(written[0]) == CSV_COLUMNS
    assert written[1][:6] == ["OVERALL", "OVERALL", "OVERALL", "33", "31", "27"]
    assert float(written[1][6]) == 27 / 31 and float(written[1][7]) == 27 / 33
    keys = [tuple(line[:3]) for line in written[2:]]
    assert keys == sorted(keys) and len(keys) == len(rows) - 1
    employment = next(line for line in written if line[:3] == ["Employment", "StatusEmploy", "unemployed"])
    assert employment[3:] == ["1", "0", "0", "0.0", "0.0", "0.0"]

    assert detailed_csv_path(out) == tmp_path / "scores_detailed.csv"
    with open(detailed_csv_path(out), newline="") as handle:
        detailed = list(csv.DictReader(handle))
    assert {line["id"] for line in detailed} == {"mimic/0701", "mimic/0702", "uw/0801"}
    per_doc = {
        doc_id: sum(int(line["TP"]) for line in detailed if line["id"] == doc_id)
        for doc_id in ("mimic/0701", "mimic/0702", "uw/0801")
    }
    assert per_doc == {"mimic/0701": 9, "mimic/0702": 10, "uw/0801": 8}
    assert not any(line["event"] == "OVERALL" for line in detailed)


def test_write_scores_csv_of_no_events_is_a_zero_overall_row(tmp_path: Path) -> None:
    out = tmp_path / "empty.csv"
    write_scores_csv(score_collections({"d": []}, {"d": []}), out)
    assert out.read_text() == ("event,argument,subtype,NT,NP,TP,P,R,F1\nOVERALL,OVERALL,OVERALL,0,0,0,0.0,0.0,0.0\n")
