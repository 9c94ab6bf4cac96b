"""Benchmark of the UMLS dictionary matcher at MRCONSO scale; prints JSON.

Generates a synthetic MRCONSO.RRF (15M rows at ``--scale 1``, ~2 GB, with the real files' mix of
languages, suppressed rows and concepts per semantic type) and MRSTY.RRF into a temporary folder,
then measures, each step in a fresh process so peak RSS is its own:

- index build from the RRF files (target ≤ 180 s, peak RSS ≤ 4 GB at full scale; the build runs in a
  child process, so peak RSS is the larger of the builder's and the loader's),
- the same call again, which must load the cached index,
- the naive baseline: ``pandas.read_csv`` of the whole MRCONSO (only the 4 needed columns), then
  filtering, without even building a dictionary,
- recogniser throughput on one core, tokens/s (target ≥ 200k): matching over given sentences
  (``clinical_corpora.builders.contract.text_units``), end to end including sentence splitting and tokenisation, and
  the builder's path (``find(text)``: tokenisation, and sentence splitting only where a match could cross a
  sentence boundary, checked to give the same entities), against the naive matcher that looks up every
  n-gram up to the longest key.

Usage: ``python benchmarks/entity_matcher.py [--scale 0.1] [--tokens 1000000] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ROWS_AT_FULL_SCALE = 15_000_000
ROWS_PER_CONCEPT = 4.3
MAPPED_TUIS = ["T047", "T184", "T033", "T121", "T061", "T059", "T060", "T191", "T037", "T034"]
OTHER_TUIS = ["T023", "T109", "T116", "T007", "T204", "T201", "T029", "T170", "T058", "T082"]
LANGUAGES = ["ENG"] * 60 + ["FRE"] * 6 + ["GER"] * 6 + ["SPA"] * 10 + ["DUT"] * 5 + ["JPN"] * 8 + ["POR"] * 5
SUPPRESS = ["N"] * 90 + ["O"] * 4 + ["E"] * 3 + ["Y"] * 3
SOURCES = [("SNOMEDCT_US", "PT"), ("MSH", "MH"), ("NCI", "SY"), ("MDR", "LLT"), ("LNC", "LN"), ("RXNORM", "IN")]
SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in ("a", "e", "i", "o", "u", "ar", "en", "is", "ol")]


def _vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    picks = rng.integers(0, len(SYLLABLES), size=(size, 4))
    lengths = rng.integers(2, 5, size=size)
    words = {"".join(SYLLABLES[i] for i in row[:n]) for row, n in zip(picks, lengths, strict=True)}
    return sorted(words)


def _padded(prefix: str, numbers: np.ndarray, width: int) -> pa.Array:
    """``f"{prefix}{number:0{width}d}"`` for each number, as an Arrow string array."""
    digits = pc.utf8_lpad(pc.cast(pa.array(numbers, pa.int64()), pa.string()), width, "0")
    return pc.binary_join_element_wise(prefix, digits, "")


def _write_lines(out: BinaryIO, *fields: pa.Array | str) -> None:
    """Write one ``|``-joined line per row (each field followed by ``|``, as in the RRF files)."""
    lines = pc.binary_join_element_wise(*fields, "\n", "|")
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32, count=len(lines) + 1, offset=lines.offset * 4)
    out.write(memoryview(lines.buffers()[2])[offsets[0] : offsets[-1]])


def generate_rrf(folder: Path, rows: int, seed: int = 0) -> dict[str, int]:
    """Write synthetic MRCONSO.RRF and MRSTY.RRF with ``rows`` MRCONSO rows, a million rows at a time in
    Arrow string kernels."""
    rng = np.random.default_rng(seed)
    vocabulary = pa.array(_vocabulary(300_000, rng))
    concepts = max(1, int(rows / ROWS_PER_CONCEPT))
    mapped = rng.random(concepts) < 0.45
    numbers = np.repeat(np.arange(concepts), 1 + (np.arange(concepts) % 5 == 0))
    second = np.r_[False, numbers[1:] == numbers[:-1]].astype(np.int64)  # k: the concept's second type
    tuis = pa.array(MAPPED_TUIS + OTHER_TUIS).take(pa.array((~mapped[numbers]) * 10 + (numbers + second * 3) % 10))
    with open(folder / "MRSTY.RRF", "wb") as out:
        atuis = pc.binary_join_element_wise(_padded("AT", numbers, 8), pc.cast(pa.array(second), pa.string()), "")
        _write_lines(
            out, _padded("C", numbers, 7), tuis, "A1.2", pc.binary_join_element_wise("Type ", tuis, ""), atuis, ""
        )
    written, chunk = 0, 1_000_000
    languages, suppressed = pa.array(LANGUAGES), pa.array(SUPPRESS)
    with open(folder / "MRCONSO.RRF", "wb") as out:
        while written < rows:
            size = min(chunk, rows - written)
            cuis = np.sort(rng.integers(0, concepts, size=size))
            word_ids = np.minimum(rng.zipf(1.3, size=(size, 6)) - 1, len(vocabulary) - 1)
            lengths = rng.choice([1, 2, 2, 3, 3, 3, 4, 4, 5, 6], size=size)
            lats = rng.integers(0, len(LANGUAGES), size=size)
            suppress = rng.integers(0, len(SUPPRESS), size=size)
            sources = rng.integers(0, len(SOURCES), size=size)
            columns = np.ascontiguousarray(word_ids.T)
            words = [vocabulary.take(pa.array(columns[j], mask=lengths <= j)) for j in range(6)]
            strings = pc.utf8_capitalize(pc.binary_join_element_wise(*words, " ", null_handling="skip"))
            row = np.arange(written, written + size)
            preferred = row % 3 == 0
            number = pc.cast(pa.array(row), pa.string())
            _write_lines(
                out,
                _padded("C", cuis, 7),
                languages.take(pa.array(lats)),
                pa.array(["S", "P"]).take(pa.array(preferred.astype(np.int8))),
                _padded("L", row, 7),
                "PF",
                _padded("S", row, 7),
                pa.array(["N", "Y"]).take(pa.array(preferred.astype(np.int8))),
                _padded("A", row, 8),
                "",
                number,
                "",
                pa.array([sab for sab, _ in SOURCES]).take(pa.array(sources)),
                pa.array([tty for _, tty in SOURCES]).take(pa.array(sources)),
                number,
                strings,
                "0",
                suppressed.take(pa.array(suppress)),
                "",
            )
            written += size
    return {"mrconso_rows": rows, "concepts": concepts, "mrconso_bytes": (folder / "MRCONSO.RRF").stat().st_size}


def _peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM: unlike ru_maxrss, not inherited from the parent)."""
    status = Path("/proc/self/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")) / 1024


