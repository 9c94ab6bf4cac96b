"""Benchmark: read and score a synthetic SHAC-sized-and-larger BRAT corpus (JSON out).

Generates ``--notes`` synthetic social-history notes (gold) and perturbed predictions in a
temporary folder, then measures, each phase in a fresh process so peak RSS is its own:

- ``read``: ``iter_brat_folder`` over the gold folder (notes/s; the reading half of a build);
- ``score``: ``clinical_corpora.corpora.sdoh.scoring.score_folders`` (note pairs/s, streaming), in one
  process and with ``workers=2`` (the machine's two cores);
- ``naive``: the baseline — load both corpora into memory, then align with all-pairs loops,
  character-set overlaps and pop-the-closest min_dist, as a literal reading of the rules would.

Both scorers must produce the same table (``agree``). Targets: >= 2,000 notes/s read,
>= 5,000 note pairs/s scored, peak RSS <= 1 GB.

    python benchmarks/sdoh_scorer.py --notes 50000
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from clinical_corpora.builders.sources.brat.annotations import Attribute, BratDocument, Event, TextBound
from clinical_corpora.builders.sources.brat.standoff import iter_brat_folder, write_brat
from clinical_corpora.corpora.sdoh.scoring import events_from_brat, score_folders
from clinical_corpora.validation.metrics.sdoh import (
    LABELED_ARGUMENTS,
    NOT_APPLICABLE,
    TRIGGER,
    Counts,
    ScoringCriteria,
    SdohEvent,
)

# Sentence templates: (event type, [(text, annotations)]); "trigger" marks the trigger span,
# (type, value) an argument; "{n}" is replaced by a random number.
SENTENCES = [
    (
        "Alcohol",
        [
            ("Drinks", ["trigger", ("StatusTime", "current")]),
            (" ", []),
            ("{n} beers", [("Amount", None)]),
            (" ", []),
            ("daily", [("Frequency", None)]),
        ],
    ),
    ("Alcohol", [("Denies", [("StatusTime", "none")]), (" ", []), ("EtOH", ["trigger"])]),
    (
        "Tobacco",
        [
            ("Former", [("StatusTime", "past")]),
            (" ", []),
            ("smoker", ["trigger"]),
            (", ", []),
            ("{n} ppd", [("Amount", None)]),
            (", quit ", []),
            ("{n} years ago", [("History", None)]),
        ],
    ),
    (
        "Drug",
        [
            ("Recent", [("StatusTime", "current")]),
            (" ", []),
            ("cocaine", ["trigger"]),
            (" ", []),
            ("use", []),
        ],
    ),
    (
        "Drug",
        [
            ("Former", [("StatusTime", "past")]),
            (" ", []),
            ("IV", [("Method", None)]),
            (" ", []),
            ("heroin", ["trigger", ("Type", None)]),
            (" use for ", []),
            ("{n} years", [("Duration", None)]),
        ],
    ),
    (
        "Employment",
        [
            ("Works", ["trigger", ("StatusEmploy", "employed")]),
            (" as a ", []),
            ("nurse", [("Type", None)]),
        ],
    ),
    (
        "Employment",
        [
            ("Retired", ["trigger", ("StatusEmploy", "retired")]),
            (" since ", []),
            ("{n} years ago", [("History", None)]),
        ],
    ),
    (
        "LivingStatus",
        [
            ("Lives", ["trigger", ("StatusTime", "current")]),
            (" ", []),
            ("with her husband", [("TypeLiving", "with_family")]),
        ],
    ),
    (
        "LivingStatus",
        [
            ("Lived", ["trigger", ("StatusTime", "past")]),
            (" ", []),
            ("alone", [("TypeLiving", "alone")]),
            (" for ", []),
            ("{n} months", [("Duration", None)]),
        ],
    ),
]
VALUE_ATTRIBUTE = {"StatusTime": "StatusTimeVal", "StatusEmploy": "StatusEmployVal",
                   "TypeLiving": "TypeLivingVal"}  # fmt: skip
SUBTYPE_SWAP = {"current": "past", "past": "none", "none": "current", "employed": "unemployed",
                "retired": "employed", "with_family": "alone", "alone": "with_others"}  # fmt: skip


def synthetic_note(rng: random.Random) -> tuple[str, list[tuple[str, tuple[int, int], list]]]:
    """Note text and its events as (type, trigger span, [(arg type, span, value)])."""
    text = "SOCIAL HISTORY: "
    events = []
    for _ in range(rng.randint(3, 7)):
        event_type, pieces = rng.choice(SENTENCES)
        trigger, arguments = (0, 0), []
        for piece, marks in pieces:
            piece = piece.replace("{n}", str(rng.randint(1, 40)))
            span = (len(text), len(text) + len(piece))
            text += piece
            for mark in marks:
                if mark == "trigger":
                    trigger = span
                else:
                    arguments.append((mark[0], span, mark[1]))
        text += ". "
        events.append((event_type, trigger, arguments))
    return text + "\n", events


def perturbed(rng: random.Random, text: str, events: list) -> list:
    """Prediction-like copy: longer trigger and argument spans, values on the trigger span,
    swapped subtypes, dropped arguments and events, duplicated events."""
    predicted = []
    for event_type, (start, end), arguments in events:
        roll = rng.random()
        if roll < 0.05:
            continue
        if roll < 0.15:
            end = min(len(text) - 1, end + 4)
        kept = []
        for argument_type, span, value in arguments:
            if rng.random() < 0.07:
                continue
            if value is not None and rng.random() < 0.1:
                value = SUBTYPE_SWAP.get(value, value)
            if rng.random() < 0.1:
                span = (span[0], min(len(text) - 1, span[1] + 3))
            elif value is not None and rng.random() < 0.1:
                span = (start, end)
            kept.append((argument_type, span, value))
        predicted.append((event_type, (start, end), kept))
    if events and rng.random() < 0.1:
        predicted.append(rng.choice(events))
    return predicted


def to_brat(text: str, events: list) -> BratDocument:
    textbounds, brat_events, attributes = [], [], []

    def add_textbound(type_: str, span: tuple[int, int]) -> str:
        textbound = TextBound.from_offsets(f"T{len(textbounds) + 1}", type_, (span,), text)
        textbounds.append(textbound)
        return textbound.id

    for event_type, trigger, arguments in events:
        trigger_id = add_textbound(event_type, trigger)
        roles = []
        for argument_type, span, value in arguments:
            argument_id = add_textbound(argument_type, span)
            role = "Status" if argument_type.startswith("Status") else argument_type
            roles.append((role, argument_id))
            if value is not None:
                name = VALUE_ATTRIBUTE[argument_type]
                attributes.append(Attribute(f"A{len(attributes) + 1}", name, argument_id, value))
        brat_events.append(Event(f"E{len(brat_events) + 1}", event_type, trigger_id, tuple(roles)))
    return BratDocument(tuple(textbounds), tuple(brat_events), tuple(attributes))


def generate(root: Path, notes: int, seed: int) -> None:
    rng = random.Random(seed)
    for number in range(notes):
        split = ("train", "dev", "test")[number % 3]
        folder = f"{split}/{('mimic', 'uw')[number % 2]}"
        text, events = synthetic_note(rng)
        for side, side_events in (("gold", events), ("pred", perturbed(rng, text, events))):
            base = root / side / folder / f"{number:06d}"
            base.parent.mkdir(parents=True, exist_ok=True)
            base.with_suffix(".txt").write_text(text, encoding="utf-8")
            base.with_suffix(".ann").write_text(write_brat(to_brat(text, side_events)), "utf-8")


# --- naive baseline --------------------------------------------------------------------


def _shared_characters(a, b) -> int:
    return len(set(range(a.start, a.end)) & set(range(b.start, b.end)))


def _naive_value(gold, predicted, criterion: str, with_subtype: bool, tokenizer) -> int:
    if gold.type != predicted.type or (with_subtype and gold.subtype != predicted.subtype):
        return 0
    shared = _shared_characters(gold, predicted)
    if criterion == "exact":
        return int((gold.start, gold.end) == (predicted.start, predicted.end))
    if criterion == "overlap":
        return int(shared > 0)
    if criterion == "partial":
        if not shared:
            return 0
        a = [t.text for t in tokenizer(" ".join(gold.text.split()))]
        b = [t.text for t in tokenizer(" ".join(predicted.text.split()))]
        return difflib.SequenceMatcher(None, a, b).find_longest_match(0, len(a), 0, len(b)).size
    return 1  # label: subtypes already equal


def _naive_event_counts(events: list[SdohEvent], span_criterion: str, tokenizer) -> Counter:
    counter: Counter = Counter()
    for event in events:
        subtype = event.trigger.subtype or NOT_APPLICABLE
        counter[(event.trigger.type, TRIGGER, subtype)] += 1
        for argument in event.arguments:
            count = 1
            if span_criterion == "partial" and argument.type not in LABELED_ARGUMENTS:
                count = len(tokenizer(" ".join(argument.text.split())))
            counter[(event.trigger.type, argument.type, argument.subtype or NOT_APPLICABLE)] += count
    return counter


def naive_document(gold: list[SdohEvent], predicted: list[SdohEvent], criteria: dict, tokenizer) -> Counts:
    matched_total: Counter = Counter()
    aligned = []
    if criteria["score_trig"] == "min_dist":

        def centre(event: SdohEvent) -> float:
            return (event.trigger.start + event.trigger.end - 1) / 2

        distances = sorted(
            (abs(centre(g) - centre(p)), i, j)
            for i, g in enumerate(gold)
            for j, p in enumerate(predicted)
            if g.trigger.type == p.trigger.type
        )
        while distances:
            _, i, j = distances.pop(0)
            aligned.append((i, j))
            distances = [d for d in distances if d[1] != i and d[2] != j]
    else:
        used_gold, used_predicted = set(), set()
        for i, g in enumerate(gold):
            for j, p in enumerate(predicted):
                if (_naive_value(g.trigger, p.trigger, criteria["score_trig"], False, tokenizer)
                        and i not in used_gold and j not in used_predicted):  # fmt: skip
                    used_gold.add(i)
                    used_predicted.add(j)
                    aligned.append((i, j))
    for i, j in aligned:
        g, p = gold[i], predicted[j]
        matched: Counter = Counter()
        matched[(g.trigger.type, TRIGGER, g.trigger.subtype or NOT_APPLICABLE)] += 1
        used_gold, used_predicted = set(), set()
        for a, gold_argument in enumerate(g.arguments):
            for b, predicted_argument in enumerate(p.arguments):
                free = a not in used_gold and b not in used_predicted
                if gold_argument.type != predicted_argument.type:
                    continue
                if gold_argument.type in LABELED_ARGUMENTS:
                    value = _naive_value(gold_argument, predicted_argument,
                                         criteria["score_labeled"], True, tokenizer)  # fmt: skip
                else:
                    value = _naive_value(gold_argument, predicted_argument,
                                         criteria["score_span"], False, tokenizer)  # fmt: skip
                    free = free or criteria["score_span"] == "partial"
                if value > 0 and free:
                    used_gold.add(a)
                    used_predicted.add(b)
                    key = (
                        g.trigger.type,
                        gold_argument.type,
                        gold_argument.subtype or NOT_APPLICABLE,
                    )
                    matched[key] += value
        matched_total += matched
    return Counts(_naive_event_counts(gold, criteria["score_span"], tokenizer),
                  _naive_event_counts(predicted, criteria["score_span"], tokenizer),
                  matched_total)  # fmt: skip


def naive_score(gold_dir: Path, pred_dir: Path, criteria: dict) -> list:
    tokenizer = None
    if criteria["score_span"] == "partial":
        import spacy

        tokenizer = spacy.blank("en").tokenizer
    gold = {doc_id: events_from_brat(doc, doc_id) for doc_id, _, doc in iter_brat_folder(gold_dir)}
    predicted = {doc_id: events_from_brat(doc, doc_id) for doc_id, _, doc in iter_brat_folder(pred_dir)}
    assert sorted(gold) == sorted(predicted)
    total = Counts()
    for doc_id in gold:
        total.add(naive_document(gold[doc_id], predicted[doc_id], criteria, tokenizer))
    return total.summary()


# --- phases ------------------------------------------------------------------------------


def run_phase(phase: str, gold: Path, pred: Path, criteria: dict, workers: int) -> dict:
    """Run one phase in this process; wall and CPU seconds (worker processes included)."""
    cpu_start = _cpu_seconds()
    start = time.perf_counter()
    if phase == "read":
        result: dict = {"notes": sum(1 for _ in iter_brat_folder(gold))}
    elif phase == "score":
        chosen = ScoringCriteria(criteria["score_trig"], criteria["score_span"], criteria["score_labeled"])
        rows = score_folders(gold, pred, chosen, workers=workers)
        result = {"rows": [r.csv_fields()[:6] for r in rows]}
    else:
        result = {"rows": [r.csv_fields()[:6] for r in naive_score(gold, pred, criteria)]}
    result["seconds"] = time.perf_counter() - start
    result["cpu_seconds"] = _cpu_seconds() - cpu_start
    result["peak_rss_mb"] = max(resource.getrusage(who).ru_maxrss for who in _WHO) / 1024
    return result


_WHO = (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)


def _cpu_seconds() -> float:
    return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime for who in _WHO)


def measured(phase: str, gold: Path, pred: Path, criteria: dict, repeat: int, workers: int = 1) -> dict:
    """Fastest of ``repeat`` runs of a phase, each in a fresh process (its own peak RSS)."""
    command = [sys.executable, __file__, "--phase", phase, "--gold", str(gold), "--pred", str(pred),
               "--workers", str(workers)]  # fmt: skip
    for name, value in criteria.items():
        command += [f"--{name.replace('_', '-')}", value]
    runs = []
    for _ in range(repeat):
        completed = subprocess.run(command, capture_output=True, text=True)
        if completed.returncode:
            sys.exit(f"phase {phase} failed:\n{completed.stderr}")
        runs.append(json.loads(completed.stdout))
    best = min(runs, key=lambda run: run["seconds"])
    best["cpu_seconds"] = min(run["cpu_seconds"] for run in runs)
    return best


def rates(run: dict, items: int, name: str) -> dict:
    return {
        f"{name}_per_s": round(items / run["seconds"]),
        f"{name}_per_cpu_s": round(items / run["cpu_seconds"]),
        "peak_rss_mb": round(run["peak_rss_mb"], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=2, help="runs per phase; the fastest counts")
    parser.add_argument("--score-trig", default="overlap")
    parser.add_argument("--score-span", default="exact")
    parser.add_argument("--score-labeled", default="label")
    parser.add_argument("--skip-naive", action="store_true", help="skip the slow baseline")
    parser.add_argument("--phase", choices=("read", "score", "naive"), help=argparse.SUPPRESS)
    parser.add_argument("--gold", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--pred", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    criteria = {"score_trig": args.score_trig, "score_span": args.score_span,
                "score_labeled": args.score_labeled}  # fmt: skip
    if args.phase:
        print(json.dumps(run_phase(args.phase, args.gold, args.pred, criteria, args.workers)))
        return
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="sdoh_bench_") as folder:
        root = Path(folder)
        start = time.perf_counter()
        generate(root, args.notes, args.seed)
        generate_seconds = time.perf_counter() - start
        gold, pred = root / "gold", root / "pred"
        read = measured("read", gold, pred, criteria, args.repeat)
        score = measured("score", gold, pred, criteria, args.repeat)
        parallel = measured("score", gold, pred, criteria, args.repeat, workers=2)
        naive = None if args.skip_naive else measured("naive", gold, pred, criteria, args.repeat)
    report = {
        "notes": args.notes,
        "criteria": criteria,
        "load_average_1min_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "generate_seconds": round(generate_seconds, 1),
        "read": rates(read, read["notes"], "notes"),
        "score": rates(score, args.notes, "pairs"),
        "score_2_workers": rates(parallel, args.notes, "pairs"),
        "overall_nt_np_tp": score["rows"][0][3:6],
    }
    if naive is not None:
        report |= {
            "naive_load_all_then_all_pairs": rates(naive, args.notes, "pairs"),
            "speedup_vs_naive": round(naive["seconds"] / score["seconds"], 2),
            "cpu_speedup_vs_naive": round(naive["cpu_seconds"] / score["cpu_seconds"], 2),
            "memory_ratio_naive_over_streaming": round(naive["peak_rss_mb"] / score["peak_rss_mb"], 2),
            "agree": naive["rows"] == score["rows"] == parallel["rows"],
        }
    report["targets_met"] = {
        "read_notes_per_s>=2000": report["read"]["notes_per_s"] >= 2000,
        "score_pairs_per_s>=5000": report["score"]["pairs_per_s"] >= 5000,
        "score_2_workers_pairs_per_s>=5000": report["score_2_workers"]["pairs_per_s"] >= 5000,
        "peak_rss<=1GB": max(read["peak_rss_mb"], score["peak_rss_mb"], parallel["peak_rss_mb"]) <= 1024,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
