"""Re-anchoring at scale: what it recovers from perturbed copies of the sources and what it costs, beside a
strict rehydration of the same release in the same run; prints JSON.

Generates ``--notes`` synthetic SHAC-layout notes (``benchmarks.sdoh_scorer.generate``), releases ``sdoh``
from them with its text-free variant (anchors included), then:

- ``strict``: ``rehydrate`` from the unchanged notes (byte-identical, checked by the command);
- ``re_anchor``: ``rehydrate --re-anchor`` from a copy of the notes in which ``--fraction`` of them were
  perturbed on disk (``benchmarks/perturb.py``: a character re-encoded inside a span, characters inserted or
  deleted outside spans, trailing spaces, CRLF line ends, a BOM; with ``--drift``, a drifted copy instead:
  CRLF line ends, an 80-character sentence inserted, a word of a span changed, the note truncated), scored
  against the full release: every licensed string other than whole notes recovered (the same text), lost and
  named, in a record left out and named, wrong, or missing unnamed; ``positions``: relocated spans of the
  main config at the place the perturbation moved them to (``misplaced`` must be 0).

``reanchor_cost_per_document_ms`` is the extra time of the re-anchored run per perturbed note; the anchors'
bytes per document and their share of the text-free release are what the evidence costs to ship.

``--context N`` puts N characters of unannotated clinical text before each note (the rest of a discharge
note around its annotated social history), so changes fall where no span is as often as in a real note.

    python benchmarks/reanchor.py [--notes 2000] [--fraction 0.1] [--seed 7] [--context 0] [--drift]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")

import pyarrow.parquet as pq  # noqa: E402

from benchmarks.perturb import drift, perturb, perturb_documents, score, span_ranges  # noqa: E402
from benchmarks.sdoh_scorer import generate  # noqa: E402
from clinical_corpora.builders.contract.base import make_builder  # noqa: E402
from clinical_corpora.builders.plugins import find_corpus, load_plugins  # noqa: E402
from clinical_corpora.builders.rehydrate.request import RehydrateRequest  # noqa: E402
from clinical_corpora.builders.rehydrate.run import rehydrate, source_texts  # noqa: E402
from clinical_corpora.builders.release.inputs import resolve_sources  # noqa: E402
from clinical_corpora.builders.release.pipeline import run  # noqa: E402
from clinical_corpora.builders.release.request import ReleaseRequest  # noqa: E402
from clinical_corpora.builders.text_free.release import release_text_free  # noqa: E402
from clinical_corpora.core.locators import split_locator  # noqa: E402
from clinical_corpora.core.release_records import ANCHORS_FILE

CONTEXT_SENTENCES = [
    "Patient admitted with chest pain, troponin negative x2.",
    "Echocardiogram showed preserved ejection fraction.",
    "Started on aspirin and atorvastatin; tolerated well.",
    "No events on telemetry overnight.",
    "Discharged home in stable condition with follow-up in two weeks.",
    "Labs notable for mild anemia, hemoglobin 10.9.",
]
_TEXT_BOUND = re.compile(r"^(T\d+\t\S+ )([\d ;]+)(\t.*)$")


def add_context(shac: Path, characters: int, rng: random.Random) -> None:
    """Put ``characters`` of unannotated text before each note and move its BRAT offsets after it."""
    for note in sorted(shac.rglob("*.txt")):
        sentences: list[str] = []
        while sum(len(sentence) + 1 for sentence in sentences) < characters:
            sentences.append(rng.choice(CONTEXT_SENTENCES))
        prefix = "\n".join(sentences) + "\n\n"
        note.write_text(prefix + note.read_text(encoding="utf-8"), encoding="utf-8")
        annotations = note.with_suffix(".ann")
        lines = []
        for line in annotations.read_text(encoding="utf-8").splitlines():
            match = _TEXT_BOUND.match(line)
            if match:
                moved = ";".join(
                    " ".join(str(int(number) + len(prefix)) for number in part.split())
                    for part in match.group(2).split(";")
                )
                line = f"{match.group(1)}{moved}{match.group(3)}"
            lines.append(line)
        annotations.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def positions(reanchored: Path, full: Path, moved: dict[str, object]) -> dict[str, int]:
    """Relocated event arguments of the ``sdoh`` config: where the perturbation put their first character."""
    counts = {"checked": 0, "misplaced": 0}
    originals = {row["id"]: row for row in pq.read_table(full / "data" / "sdoh").to_pylist()}
    for row in pq.read_table(reanchored / "data" / "sdoh").to_pylist():
        perturbed = moved.get(f"shac:{row['id']}.txt")
        if perturbed is None:
            continue
        for event, original in zip(row["events"], originals[row["id"]]["events"], strict=True):
            for argument, before in zip(event["arguments"], original["arguments"], strict=True):
                if argument["start"] is None:
                    continue
                counts["checked"] += 1
                counts["misplaced"] += argument["start"] != int(perturbed.moved[before["start"]])  # type: ignore[attr-defined]
    return counts


def released_shac(work: Path, notes: int, seed: int, context: int = 0) -> tuple[Path, Path, Path]:
    """``notes`` synthetic SHAC-layout notes (``context`` characters before each) under ``work``, released as
    ``sdoh`` and text-free: (the notes' folder, the full release, the text-free release)."""
    corpus = find_corpus("sdoh")
    generate(work / "generated", notes, seed)
    shac = work / "generated" / "gold"
    if context:
        add_context(shac, context, random.Random(seed))
    full = run(ReleaseRequest(corpus=corpus, out=work / "releases", sources={"shac": shac})).folder
    return shac, full, release_text_free(corpus, full, resolve_sources(corpus, {"shac": shac})).folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--drift",
        action="store_true",
        help="perturb as a drifted copy instead (benchmarks/perturb.py drift: CRLF everywhere, a sentence inserted "
        "in 10%%, a word of a span changed in 2%%, truncated in 1%%); use with --fraction 1",
    )
    parser.add_argument(
        "--context",
        type=int,
        default=0,
        help="characters of unannotated text put before each note (a discharge note around its social history)",
    )
    args = parser.parse_args()
    load_plugins()
    with tempfile.TemporaryDirectory(prefix="bench_reanchor_") as folder_name:
        work = Path(folder_name)
        shac, full, text_free = released_shac(work, args.notes, args.seed, args.context)
        documents = source_texts(text_free, {"shac": shac})
        ranges = span_ranges(text_free, documents)
        perturbed = perturb_documents(documents, ranges, args.fraction, args.seed, drift if args.drift else perturb)
        copy = Path(shutil.copytree(shac, work / "perturbed"))
        for locator, change in perturbed.items():
            (copy / split_locator(locator)[1]).write_bytes(change.text.encode("utf-8"))

        started = time.perf_counter()
        strict = rehydrate(RehydrateRequest(text_free, work / "strict", sources={"shac": shac}))
        strict_seconds = time.perf_counter() - started
        started = time.perf_counter()
        reanchored = rehydrate(RehydrateRequest(text_free, work / "reanchored", sources={"shac": copy}, re_anchor=True))
        reanchor_seconds = time.perf_counter() - started
        assert strict.status in ("released", "unchanged") and reanchored.reanchored is not None

        models = make_builder(find_corpus("sdoh")).CONFIGS
        scored = score(full, text_free, reanchored.folder, models, documents, perturbed)
        anchors = (text_free / ANCHORS_FILE).stat().st_size
        text_free_bytes = _bytes(text_free)
        characters = sum(len(text) for text in documents.values())
        print(
            json.dumps(
                {
                    "notes": len(documents),
                    "context_characters": args.context,
                    "perturbed": len(perturbed),
                    "characters_per_note": round(characters / len(documents), 1),
                    "spans": scored["spans"],
                    "recovered": scored["recovered"],
                    "recovered_share": round(scored["recovered"] / scored["spans"], 4),
                    "changed": scored["changed"],
                    "recovered_share_of_unchanged": round(
                        scored["recovered"] / (scored["spans"] - scored["changed"]), 4
                    ),
                    "lost_named": scored["lost_named"],
                    "left_out_named": scored["left_out_named"],
                    "wrong": scored["wrong"],
                    "unnamed": scored["unnamed"],
                    "positions": positions(reanchored.folder, full, perturbed),  # type: ignore[arg-type]
                    "strings": reanchored.reanchored.summary()["strings"],
                    "strict_seconds": round(strict_seconds, 3),
                    "re_anchor_seconds": round(reanchor_seconds, 3),
                    "re_anchor_vs_strict": round(reanchor_seconds / strict_seconds, 2),
                    "reanchor_cost_per_document_ms": round(
                        1000 * (reanchor_seconds - strict_seconds) / max(len(perturbed), 1), 2
                    ),
                    "strict_per_document_ms": round(1000 * strict_seconds / len(documents), 3),
                    "anchors_bytes": anchors,
                    "anchors_bytes_per_document": round(anchors / len(documents), 1),
                    "anchors_bytes_per_1000_characters": round(1000 * anchors / characters, 1),
                    "anchors_share_of_text_free": round(anchors / text_free_bytes, 3),
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
