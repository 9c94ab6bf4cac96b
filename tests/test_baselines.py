"""``clincorp baseline``: the papers' non-neural baselines on the sample releases, scored by ``clincorp score``.

The clicr sample's test split is case bcr-2019-228214 (5 queries, answers in tests/test_clicr_cli.py). Its
passage holds five entity strings twice each (bedwetting, constipation, desmopressin, enuresis alarm, renal
ultrasound), the rest once: bedwetting is seen first, so maxfreq-entity answers "bedwetting" to every query.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.sources.conll2012 import iter_conll2012
from clinical_corpora.core.splits import cross_validation_folds
from clinical_corpora.corpora.clicr.baselines import most_frequent, read_entities
from clinical_corpora.corpora.clicr.sim_entity import Vectors, best_entity, entity_contexts, query_vector
from clinical_corpora.corpora.odie_anaphora.baselines import head_word
from clinical_corpora.validation.metrics.clicr import read_word_vectors
from tests.conftest import SampleVariant


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_entities_read_as_the_authors_code_reads_them() -> None:
    text = "Title\nA BEG__Fever__END and BEG__chest pain__END , BEG__fever__END then BEG__chest pain__END ."
    assert read_entities(text) == ["Fever", "chest pain", "fever", "chest pain"]
    assert most_frequent(read_entities(text)) == "chest pain"  # case kept: Fever and fever count apart
    assert most_frequent(["b", "a", "a", "b"]) == "b"  # a tie goes to the first seen


def test_maxfreq_entity_answers_the_most_frequent_entity_and_scores_by_hand(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_variant("clicr", "full")
    status, out, _ = run(capsys, "baseline", "clicr", str(release), "--split", "test", "--out", str(tmp_path))
    assert status == 0 and str(tmp_path / "test.json") in out
    predictions = json.loads((tmp_path / "test.json").read_text())
    assert predictions == {f"bcr-2019-228214.{n}": "bedwetting" for n in range(1, 6)}
    scores = tmp_path / "scores.json"
    assert main(["score", "clicr", str(release), str(tmp_path / "test.json"), "--out", str(scores)]) == 0
    # .2 accepts Bedwetting (EM and F1 1); .5 "bedwetting alarm": precision 1, recall 1/2, F1 2/3; others 0.
    assert json.loads(scores.read_text())["exact_match"] == pytest.approx(100 / 5)
    assert json.loads(scores.read_text())["f1"] == pytest.approx(100 * (1 + 2 / 3) / 5)


def test_maxfreq_entity_equals_a_count_over_the_clicr_json_export(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_variant("clicr", "full")
    assert main(["export", "clicr-json", str(release), "--out", str(tmp_path / "json")]) == 0
    assert run(capsys, "baseline", "clicr", str(release), "--out", str(tmp_path / "maxfreq"))[0] == 0
    for split in ("train", "dev", "test"):
        expected = {}
        for datum in json.loads((tmp_path / "json" / f"{split}1.0.json").read_text())["data"]:
            document = datum["document"]
            counts = Counter(re.findall(r"BEG__(.+?)__END", document["title"] + "\n" + document["context"]))
            best = max(counts.values())
            answer = next(entity for entity, count in counts.items() if count == best)
            expected |= {qa["id"]: answer for qa in document["qas"]}
        assert json.loads((tmp_path / "maxfreq" / f"{split}.json").read_text()) == expected


def test_rand_entity_is_fixed_by_its_seed(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = str(sample_variant("clicr", "full"))
    for folder, seed in (("a", "7"), ("b", "7"), ("c", "8")):
        argv = ("baseline", "clicr", release, "--name", "rand-entity", "--seed", seed, "--split", "train")
        assert run(capsys, *argv, "--out", str(tmp_path / folder))[0] == 0
    first, again, other = (json.loads((tmp_path / name / "train.json").read_text()) for name in "abc")
    assert first == again and first != other
    assert len(first) == 31
    assert all("BEG__" not in answer and "__END" not in answer for answer in first.values())


def _chains_by_text(conll: Path) -> list[list[set[str]]]:
    """Each document's response chains, a chain as the set of its mentions' lower-cased token strings."""
    documents = []
    for document in iter_conll2012(conll):
        words = [word for sentence in document.sentences for word in sentence]
        documents.append(
            [{" ".join(words[span.start : span.end]).lower() for span in chain} for chain in document.chains]
        )
    return documents


def test_string_match_links_mentions_of_one_string_and_scores_as_the_card(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_variant("rad_coref", "full")
    assert run(capsys, "baseline", "rad_coref", str(release), "--out", str(tmp_path))[0] == 0
    response = tmp_path / "train.conll"
    for chains in _chains_by_text(response):
        assert all(len(strings) == 1 for strings in chains)  # a chain is one string
        assert len({next(iter(strings)) for strings in chains}) == len(chains)  # and one string one chain
    status, out, _ = run(capsys, "score", "coref", str(release), str(response), "--split", "train", "--json")
    assert status == 0
    card = (release / "README.md").read_text()
    muc = re.search(r"\| string-match \| train \| this release \| ([0-9.]+) \|", card)
    assert muc is not None
    assert json.loads(out)["muc"]["f1"] == pytest.approx(float(muc[1]), abs=1e-4)


def test_head_match_takes_the_last_word_of_the_last_fragment() -> None:
    markable = {"text": "CT of the ... pelvis", "fragments": [{"text": "CT"}, {"text": "the Pelvis,"}]}
    assert head_word(markable) == "pelvis"


def test_odie_baselines_write_a_response_per_split_holding_notes(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = str(sample_variant("odie_anaphora", "full"))
    exact = run(capsys, "baseline", "odie_anaphora", release, "--name", "exact-string", "--out", str(tmp_path / "e"))
    head = run(capsys, "baseline", "odie_anaphora", release, "--name", "head-match", "--out", str(tmp_path / "h"))
    assert exact[0] == head[0] == 0
    assert "split test: no records, no file written" in exact[1]
    assert all(len(strings) == 1 for chains in _chains_by_text(tmp_path / "e" / "train.conll") for strings in chains)
    status, out, _ = run(capsys, "score", "coref", release, str(tmp_path / "h" / "train.conll"), "--split", "train")
    assert status == 0 and "muc" in out
    exact_muc = json.loads(
        run(capsys, "score", "coref", release, str(tmp_path / "e" / "train.conll"), "--split", "train", "--json")[1]
    )["muc"]
    head_muc = json.loads(
        run(capsys, "score", "coref", release, str(tmp_path / "h" / "train.conll"), "--split", "train", "--json")[1]
    )["muc"]
    assert head_muc["recall"] >= exact_muc["recall"]  # every exact-string link is a head-match link


def test_baseline_errors_name_what_was_expected(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = str(sample_variant("clicr", "full"))
    status, _, err = run(capsys, "baseline", "clicr", release, "--name", "nope", "--out", str(tmp_path))
    assert status == 1 and "maxfreq-entity, rand-entity" in err and "Traceback" not in err
    status, _, err = run(capsys, "baseline", "rad_coref", release, "--out", str(tmp_path))
    assert status == 1 and "is a clicr release, not a rad_coref one" in err
    text_free = str(sample_variant("clicr", "text-free"))
    status, _, err = run(capsys, "baseline", "clicr", text_free, "--out", str(tmp_path))
    assert status == 1 and "text-free release" in err and "clincorp rehydrate" in err


VECTORS = "4 2\nunk 0 0\nsevere 1 0\nsputum 0 1\ncough 0.5 0.5\n"


def test_sim_entity_takes_the_entity_whose_context_is_nearest_the_query(tmp_path: Path) -> None:
    (tmp_path / "vectors.txt").write_text(VECTORS)
    vectors = Vectors(read_word_vectors(tmp_path / "vectors.txt"), lowercased=True)
    text = "Title\nhe had Severe BEG__headache__END and then BEG__cough__END with sputum"
    entities, contexts = entity_contexts(text, vectors)
    assert entities == ["headache", "cough"] and contexts is not None
    # headache: he had Severe | and then cough → severe + cough; cough: headache and then | with sputum → sputum
    assert contexts.tolist() == [[1.5, 0.5], [0.0, 1.0]]
    assert best_entity(entities, contexts, query_vector("a patient with @placeholder and sputum", vectors)) == "cough"
    assert best_entity(entities, contexts, query_vector("severe @placeholder", vectors)) == "headache"


def test_sim_entity_answers_with_passage_entities_and_needs_vectors(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = str(sample_variant("clicr", "full"))
    (tmp_path / "vectors.txt").write_text(VECTORS)
    argv = ("baseline", "clicr", release, "--name", "sim-entity", "--split", "test")
    status, _, err = run(capsys, *argv, "--out", str(tmp_path / "none"))
    assert status == 1 and "needs word vectors: give --word-vectors FILE" in err
    assert run(capsys, *argv, "--word-vectors", str(tmp_path / "vectors.txt"), "--out", str(tmp_path))[0] == 0
    predictions = json.loads((tmp_path / "test.json").read_text())
    assert set(predictions) == {f"bcr-2019-228214.{n}" for n in range(1, 6)}
    assert main(["export", "clicr-json", release, "--out", str(tmp_path / "json")]) == 0
    document = json.loads((tmp_path / "json" / "test1.0.json").read_text())["data"][0]["document"]
    assert set(predictions.values()) <= set(read_entities(document["title"] + "\n" + document["context"]))


def test_folds_deal_patients_the_same_way_whatever_their_order() -> None:
    ids = [f"patient {n}" for n in range(12)]
    folds = cross_validation_folds(ids, 5)
    assert folds == cross_validation_folds(reversed(ids), 5)
    assert sorted(id_ for fold in folds for id_ in fold) == sorted(ids) and [len(f) for f in folds] == [3, 3, 2, 2, 2]
    with pytest.raises(ValueError, match="cannot deal 12 documents into 13 folds"):
        cross_validation_folds(ids, 13)


def test_score_coref_folds_reports_each_fold_and_their_mean(
    sample_variant: SampleVariant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = sample_variant("rad_coref", "full")
    assert run(capsys, "baseline", "rad_coref", str(release), "--out", str(tmp_path))[0] == 0
    score = ["score", "coref", str(release), str(tmp_path / "train.conll"), "--split", "train"]
    status, out, _ = run(
        capsys, *score, "--folds", "3", "--json", "--record", str(tmp_path / "r.json"), "--system", "s"
    )
    assert status == 0
    scored = json.loads(out)
    assert [len(fold["documents"]) for fold in scored["folds"]] == [1, 1, 1]  # the sample's 3 patients
    f1s = [fold["muc.f1"] for fold in scored["folds"]]
    assert scored["mean"]["muc.f1"] == pytest.approx(sum(f1s) / 3)
    record = json.loads((tmp_path / "r.json").read_text())["metrics"]
    assert record["muc.f1"] == pytest.approx(scored["mean"]["muc.f1"]) and record["fold2.muc.f1"] == f1s[1]
    status, _, err = run(capsys, *score, "--folds", "5")
    assert status == 1 and "--folds 5: cannot deal 3 documents into 5 folds" in err
