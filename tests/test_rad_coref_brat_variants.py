"""rad_coref's BRAT format against the BRAT variants the reader now accepts (issue 11): the corpus's
own format stays closed, each refusal naming the file and what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinical_corpora.builders.sources.discovery import Document
from clinical_corpora.core.errors import SourceError
from clinical_corpora.corpora.rad_coref.reports import AnnotatedReport, read_mentions

TEXT = "Small left pleural effusion. Chest tube in place.\n"
#       01234567890123456789012345678901234567890123456789
MENTION = "T1\tFinding 6 27\tleft pleural effusion\n#1\tAnnotatorNotes T1\tchain=E1\n"


def _read(tmp_path: Path, ann: str) -> list[str]:
    path = tmp_path / "gold" / "10006" / "1234.ann"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ann, encoding="utf-8")
    return [
        mention.text
        for mention in read_mentions(AnnotatedReport(10006, 1234, Document("10006/1234", {".ann": path})), TEXT)
    ]


def test_a_plain_mention_with_its_chain_is_read(tmp_path: Path) -> None:
    assert _read(tmp_path, MENTION) == ["left pleural effusion"]


@pytest.mark.parametrize(
    "extra, expected",
    [
        ("N1\tReference T1 SNOMED:60046008\tPleural effusion\n", "unexpected normalisation annotations"),
        ("T2\tDevice 29 29\t\n#2\tAnnotatorNotes T2\tchain=E2\n", "T2 is empty; expected a mention's text"),
    ],
    ids=["normalisation line", "zero-length mention"],
)
def test_variants_outside_the_format_are_refused(tmp_path: Path, extra: str, expected: str) -> None:
    with pytest.raises(SourceError, match=expected) as raised:
        _read(tmp_path, MENTION + extra)
    assert raised.value.path.endswith("1234.ann")
