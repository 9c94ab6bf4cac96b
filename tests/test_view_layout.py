"""How the viewer lays out a passage (overlapping, discontinuous, empty and misplaced spans) and names its
pages (never after a raw id)."""

from __future__ import annotations

import re

from clinical_corpora.builders.contract.display import Mark
from clinical_corpora.builders.view.layout import Piece, lay_out
from clinical_corpora.builders.view.writer import page_name

TEXT = "lives alone with her daughter"


def in_line(pieces: list[Piece]) -> list[Piece]:
    """The pieces with each marked text's tags before it."""
    return [flat for piece in pieces for flat in (*piece.tags, piece)]


def mark(key: str, *fragments: tuple[int, int]) -> Mark:
    return Mark(key, "argument", key, list(fragments))


def test_overlapping_marks_take_their_own_lanes_and_the_text_is_kept_whole() -> None:
    marks = [(0, mark("a", (0, 11))), (1, mark("b", (6, 29))), (2, mark("c", (17, 29)))]
    laid = lay_out(TEXT, marks, [])
    laid.pieces = in_line(laid.pieces)
    assert "".join(piece.text for piece in laid.pieces if piece.kind == "text") == TEXT
    bars = {piece.text: [(bar.mark, bar.lane) for bar in piece.bars] for piece in laid.pieces if piece.kind == "text"}
    assert bars == {"lives ": [(0, 0)], "alone": [(0, 0), (1, 1)], " with ": [(1, 1)], "her daughter": [(2, 0), (1, 1)]}
    assert laid.lanes == 2
    assert [piece.mark for piece in laid.pieces if piece.kind == "tag"] == [0, 1, 2]


def test_a_discontinuous_mark_has_one_tag_one_lane_and_a_caret_for_an_empty_fragment() -> None:
    laid = lay_out(TEXT, [(0, mark("d", (0, 5), (12, 12), (17, 29)))], [])
    laid.pieces = in_line(laid.pieces)
    assert [piece.kind for piece in laid.pieces].count("tag") == 1
    assert [piece.mark for piece in laid.pieces if piece.kind == "caret"] == [0]
    marked = [piece.text for piece in laid.pieces if piece.kind == "text" and piece.bars]
    assert marked == ["lives", "her daughter"]


def test_an_empty_mark_is_a_tag_marked_zero_and_misplaced_marks_are_set_apart() -> None:
    marks = [(0, mark("z", (6, 6))), (1, mark("out", (20, 40))), (2, mark("reversed", (9, 3))), (3, mark("none"))]
    laid = lay_out(TEXT, marks, [(6, "Heading")])
    laid.pieces = in_line(laid.pieces)
    assert [(piece.kind, piece.mark, piece.zero) for piece in laid.pieces if piece.kind != "text"] == [
        ("section", 0, False),
        ("tag", 0, True),
    ]
    assert laid.unplaced == [1, 2, 3]


def test_page_names_are_safe_slugs_unique_per_id() -> None:
    taken: set[str] = set()
    names = [page_name(identifier, taken) for identifier in ["../../etc/passwd", "a/b", "a_b", "a/b", "", ".hidden"]]
    assert all(re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_-]*\.html", name) for name in names)
    assert len(set(names)) == len(names)  # even the repeated id gets a page of its own
    assert names[0].startswith("etc-passwd-")