def _child_index(folder: Path) -> dict[str, float]:
    from clinical_corpora.corpora.clicr.index_cache import load_or_build_index

    started = time.perf_counter()
    index = load_or_build_index(folder / "MRCONSO.RRF", folder / "MRSTY.RRF", folder / "cache")
    seconds = time.perf_counter() - started
    keys = sum(entry >= 0 for entry in index.entries.values())
    builder = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the build runs in a child process
    return {
        "seconds": seconds,
        "peak_rss_mb": max(_peak_rss_mb(), builder),
        "loader_peak_rss_mb": _peak_rss_mb(),
        "keys": keys,
    }


def _child_pandas(folder: Path) -> dict[str, float]:
    import pandas as pd

    started = time.perf_counter()
    frame = pd.read_csv(
        folder / "MRCONSO.RRF",
        sep="|",
        header=None,
        usecols=[0, 1, 14, 16],
        dtype=str,
        quoting=3,
        keep_default_na=False,
    )
    english = frame[(frame[1] == "ENG") & (frame[16] == "N")]
    return {"seconds": time.perf_counter() - started, "peak_rss_mb": _peak_rss_mb(), "rows_kept": len(english)}


def _synthetic_text(index: object, tokens: int, seed: int) -> str:
    rng = random.Random(seed)
    names = index.concepts.names.decode("utf-8").split("\n")[:400_000]
    filler = "the patient was admitted with a history of and on examination there were no signs".split()
    words: list[str] = []
    while len(words) < tokens:
        sentence = []
        while len(sentence) < 18:
            sentence.extend(rng.choice(names).split() if rng.random() < 0.3 else [rng.choice(filler)])
        words.extend(sentence + ["."])
        if rng.random() < 0.1:
            words.append("\n\n")
    return " ".join(words)


