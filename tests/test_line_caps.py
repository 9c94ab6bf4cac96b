"""The line-by-line readers (RF2, UMLS RRF, CoNLL-2012) read a line up to a cap: a file with no line end is an
error naming its line, never read whole into memory (issue: a 1.5 GB line was a MemoryError)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from clinical_corpora.builders.sources.conll2012 import read_conll2012_chains
from clinical_corpora.builders.sources.rf2 import load_snapshot
from clinical_corpora.builders.sources.umls import read_mrconso
from clinical_corpora.core.errors import SourceError
from clinical_corpora.core.file_limits import MAX_LINE_BYTES
from tests.test_rf2 import _valid_parts, _write_snapshot
from tests.test_umls import CONSO_ROW

LONG = "x" * (MAX_LINE_BYTES + 1)


def _rf2(folder: Path) -> Callable[[], object]:
    concepts, descriptions, relationships = _valid_parts()
    descriptions[1][7] = LONG  # line 3 of the description file
    snapshot = _write_snapshot(folder / "rf2", concepts, descriptions, relationships)
    return lambda: load_snapshot(snapshot)


def _mrconso(folder: Path) -> Callable[[], object]:
    path = folder / "MRCONSO.RRF"
    path.write_text(f"{CONSO_ROW}\n{CONSO_ROW}\n{CONSO_ROW[:-1]}{LONG}|\n", encoding="utf-8")
    return lambda: list(read_mrconso(path))


def _conll(folder: Path) -> Callable[[], object]:
    path = folder / "response.conll"
    path.write_text(f"#begin document (d); part 000\nd 0 0 a (1)\nd 0 1 {LONG} -\n#end document\n", encoding="utf-8")
    return lambda: read_conll2012_chains(path)


@pytest.mark.parametrize(
    ("reader", "name", "line"), [(_rf2, "sct2_Description", 3), (_mrconso, "MRCONSO", 3), (_conll, "response", 3)]
)
def test_a_line_past_the_cap_is_an_error_naming_file_and_line(
    tmp_path: Path, reader: Callable[[Path], Callable[[], object]], name: str, line: int
) -> None:
    read = reader(tmp_path)
    with pytest.raises(SourceError, match=f"longer than {MAX_LINE_BYTES:,} bytes") as caught:
        read()
    assert Path(caught.value.path).name.startswith(name) and caught.value.line == line
