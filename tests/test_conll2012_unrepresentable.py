"""CoNLL-2012 export of a release holding what the format cannot hold (the real CRAFT coreference release's
patterns, in one invented Knowtator note): a markable on a single space, and a discontinuous markable whose
covering span is the tokens of a mention of another chain."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.pipeline import run
from clinical_corpora.builders.release.request import ReleaseRequest
from clinical_corpora.builders.sources.conll2012 import iter_conll2012

TEXT = "CT of the pelvis was done .  It showed no mass .\nThe scan was clear .\n"
# id, fragments, semantic class
MARKABLES = [
    ("M1", [(0, 2), (10, 16)], "procedure"),  # "CT ... pelvis": covering span "CT of the pelvis"
    ("M2", [(0, 16)], "procedure"),  # "CT of the pelvis", another entity on the same tokens
    ("M3", [(27, 28)], "none"),  # one of the two spaces before "It": covers no token
    ("M4", [(29, 31)], "procedure"),  # "It"
    ("M5", [(49, 57)], "procedure"),  # "The scan"
]
PAIRS = [("P1", "M5", "M1"), ("P2", "M4", "M2")]  # (id, anaphor, antecedent)


Markable = tuple[str, list[tuple[int, int]], str]


def knowtator_xml(
    doc: str, markables: list[Markable] = MARKABLES, pairs: list[tuple[str, str, str]] = PAIRS, text: str = TEXT
) -> str:
    """The note's annotations in Knowtator XML, as the ODIE annotators' files hold them."""
    annotations, mentions, slots = [], [], []
    for mention, fragments, semantic_class in markables:
        spans = "".join(f'<span start="{start}" end="{end}"/>' for start, end in fragments)
        spanned = " ... ".join(text[start:end] for start, end in fragments)
        annotations.append(
            f'<annotation><mention id="{mention}"/><annotator id="A0">adjudicator</annotator>{spans}'
            f"<spannedText>{spanned}</spannedText></annotation>"
        )
        mentions.append(
            f'<classMention id="{mention}"><mentionClass id="Markable">{spanned}</mentionClass>'
            f'<hasSlotMention id="{mention}_class"/></classMention>'
        )
        slots.append(
            f'<stringSlotMention id="{mention}_class"><mentionSlot id="semantic_class"/>'
            f'<stringSlotMentionValue value="{semantic_class}"/></stringSlotMention>'
        )
    for pair, anaphor, antecedent in pairs:
        fragments = next(fragments for mention, fragments, _ in markables if mention == anaphor)
        start, end = fragments[0][0], fragments[-1][1]
        annotations.append(  # a pair carries its anaphor's span, as the ODIE files do
            f'<annotation><mention id="{pair}"/><annotator id="A0">adjudicator</annotator>'
            f'<span start="{start}" end="{end}"/><spannedText>{text[start:end]}</spannedText></annotation>'
        )
        mentions.append(
            f'<classMention id="{pair}"><mentionClass id="Pair">Pair</mentionClass>'
            + "".join(f'<hasSlotMention id="{pair}_{slot}"/>' for slot in ("anaphor", "antecedent", "relation"))
            + "</classMention>"
        )
        slots += [
            f'<complexSlotMention id="{pair}_anaphor"><mentionSlot id="anaphor"/>'
            f'<complexSlotMentionValue value="{anaphor}"/></complexSlotMention>',
            f'<complexSlotMention id="{pair}_antecedent"><mentionSlot id="antecedent"/>'
            f'<complexSlotMentionValue value="{antecedent}"/></complexSlotMention>',
            f'<stringSlotMention id="{pair}_relation"><mentionSlot id="relation_type"/>'
            '<stringSlotMentionValue value="identity"/></stringSlotMention>',
        ]
    body = "\n".join([*annotations, *mentions, *slots])
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<annotations textSource="{doc}.txt">\n{body}\n</annotations>\n'


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("craft_like")
    (root / "gold").mkdir()
    (root / "text").mkdir()
    (root / "text" / "upmc_rad_91.txt").write_text(TEXT, encoding="utf-8")
    (root / "gold" / "upmc_rad_91.txt.knowtator.xml").write_text(knowtator_xml("upmc_rad_91"), encoding="utf-8")
    sources = {"knowtator": root / "gold", "text": root / "text"}
    return run(ReleaseRequest(find_corpus("odie_anaphora"), root / "out", sources=sources)).folder


def test_export_fails_naming_every_mention_and_leaves_nothing(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "conll"
    assert main(["export", "conll2012", str(release), "--out", str(out)]) == 1
    error = capsys.readouterr().err
    assert "2 mention(s) cannot be written in CoNLL-2012; nothing was exported" in error
    assert "train/upmc_rad_91: mention M3 (' ') covers no token" in error
    assert "train/upmc_rad_91: mention M2 of chain chain_2: two chains have a mention on tokens 0-4" in error
    assert "--on-error drop" in error and "Traceback" not in error
    assert not out.exists()  # no empty train.conll, no folder
    kept = tmp_path / "kept"
    kept.mkdir()
    assert main(["export", "conll2012", str(release), "--out", str(kept), "--no-singletons"]) == 1
    assert list(kept.iterdir()) == []


def test_export_drops_each_mention_with_a_count_and_a_list(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "conll"
    assert main(["export", "conll2012", str(release), "--out", str(out), "--on-error", "drop"]) == 0
    assert "left out 2 mention(s) the format cannot hold" in capsys.readouterr().out
    assert sorted(path.name for path in out.iterdir()) == ["dropped.tsv", "train.conll"]
    assert [line.split("\t") for line in (out / "dropped.tsv").read_text().splitlines()][:2] == [
        ["split", "record", "chain", "item", "start", "end", "reason"],
        ["train", "upmc_rad_91", "singleton M3", "M3", "27", "28", "(' ') covers no token"],
    ]
    assert (out / "dropped.tsv").read_text().splitlines()[2].startswith("train\tupmc_rad_91\tchain_2\tM2\t0\t16\t")
    (document,) = iter_conll2012(out / "train.conll")
    words = [word for sentence in document.sentences for word in sentence]
    chains = sorted(sorted(" ".join(words[s.start : s.end]) for s in chain) for chain in document.chains)
    # M1 keeps its tokens; M2 is left out, and "It" stays as its chain's only mention.
    assert chains == [["CT of the pelvis", "The scan"], ["It"]]


def test_release_scores_as_a_key_without_the_mentions_the_format_cannot_hold(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "conll"
    assert main(["export", "conll2012", str(release), "--out", str(out), "--on-error", "drop"]) == 0
    capsys.readouterr()
    assert main(["score", "coref", str(release), str(out / "train.conll"), "--metrics", "muc"]) == 0
    captured = capsys.readouterr()
    assert "2 mention(s) CoNLL-2012 cannot hold are left out" in captured.err
    assert captured.out.count("100.00") == 4


def test_duplicate_mentions_of_one_chain_are_merged_and_each_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CRAFT's pattern: a discontinuous markable ("CT ... pelvis") and a contiguous one ("CT of the pelvis")
    linked in one chain, on the same tokens. CoNLL-2012 holds them as one mention: the export merges them,
    and says so, mention by mention, in dropped.tsv."""
    markables = [*MARKABLES[:2], ("M4", [(29, 31)], "procedure"), ("M6", [(3, 16)], "procedure")]
    pairs = [("P1", "M2", "M1"), ("P2", "M4", "M2"), ("P3", "M6", "M2")]  # M6 "of the pelvis": tokens 1-4
    markables.append(("M7", [(10, 16)], "procedure"))  # "pelvis" alone: its own tokens, a singleton
    root = tmp_path / "craft_like"
    (root / "gold").mkdir(parents=True)
    (root / "text").mkdir()
    (root / "text" / "upmc_rad_92.txt").write_text(TEXT, encoding="utf-8")
    xml = knowtator_xml("upmc_rad_92", markables, pairs)
    (root / "gold" / "upmc_rad_92.txt.knowtator.xml").write_text(xml, encoding="utf-8")
    sources = {"knowtator": root / "gold", "text": root / "text"}
    release = run(ReleaseRequest(find_corpus("odie_anaphora"), root / "out", sources=sources)).folder
    out = tmp_path / "conll"
    assert main(["export", "conll2012", str(release), "--out", str(out)]) == 0
    assert "left out 0 mention(s) the format cannot hold and merged 1 duplicate mention(s)" in capsys.readouterr().out
    lines = [line.split("\t") for line in (out / "dropped.tsv").read_text(encoding="utf-8").splitlines()]
    assert lines[1][:6] == ["train", "upmc_rad_92", "chain_1", "M2", "0", "16"]
    assert "as mention M1 of the same chain; merged into one CoNLL-2012 mention" in lines[1][6]
    assert len(lines) == 2
    (document,) = iter_conll2012(out / "train.conll")
    words = [word for sentence in document.sentences for word in sentence]
    chains = sorted(sorted(" ".join(words[s.start : s.end]) for s in chain) for chain in document.chains)
    assert chains == [["CT of the pelvis", "It", "of the pelvis"], ["pelvis"]]
