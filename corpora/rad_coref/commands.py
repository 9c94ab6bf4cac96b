"""Score coreference chains: ``clincorp score coref KEY RESPONSE``.

KEY and RESPONSE are both simple JSON (``{"document": [[mention id, ...], ...]}``, ``.json``) or
both CoNLL-2012 files (any other suffix; any number of columns, the coreference column last;
mentions are token spans; documents are matched by their exact ``#begin document`` text, as the
reference scorer matches them). Prints MUC, B³, CEAF-m, CEAF-e, BLANC and LEA recall, precision
and F1 and the CoNLL F1, summed over documents as the CoNLL-2012 reference scorer sums them;
``--json`` prints them as JSON. Two documented deviations from the reference are opt-in:
``--normalise-doc-names`` and ``--dedupe-twinless``. KEY may also be a release folder (or its chain config) of
any corpus with a ``conll2012`` export: it is scored as that export (singletons included), so RESPONSE is a
CoNLL-2012 file (``--split`` scores one split of the release).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from collections.abc import Hashable, Sequence
from pathlib import Path

from clinical_corpora.builders.contract.release_view import GivenRelease, given_release
from clinical_corpora.builders.contract.scored import report_scores
from clinical_corpora.builders.exporters.conll2012 import Conll2012Export, DroppedMention, iter_documents
from clinical_corpora.builders.sources.conll2012 import read_conll2012_chains, write_conll2012
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.registry import exporters
from clinical_corpora.core.splits import cross_validation_folds
from clinical_corpora.validation.metrics.coref import (
    CONLL_METRICS,
    METRIC_NAMES,
    Score,
    load_chains_json,
    reported_metrics,
    score_documents_all,
)
from clinical_corpora.validation.metrics.coref_align import repeated_key_mentions

Documents = dict[str, list[Sequence[Hashable]]]
logger = logging.getLogger(__name__)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "key",
        type=Path,
        help="gold chains: .json (document → chains), a CoNLL-2012 file, or a release (or its chain config) "
        "of a corpus with a conll2012 export",
    )
    parser.add_argument("response", type=Path, help="system chains, in the key's format")
    parser.add_argument(
        "--metrics",
        nargs="+",
        choices=METRIC_NAMES,
        default=list(METRIC_NAMES),
        help="metrics to report (default: all six)",
    )
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--split", help="with a release as KEY: score this split only")
    parser.add_argument(
        "--folds",
        type=int,
        help="score the key's documents (rad_coref: patients) in K cross-validation folds, as Datta et al. 2022 "
        "evaluate (5 folds at patient level): each fold's scores and their mean; documents are dealt into folds "
        "in a fixed shuffle of their sorted ids, so the folds are the same on every run",
    )
    parser.add_argument(
        "--normalise-doc-names",
        action="store_true",
        help="CoNLL-2012: match documents by (name); part NNN, so 'part 0' = 'part 000' and trailing "
        "spaces do not count (scorer.pl matches the header text exactly)",
    )
    parser.add_argument(
        "--dedupe-twinless",
        action="store_true",
        help="score a response mention absent from the key once even when it sits in several chains "
        "(scorer.pl counts every occurrence)",
    )


def read_chains(path: Path, *, normalise_names: bool = False) -> Documents:
    """Documents and their chains from a simple JSON or a CoNLL-2012 file (chosen by suffix)."""
    if not path.is_file():
        raise ClincorpError(f"{path}: no such file")
    if path.suffix.lower() == ".json":
        return {doc: [list(chain) for chain in chains] for doc, chains in load_chains_json(path).items()}
    documents = read_conll2012_chains(path, normalise_names=normalise_names)
    return {doc: list(chains) for doc, chains in documents.items()}


def release_chains(path: Path | GivenRelease, split: str | None, *, normalise_names: bool = False) -> Documents | None:
    """The chains of a release (or its chain config) as its ``clincorp export conll2012`` file reads back;
    None when ``path`` is no release."""
    release = given_release(path, split, role="KEY")
    if release is None:
        return None
    corpus = release.corpus
    export = exporters.get(("conll2012", corpus)).load() if ("conll2012", corpus) in exporters.keys() else None
    if not isinstance(export, Conll2012Export) or release.config not in (None, export.layout.config):
        raise ClincorpError(
            f"{release.view.folder} is not a release (or chain config) of a corpus with a conll2012 export"
        )
    view = release.view
    splits = release.splits(export.layout.config, split)
    dropped: list[DroppedMention] = []
    with tempfile.TemporaryDirectory(prefix="clincorp-coref-key-") as folder:
        key = Path(folder) / "key.conll"
        documents = (d for name in splits for d in iter_documents(view, export.layout, name, True, dropped))
        try:
            write_conll2012(documents, key)
        except ValueError as error:  # a document the CoNLL-2012 format cannot hold, as the export says
            raise ClincorpError(f"{release.view.folder}: cannot score it as its conll2012 export: {error}") from error
        chains = read_chains(key, normalise_names=normalise_names)
    if dropped:
        listed = "; ".join(map(str, dropped[:3])) + (f"; and {len(dropped) - 3} more" if len(dropped) > 3 else "")
        lost = sum(not problem.merged for problem in dropped)
        print(
            f"KEY {path}: {lost} mention(s) CoNLL-2012 cannot hold are left out and {len(dropped) - lost} duplicate "
            f"mention(s) merged into another of their chain on the same tokens: {listed}",
            file=sys.stderr,
        )
    return chains


def chain_config(key: Path | GivenRelease) -> str | None:
    """The chain config scored when KEY is a release (its ``conll2012`` export's), else None."""
    if not isinstance(key, GivenRelease):
        return None
    export = exporters.get(("conll2012", key.corpus)).load()
    return export.layout.config if isinstance(export, Conll2012Export) else key.config


def check_mention_ids(key: Documents, response: Documents, path: Path) -> None:
    """A ClincorpError naming ``path``, the document and a response mention id whose type no key id has (an
    integer against string ids): ids are compared exactly, so no such mention could ever match."""
    key_types = {type(mention) for chains in key.values() for chain in chains for mention in chain}
    for document, chains in response.items():
        for chain in chains:
            for mention in chain:
                if key_types and type(mention) not in key_types:
                    kinds = " and ".join(sorted(_id_kind(kind) for kind in key_types))
                    raise ClincorpError(
                        f"{path} [document {document}]: mention id {mention!r} is {_id_kind(type(mention))}, the "
                        f"key's ids are {kinds}: ids are compared exactly (1 is not '1'), so it could never match"
                    )


def _id_kind(kind: type) -> str:
    return {int: "an integer", str: "a string"}.get(kind, kind.__name__)


MAX_REPEATS = 10
"""Repeated response mentions the CoNLL-2012 reference scorer tolerates before it refuses to score."""


def check_repeats(key: Documents, response: Documents, path: Path) -> None:
    """A warning naming each key mention the response holds more than once (in two chains, or twice in one):
    as the reference scorer, its first chain keeps it and later ones drop it; past :data:`MAX_REPEATS` a
    ClincorpError, since the reference then refuses to score ("Found too many repeated mentions")."""
    repeats = [
        (document, mention)
        for document, chains in response.items()
        for mention in repeated_key_mentions(key.get(document, ()), chains)
    ]
    for document, mention in repeats[:MAX_REPEATS]:
        logger.warning(
            "%s [document %s]: mention %r is in more than one response chain (or twice in one); its first chain "
            "keeps it, as the CoNLL-2012 reference scorer does",
            path,
            document,
            mention,
        )
    if len(repeats) > MAX_REPEATS:
        raise ClincorpError(
            f"{path}: {len(repeats)} key mentions are repeated in the response chains (more than {MAX_REPEATS}): the "
            "CoNLL-2012 reference scorer refuses to score such a response; put each mention in one chain"
        )


def score(
    key: Documents, response: Documents, metrics: list[str], *, dedupe_twinless: bool = False
) -> dict[str, Score]:
    """Scores by metric; malformed chains (a mention twice in the key, unknown documents) are errors."""
    try:
        return score_documents_all(
            key, response, dict.fromkeys([*metrics, *CONLL_METRICS]), dedupe_twinless=dedupe_twinless
        )
    except ValueError as error:
        raise ClincorpError(f"cannot score: {error}") from error


def report_folds(args: argparse.Namespace, key: Documents, response: Documents) -> int:
    """Each fold's metrics and their mean (``--folds K``), printed, and the mean (with each fold's, as
    ``fold<N>.<metric>``) kept for ``--record``."""
    try:
        folds = cross_validation_folds(key, args.folds)
    except ValueError as error:
        raise ClincorpError(f"--folds {args.folds}: {error} (the key's documents)") from None
    per_fold = [
        reported_metrics(
            score(
                {document: key[document] for document in fold},
                {document: response[document] for document in fold if document in response},
                args.metrics,
                dedupe_twinless=args.dedupe_twinless,
            )
        )
        for fold in folds
    ]
    mean = {name: sum(scores[name] for scores in per_fold) / len(per_fold) for name in per_fold[0]}
    each = {
        f"fold{number}.{name}": value for number, scores in enumerate(per_fold, 1) for name, value in scores.items()
    }
    report_scores(args, {**mean, **each}, chain_config(args.key))
    if args.json:
        listed = [{"documents": fold, **scores} for fold, scores in zip(folds, per_fold, strict=True)]
        print(json.dumps({"folds": listed, "mean": mean}, indent=2))
        return 0
    shown = [name for name in args.metrics if f"{name}.f1" in mean]
    print(f"{'fold':<6} {'documents':>9} " + " ".join(f"{name + ' f1':>10}" for name in shown) + f" {'conll f1':>9}")
    rows = [(str(n), len(fold), scores) for n, (fold, scores) in enumerate(zip(folds, per_fold, strict=True), 1)]
    for label, documents, scores in [*rows, ("mean", len(key), mean)]:
        values = " ".join(f"{100 * scores[f'{name}.f1']:10.2f}" for name in shown)
        print(f"{label:<6} {documents:>9} {values} {100 * scores['conll_f1']:9.2f}")
    return 0


def run(args: argparse.Namespace) -> int:
    key_json = isinstance(args.key, Path) and args.key.suffix.lower() == ".json"
    if key_json != (args.response.suffix.lower() == ".json"):
        raise ClincorpError("KEY and RESPONSE must have the same format (both .json or both CoNLL-2012)")
    key = release_chains(args.key, args.split, normalise_names=args.normalise_doc_names)
    if key is None:
        key = read_chains(args.key, normalise_names=args.normalise_doc_names)
    response = read_chains(args.response, normalise_names=args.normalise_doc_names)
    check_mention_ids(key, response, args.response)
    check_repeats(key, response, args.response)
    scores = score(key, response, args.metrics, dedupe_twinless=args.dedupe_twinless)
    if args.folds is not None:
        return report_folds(args, key, response)
    conll = sum(scores[name].f1 for name in CONLL_METRICS) / len(CONLL_METRICS)
    metrics = reported_metrics({name: scores[name] for name in args.metrics})
    report_scores(args, {**metrics, "conll_f1": conll}, chain_config(args.key))
    if args.json:
        print(json.dumps({**{name: scores[name]._asdict() for name in args.metrics}, "conll_f1": conll}, indent=2))
        return 0
    print(f"{'metric':<8} {'recall':>8} {'precision':>9} {'f1':>8}")
    for name in args.metrics:
        recall, precision, f1 = (100 * value for value in scores[name])
        print(f"{name:<8} {recall:8.2f} {precision:9.2f} {f1:8.2f}")
    print(f"{'conll':<8} {'':>8} {'':>9} {100 * conll:8.2f}")
    return 0
