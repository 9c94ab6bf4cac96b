"""``clincorp score coref KEY RESPONSE`` on simple JSON and CoNLL-2012 files (scores counted by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main


def score(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["score", "coref", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def write_json(path: Path, documents: dict) -> Path:
    path.write_text(json.dumps(documents))
    return path


def test_json_chains_scored_per_metric(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = write_json(tmp_path / "key.json", {"p1": [["a", "b", "c"], ["d"]]})
    response = write_json(tmp_path / "response.json", {"p1": [["a", "b"], ["c", "d"]]})
    status, out, _ = score(capsys, str(key), str(response), "--json")
    scores = json.loads(out)
    assert status == 0
    # MUC: key links 2 (a-b-c), 1 recovered; response links 2 (a-b, c-d), 1 right.
    assert scores["muc"] == pytest.approx({"recall": 0.5, "precision": 0.5, "f1": 0.5})
    # B3 recall (2/3 + 2/3 + 1/3 + 1) / 4; precision (1 + 1 + 1/2 + 1/2) / 4.
    assert scores["b_cubed"]["recall"] == pytest.approx(2 / 3)
    assert scores["b_cubed"]["precision"] == pytest.approx(3 / 4)
    assert set(scores) == {"muc", "b_cubed", "ceaf_m", "ceaf_e", "blanc", "lea", "conll_f1"}


def test_documents_are_summed_not_averaged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = write_json(tmp_path / "key.json", {"p1": [[1, 2, 3, 4, 5]], "p2": [[6, 7]]})
    response = write_json(tmp_path / "response.json", {"p1": [[1, 2, 3, 4, 5]], "p2": [[6], [7]]})
    _, out, _ = score(capsys, str(key), str(response), "--json", "--metrics", "muc")
    # links: p1 4/4, p2 0/1 → recall 4/5 (the mean of per-document recalls would be 1/2)
    assert json.loads(out)["muc"]["recall"] == pytest.approx(4 / 5)


CONLL_KEY = """#begin document (d); part 000
d 0 0 The - - - - - - * (0
d 0 1 tube - - - - - - * 0)
d 0 2 was - - - - - - * -
d 0 3 removed - - - - - - * (1)

d 0 0 It - - - - - - * (0)
#end document
"""


def test_conll2012_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = tmp_path / "key.conll"
    key.write_text(CONLL_KEY)
    response = tmp_path / "response.conll"
    response.write_text(CONLL_KEY.replace("* (0)", "* (2)"))
    _, out, _ = score(capsys, str(key), str(response), "--json")
    scores = json.loads(out)
    assert scores["muc"]["recall"] == 0.0
    # B3 recall: "The tube" 1/2, "It" 1/2, "removed" 1 → 2/3; every response chain is a singleton.
    assert scores["b_cubed"]["recall"] == pytest.approx(2 / 3)
    assert scores["b_cubed"]["precision"] == pytest.approx(1.0)
    _, table, _ = score(capsys, str(key), str(key))
    assert "conll" in table and "100.00" in table


def test_errors_exit_1_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = write_json(tmp_path / "key.json", {"p1": [["a", "b"], ["b"]]})
    conll = tmp_path / "response.conll"
    conll.write_text(CONLL_KEY)
    status, _, err = score(capsys, str(key), str(conll))
    assert status == 1 and "same format" in err
    status, _, err = score(capsys, str(key), str(key))
    assert status == 1 and "'b' appears more than once in the key" in err
    status, _, err = score(capsys, str(tmp_path / "missing.json"), str(key))
    assert status == 1 and "no such file" in err
    broken = tmp_path / "broken.conll"
    broken.write_text(CONLL_KEY.replace("* 0)", "* -"))
    status, _, err = score(capsys, str(broken), str(conll))
    assert status == 1 and "broken.conll:2" in err and "never closed" in err


def test_documents_match_by_exact_header_unless_normalised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = tmp_path / "key.conll"
    key.write_text(CONLL_KEY)
    # Two columns (document, coreference), "part 0" and a trailing space: scorer.pl reads the
    # coreference column but does not take this for the key's "(d); part 000".
    response = tmp_path / "response.conll"
    response.write_text("#begin document (d); part 0 \nd (0\nd 0)\nd -\nd (1)\n\nd (0)\n#end document\n")
    status, _, err = score(capsys, str(key), str(response))
    assert status == 1 and "response documents not in the key: ['(d); part 0 ']" in err
    status, out, _ = score(capsys, str(key), str(response), "--json", "--normalise-doc-names")
    assert status == 0
    assert json.loads(out)["conll_f1"] == pytest.approx(1.0)
