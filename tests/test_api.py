"""The Python API (``clinical_corpora.api``): every command with its typed arguments and typed result, errors
raised as ClincorpError, and docs/python-api.md's example run as written on the session's sample releases."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from clinical_corpora import api
from clinical_corpora.builders.commands.main import main
from clinical_corpora.core.release_manifest import release_digest
from tests.conftest import SampleVariant

DOC = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)


def test_the_documented_example_runs(
    sample_variant: SampleVariant, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The doc's blocks, in order, in a fresh folder; its first call (the release) answered by copies of the
    session's sample release and text-free variant, as ``api.release`` would return them."""
    corpus = tmp_path / "releases" / "rad_coref"
    full = Path(shutil.copytree(sample_variant("rad_coref", "full"), corpus / "full"))
    text_free = Path(shutil.copytree(sample_variant("rad_coref", "text-free"), corpus / "text-free"))
    asked: list[api.ReleaseArgs] = []

    def released(args: api.ReleaseArgs) -> list[api.Released]:
        asked.append(args)
        return [
            api.Released("rad_coref", "sample", "released", full, release_digest(full)),
            api.Released("rad_coref", text_free.name, "released", text_free, release_digest(text_free)),
        ]

    monkeypatch.setattr(api, "release", released)
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks()
    assert len(blocks) == 3
    scope: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), scope)  # the documented example, run as written
    assert asked == [api.ReleaseArgs(("rad_coref",), out=Path("releases"), text_free=True)]
    printed = capsys.readouterr().out
    assert "document pages: open file://" in printed and "CoNLL F1 " in printed
    assert "was made on the full release this text-free one keeps" in printed
    assert "error: no-such-release is not a release folder" in printed
    assert (tmp_path / "pages" / "index.html").is_file() and (tmp_path / "string-match.json").is_file()


def test_release_returns_each_release_typed_and_raises_a_single_corpus_error(tiny_corpus: Path, tmp_path: Path) -> None:
    (made,) = api.release(api.ReleaseArgs((str(tiny_corpus),), out=tmp_path / "out"))
    assert (made.corpus, made.name, made.status, made.counts) == ("tiny", "1.0.0+sample", "released", (3, 3, 0))
    assert made.folder == tmp_path / "out" / "tiny" / "tiny-1.0.0+sample"
    assert made.digest == release_digest(made.folder)
    (again,) = api.release(api.ReleaseArgs((str(tiny_corpus),), out=tmp_path / "out"))
    assert (again.status, again.digest) == ("unchanged", made.digest)
    with pytest.raises(api.ClincorpError, match="no corpus '.*no-such-corpus'; registered: "):
        api.release(api.ReleaseArgs((str(tmp_path / "no-such-corpus"),), out=tmp_path / "out"))


def test_validate_gives_a_verdict_and_the_cli_prints_the_same(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = sample_variant("sdoh", "full")
    verdict = api.validate(api.ValidateArgs(full))
    assert verdict.verdict == "valid" and verdict.exit_status == 0 and verdict.gates
    assert verdict.checked is not None and (verdict.checked.corpus, verdict.checked.variant) == ("sdoh", "full")
    missing = api.validate(api.ValidateArgs(tmp_path / "nowhere"))
    assert (missing.verdict, missing.exit_status, missing.checked) == ("could not check", 3, None)
    assert missing.error == f"{tmp_path / 'nowhere'} is not a release folder: no such folder"
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "nowhere")]) == 3
    assert capsys.readouterr().err == f"error: {missing.error}\n"


def test_an_error_is_raised_by_the_api_and_printed_on_one_line_by_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(api.ClincorpError, match="is not a release folder") as raised:
        api.view(api.ViewArgs(tmp_path / "nowhere", tmp_path / "pages"))
    assert main(["view", str(tmp_path / "nowhere"), "--out", str(tmp_path / "pages")]) == 1
    assert capsys.readouterr().err == f"error: {raised.value}\n"
    with pytest.raises(api.ClincorpError, match="no baseline is registered for corpus 'nothing'"):
        api.baseline(api.BaselineArgs("nothing", tmp_path, tmp_path / "out"))
