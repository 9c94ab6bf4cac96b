"""SHAC events from BRAT (builders.sources.shac): the conversion the sdoh builder and scorer share."""

from __future__ import annotations

import pytest

from clinical_corpora.builders.sources.brat.standoff import parse_brat
from clinical_corpora.builders.sources.shac import ShacScheme, shac_annotations
from clinical_corpora.core.errors import SourceError

TEXT = "Smokes 1 ppd. Plays chess."
#       01234567890123456789012345
SCHEME = ShacScheme(("Tobacco",), {"StatusTime": ("none", "current", "past")})
ANN = (
    "T1\tTobacco 0 6\tSmokes\nT2\tStatusTime 0 6\tSmokes\nT3\tAmount 7 12\t1 ppd\nT4\tHobby 14 19\tPlays\n"
    "E1\tTobacco:T1 Status:T2 Amount:T3\nA1\tStatusTimeVal T2 current\n"
)


def test_events_resolve_arguments_and_subtypes_and_keep_unused_textbounds() -> None:
    annotations = shac_annotations(parse_brat(ANN, TEXT), "x.ann", SCHEME)
    [event] = annotations.events
    spans = annotations.textbounds
    assert (event.id, event.type, spans[event.trigger].subtype) == ("E1", "Tobacco", None)
    assert [(role, spans[target].textbound.type, spans[target].subtype) for role, target in event.arguments] == [
        ("Status", "StatusTime", "current"),
        ("Amount", "Amount", None),
    ]
    assert [span.textbound.id for span in annotations.unused_textbounds] == ["T4"]


def test_without_a_scheme_any_event_type_and_attribute_is_read() -> None:
    ann = "T1\tHobby 14 19\tPlays\nT2\tGame 20 25\tchess\nE1\tHobby:T1 Game:T2\nA1\tKindVal T2 board\n"
    annotations = shac_annotations(parse_brat(ann, TEXT), "x.ann")
    assert [event.type for event in annotations.events] == ["Hobby"]
    assert annotations.textbounds["T2"].subtype == "board"
    with pytest.raises(SourceError, match="E1 has event type Hobby; expected a SHAC event type, one of Tobacco"):
        shac_annotations(parse_brat(ann.replace("A1\tKindVal T2 board\n", ""), TEXT), "x.ann", SCHEME)
    with pytest.raises(SourceError, match="A1 puts KindVal on T2, a Game text-bound; expected one of StatusTimeVal"):
        shac_annotations(parse_brat(ann.replace("E1\tHobby:T1 Game:T2\n", ""), TEXT), "x.ann", SCHEME)


@pytest.mark.parametrize("scheme", [None, SCHEME], ids=["scorer", "release"])
def test_the_same_rules_hold_with_and_without_a_scheme(scheme: ShacScheme | None) -> None:
    second_value = parse_brat(ANN + "A2\tStatusTimeVal T2 past\n", TEXT)
    with pytest.raises(SourceError) as raised:
        shac_annotations(second_value, "x.ann", scheme)
    assert raised.value.location == "x.ann:7"
    assert raised.value.message == (
        "A2 gives T2 a second value 'past' (StatusTimeVal); A1 gave it 'current' "
        "(StatusTimeVal); expected one value per text-bound"
    )
    repeated = parse_brat(ANN + "A2\tStatusTimeVal T2 current\n", TEXT)
    assert shac_annotations(repeated, "x.ann", scheme).textbounds["T2"].subtype == "current"
    event_argument = parse_brat(ANN + "T5\tTobacco 20 25\tchess\nE2\tTobacco:T5 Other:E1\n", TEXT)
    with pytest.raises(SourceError, match=r"E2 argument Other:E1 is an event; expected a text-bound"):
        shac_annotations(event_argument, "x.ann", scheme)


def test_with_on_broken_only_the_broken_annotation_is_left_out() -> None:
    """An event type outside the scheme goes with what depends on it; a bad value goes alone (its
    span stays, without a subtype); an event argument that is an event goes alone (the event stays)."""
    ann = (
        ANN  # lines 1-6: Tobacco E1 with T2 current
        + "T5\tHobby 14 19\tPlays\nE2\tHobby:T5\n"  # 7-8: not a SHAC type
        + "#1\tAnnotatorNotes E2\tchess club\n"  # 9: on E2, goes with it
        + "T6\tStatusTime 20 25\tchess\nA2\tStatusTimeVal T6 sometimes\n"  # 10-11: value outside the set
        + "A3\tStatusTimeVal T2 past\n"  # 12: a second value for T2
        + "T7\tTobacco 20 25\tchess\nE3\tTobacco:T7 Other:E1 Status:T6\n"  # 13-14: argument E1 is an event
    )
    errors: list[SourceError] = []
    annotations = shac_annotations(parse_brat(ann, TEXT), "x.ann", SCHEME, on_broken=errors.append)
    assert [(error.line, error.message.split(";")[0]) for error in errors] == [
        (8, "E2 has event type Hobby"),
        (11, "A2 StatusTimeVal has value 'sometimes'"),
        (12, "A3 gives T2 a second value 'past' (StatusTimeVal)"),
        (14, "E3 argument Other:E1 is an event"),
    ]
    assert "depending on it: #1 (line 9)" in errors[0].message
    assert [event.id for event in annotations.events] == ["E1", "E3"]
    assert annotations.events[1].arguments == (("Status", "T6"),)
    assert annotations.textbounds["T2"].subtype == "current"
    assert annotations.textbounds["T6"].subtype is None
    assert [span.textbound.id for span in annotations.unused_textbounds] == ["T4", "T5"]