def _naive_matches(index: object, text: str, sentences: list) -> int:
    keys = {key for key, entry in index.entries.items() if entry >= 0}
    longest = max(key.count(" ") for key in keys) + 1
    found = 0
    for sentence in sentences:
        tokens = [text[start:end].lower() for start, end in sentence.tokens]
        for position in range(len(tokens)):
            for length in range(min(longest, len(tokens) - position), 0, -1):
                if " ".join(tokens[position : position + length]) in keys:
                    found += 1
                    break
    return found


def _child_recogniser(folder: Path, tokens: int) -> dict[str, float]:
    from clinical_corpora.builders.contract.text_units import split_sentences
    from clinical_corpora.corpora.clicr.entity_matcher import EntityMatcher
    from clinical_corpora.corpora.clicr.index_cache import load_or_build_index

    index = load_or_build_index(folder / "MRCONSO.RRF", folder / "MRSTY.RRF", folder / "cache")
    text = _synthetic_text(index, tokens, seed=1)
    matcher = EntityMatcher(index)
    started = time.perf_counter()
    sentences = split_sentences(text)
    split_seconds = time.perf_counter() - started
    count = sum(len(sentence.tokens) for sentence in sentences)
    started = time.perf_counter()
    entities = matcher.find(text, sentences)
    match_seconds = time.perf_counter() - started
    started = time.perf_counter()
    unsplit = matcher.find(text)
    builder_seconds = time.perf_counter() - started
    if unsplit != entities:
        raise AssertionError("find(text) differs from find(text, split_sentences(text))")
    started = time.perf_counter()
    _naive_matches(index, text, sentences)
    naive_seconds = time.perf_counter() - started
    return {
        "tokens": count,
        "entities": len(entities),
        "matcher_tokens_per_s": count / match_seconds,
        "end_to_end_tokens_per_s": count / (match_seconds + split_seconds),
        "builder_path_tokens_per_s": count / builder_seconds,
        "text_units_tokens_per_s": count / split_seconds,
        "naive_ngram_tokens_per_s": count / naive_seconds,
    }


def _run_child(step: str, folder: Path, tokens: int) -> dict[str, float]:
    command = [sys.executable, __file__, "--child", step, "--workdir", str(folder), "--tokens", str(tokens)]
    result = subprocess.run(command, check=True, capture_output=True, text=True, cwd=Path(__file__).parents[1])
    return json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the 15M MRCONSO rows")
    parser.add_argument("--tokens", type=int, default=1_000_000, help="text tokens for the recogniser")
    parser.add_argument("--keep", type=Path, help="generate into (and keep) this folder")
    parser.add_argument("--child", choices=["index", "pandas", "recogniser"], help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        steps = {
            "index": lambda: _child_index(args.workdir),
            "pandas": lambda: _child_pandas(args.workdir),
            "recogniser": lambda: _child_recogniser(args.workdir, args.tokens),
        }
        print(json.dumps(steps[args.child]()))
        return

    folder = args.keep or Path(tempfile.mkdtemp(prefix="clicr-umls-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        started = time.perf_counter()
        sizes = generate_rrf(folder, int(ROWS_AT_FULL_SCALE * args.scale))
        generate_seconds = time.perf_counter() - started
        build = _run_child("index", folder, args.tokens)
        reuse = _run_child("index", folder, args.tokens)
        naive = _run_child("pandas", folder, args.tokens)
        recogniser = _run_child("recogniser", folder, args.tokens)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    report = {
        "scale": args.scale,
        **sizes,
        "generate_seconds": generate_seconds,
        "index_build": build,
        "index_cache_reuse": reuse,
        "naive_pandas_read_csv": naive,
        "index_build_vs_naive_read_ratio": build["seconds"] / naive["seconds"],
        "index_peak_rss_vs_naive_ratio": build["peak_rss_mb"] / naive["peak_rss_mb"],
        "recogniser": recogniser,
        "recogniser_speedup_vs_naive": recogniser["matcher_tokens_per_s"] / recogniser["naive_ngram_tokens_per_s"],
        "targets": {
            "index_build_seconds_at_full_scale": 180,
            "index_build_peak_rss_mb": 4096,
            "recogniser_tokens_per_s_per_core": 200_000,
        },
    }
    report["meets_targets"] = (
        build["peak_rss_mb"] <= 4096
        and recogniser["matcher_tokens_per_s"] >= 200_000
        and (args.scale < 1 or build["seconds"] <= 180)
        and reuse["seconds"] < build["seconds"]
    )
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
