"""Re-keying at scale: a text-free release restored from a notes table whose ids are all replaced; prints JSON.

Generates ``--notes`` synthetic SHAC-layout notes (``benchmarks.sdoh_scorer.generate``), releases ``sdoh`` and its
text-free variant, then writes an OMOP-layout ``NOTE.csv`` of the notes under new random ids, ``--removed`` of
them left out and ``--repeated`` given twice (under two ids); with ``--drift`` every note is a drifted copy
(``benchmarks/perturb.py``: CRLF line ends, a sentence inserted in 10%, a word of a span changed in 2%, 1% cut
in half). Reported: documents mapped (share of all, and of the findable ones: in the table once, their text
no other document's), wrong maps (mapped to a note that is not the document's),
unmapped documents named (removed, ambiguous, not found), by evidence; the time of reading the table and
matching beside the physical floor of reading it and hashing every note once, and of the whole
``rehydrate --re-key``.

    python benchmarks/rekey.py [--notes 4031] [--removed 0.01] [--repeated 0.01] [--seed 7] [--drift]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")

from benchmarks.perturb import drift, perturb_documents, span_ranges  # noqa: E402
from benchmarks.reanchor import released_shac  # noqa: E402
from clinical_corpora.builders.plugins import load_plugins  # noqa: E402
from clinical_corpora.builders.rehydrate.documents import opened_text_free  # noqa: E402
from clinical_corpora.builders.rehydrate.rekey import read_notes_table, rekey  # noqa: E402
from clinical_corpora.builders.rehydrate.request import RehydrateRequest  # noqa: E402
from clinical_corpora.builders.rehydrate.run import rehydrate_rekeyed, source_texts  # noqa: E402
from clinical_corpora.builders.text_free.anchors import read_anchors  # noqa: E402
from clinical_corpora.core.locators import text_sha256  # noqa: E402
from clinical_corpora.core.release_records import ANCHORS_FILE  # noqa: E402


def notes_table(path: Path, texts: dict[str, str], shared: set[str], args: argparse.Namespace) -> dict[str, str]:
    """Write the OMOP-layout table; the true new id of each findable document (locator → note id): in the table
    once, and not in ``shared`` (documents whose text in the release is another document's too)."""
    rng = random.Random(args.seed)
    locators = sorted(texts)
    removed = set(rng.sample(locators, round(len(locators) * args.removed)))
    kept = [locator for locator in locators if locator not in removed]
    repeated = set(rng.sample(kept, round(len(locators) * args.repeated)))
    ids = rng.sample(range(10**8, 10**9), len(kept) + len(repeated))
    truth = dict(zip(kept, map(str, ids), strict=False))
    rows = [(truth[locator], texts[locator]) for locator in kept]
    rows += [
        (str(note_id), texts[locator]) for locator, note_id in zip(sorted(repeated), ids[len(kept) :], strict=True)
    ]
    rng.shuffle(rows)
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(("note_id", "person_id", "note_text"))
        writer.writerows((note_id, "1", text) for note_id, text in rows)
    return {locator: truth[locator] for locator in kept if locator not in repeated and locator not in shared}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=4031)
    parser.add_argument("--removed", type=float, default=0.01)
    parser.add_argument("--repeated", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--drift", action="store_true", help="every note a drifted copy (benchmarks/perturb.py)")
    args = parser.parse_args()
    load_plugins()
    with tempfile.TemporaryDirectory(prefix="bench_rekey_") as folder_name:
        work = Path(folder_name)
        shac, _, text_free = released_shac(work, args.notes, args.seed)
        texts = source_texts(text_free, {"shac": shac})
        counts = Counter(texts.values())
        shared = {locator for locator, text in texts.items() if counts[text] > 1}
        if args.drift:
            drifted = perturb_documents(texts, span_ranges(text_free, texts), 1.0, args.seed, drift)
            texts = {**texts, **{locator: change.text for locator, change in drifted.items()}}
        truth = notes_table(work / "NOTE.csv", texts, shared, args)

        started = time.perf_counter()
        table = read_notes_table(work / "NOTE.csv", None, None)
        floor = [text_sha256(text) for text in table.notes.values()]
        floor_seconds = time.perf_counter() - started
        started = time.perf_counter()
        wanted = opened_text_free(text_free).view.source_documents(["sdoh"])
        anchors = read_anchors(text_free / ANCHORS_FILE, wanted)
        rekey(wanted, anchors, read_notes_table(work / "NOTE.csv", None, None))
        matching_seconds = time.perf_counter() - started
        started = time.perf_counter()
        done = rehydrate_rekeyed(RehydrateRequest(text_free, work / "out"), table)
        seconds = time.perf_counter() - started
        mapped = done.rekeyed.mapped
        wrong = sum(1 for locator, (note, _) in mapped.items() if truth.get(locator) != note)
        print(
            json.dumps(
                {
                    "documents": len(texts),
                    "notes_in_table": len(floor),
                    "mapped": len(mapped),
                    "mapped_share": round(len(mapped) / len(texts), 4),
                    "mapped_share_of_findable": round(len(mapped) / len(truth), 4),
                    "wrong_maps": wrong,
                    "unmapped_named": len(done.rekeyed.unmapped),
                    "by_evidence": Counter(evidence.split(":")[0] for _, evidence in mapped.values()),
                    "unmapped_by_reason": Counter(why.split(":")[0] for why in done.rekeyed.unmapped.values()),
                    "status": done.outcome.status,
                    "release_documents_sharing_their_text": len(shared),
                    "read_and_match_seconds": round(matching_seconds, 3),
                    "floor_read_and_hash_seconds": round(floor_seconds, 3),
                    "matching_vs_floor": round(matching_seconds / floor_seconds, 1),
                    "rekey_and_rehydrate_seconds": round(seconds, 3),
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
