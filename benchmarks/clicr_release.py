"""End-to-end ``clicr`` release at CliCR scale on synthetic inputs; prints JSON.

Generates, at ``--scale 1``: a synthetic UMLS ``META`` (15M MRCONSO rows, as
``benchmarks/entity_matcher.py``) and 11,846 BMJ-shaped case pages (navigation, header, title,
seven sections of about 1,400 passage tokens, three learning points, references, footer) whose
text mixes filler words with MRCONSO strings. Then releases the corpus twice, each in a fresh
process: with an empty matcher-index cache (the index is built), and again into another folder
with the cache filled (the index is loaded). Each release reports its wall and CPU time, peak RSS, and
per stage of the pipeline the seconds, the RSS at its start and the peak RSS reached by its end.
Targets at full scale: the warm release in ≤ 5 min and ≤ 2 GB peak RSS on 2 cores.

With ``--reuse-inputs`` the generated inputs are kept in the temporary folder, named by scale and seed
(with ``--keep DIR``, in DIR), and a later run with the same scale and seed reuses them instead of
generating them again; the matcher index is cached beside them, so such a run measures the warm release
only (``release_cold_cache`` null).

Usage: ``python benchmarks/clicr_release.py [--scale 0.05] [--seed 0] [--reuse-inputs] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from html import escape
from itertools import islice
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._measure import measure  # noqa: E402
from benchmarks.entity_matcher import ROWS_AT_FULL_SCALE, generate_rrf  # noqa: E402

CASES_AT_FULL_SCALE = 11_846
SECTIONS = (
    "Summary",
    "Background",
    "Case presentation",
    "Investigations",
    "Treatment",
    "Outcome and follow-up",
    "Discussion",
)
FILLER = (
    "the patient was admitted with a history of and on examination there were no signs of "
    "she he reported that after weeks treatment started because in this case we describe"
).split()
PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title} | BMJ Case Reports</title>
<meta name="citation_title" content="{title}"><meta name="citation_publication_date" content="2016/03/01">
<meta name="DC.subject" content="Infectious diseases; Respiratory medicine"></head>
<body><header role="banner"><a href="/">BMJ Case Reports</a><form action="/search"><input name="q"></form></header>
<nav><ul><li><a href="/">Home</a></li><li><a href="/content/current">Latest content</a></li></ul></nav>
<div id="main-content"><article class="article fulltext-view">
<ul class="series-titles"><li>Rare disease</li></ul><h1>{title}</h1>
{sections}
<div class="section boxed-text"><h2>Learning points</h2><ul>{points}</ul></div>
<div class="section ref-list"><h2>References</h2><ol><li>Smith J. A case. BMJ 2015;1:1-2.</li></ol></div>
</article></div>
<aside><h3>Share this article</h3><ul><li><a href="https://twitter.com/share">Twitter</a></li></ul></aside>
<footer role="contentinfo"><p>Copyright 2016 BMJ Publishing Group Ltd. All rights reserved.</p></footer>
</body></html>
"""


def _names(meta: Path, count: int) -> list[str]:
    """English, non-suppressed MRCONSO strings from the start of the file."""
    with open(meta / "MRCONSO.RRF", encoding="utf-8") as rows:
        fields = (line.split("|") for line in rows)
        return list(islice((f[14] for f in fields if f[1] == "ENG" and f[16] == "N"), count))


def _sentence(rng: random.Random, names: list[str], words: int) -> str:
    out: list[str] = []
    while len(out) < words:
        out.extend(rng.choice(names).split() if rng.random() < 0.3 else [rng.choice(FILLER)])
    return " ".join(out).capitalize() + "."


def generate_pages(folder: Path, cases: int, names: list[str], seed: int = 7) -> int:
    """Write ``cases`` BMJ-shaped pages; returns their passage words (about 1,400 a case)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    words = 0
    for number in range(cases):
        sections = []
        for heading in SECTIONS:
            paragraphs = [_sentence(rng, names, 20) for _ in range(10)]
            words += sum(len(p.split()) for p in paragraphs)
            sections.append(
                f'<div class="section"><h2>{heading}</h2>'
                + "".join(f"<p>{escape(p)}</p>" for p in paragraphs)
                + "</div>"
            )
        points = "".join(f"<li><p>{escape(_sentence(rng, names, 16))}</p></li>" for _ in range(3))
        page = PAGE.format(title=escape(_sentence(rng, names, 8)), sections="\n".join(sections), points=points)
        (folder / f"bcr-2016-{number:06d}.html").write_text(page, encoding="utf-8")
    return words


def _rss_mb() -> tuple[float, float]:
    """This process's RSS and peak RSS (VmRSS, VmHWM) in MB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def release(pages: str, meta: str, gold: str, out: str) -> dict[str, Any]:
    from clinical_corpora.builders.plugins import find_corpus
    from clinical_corpora.builders.release import build, pipeline
    from clinical_corpora.builders.release.request import ReleaseRequest

    stages: list[dict[str, Any]] = []
    started = time.perf_counter()
    stage_line = build.stage_line

    def record_stage(corpus: str, what: str) -> None:  # each stage line: when, and the memory so far
        rss, peak = _rss_mb()
        stages.append({"stage": what, "at_s": round(time.perf_counter() - started, 1), "rss_mb": round(rss)})
        if len(stages) > 1:
            stages[-2]["peak_rss_mb_by_end"] = round(peak)
        stage_line(corpus, what)

    build.stage_line = pipeline.stage_line = record_stage  # type: ignore[assignment]  # Build.stage and the pipeline
    sources = {"bmj_html": Path(pages), "umls": Path(meta), "entity_gold": Path(gold)}  # empty gold: not run
    outcome = pipeline.run(ReleaseRequest(find_corpus("clicr"), Path(out), sources=sources))
    stages[-1]["peak_rss_mb_by_end"] = round(_rss_mb()[1])
    return {
        "rows": outcome.manifest.counts.written,
        **{gate.gate: gate.success for gate in outcome.gates if gate.gate != "expectations"},
        "expectations": next(gate.success for gate in outcome.gates if gate.gate == "expectations"),
        "stages": stages,
    }


def generate_inputs(work: Path, scale: float, seed: int) -> dict[str, int]:
    """The synthetic META and pages for ``scale`` in ``work``; a ``sizes.json`` written last marks them done."""
    done = work / "sizes.json"
    if done.is_file():
        return {**json.loads(done.read_text()), "reused": True}
    shutil.rmtree(work / "META", ignore_errors=True)
    shutil.rmtree(work / "pages", ignore_errors=True)
    (work / "META").mkdir(parents=True)
    sizes = generate_rrf(work / "META", int(ROWS_AT_FULL_SCALE * scale), seed=seed)
    sizes["cases"] = max(10, int(CASES_AT_FULL_SCALE * scale))
    sizes["passage_words"] = generate_pages(work / "pages", sizes["cases"], _names(work / "META", 200_000), seed + 7)
    done.write_text(json.dumps(sizes))
    return {**sizes, "reused": False}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of CliCR's cases and UMLS's rows")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic inputs")
    parser.add_argument("--keep", type=Path, help="generate into (and keep) this folder")
    parser.add_argument("--reuse-inputs", action="store_true", help="keep the inputs (temporary folder) for reuse")
    args = parser.parse_args()
    cached = Path(tempfile.gettempdir()) / f"clicr-release-bench-inputs-scale{args.scale:g}-seed{args.seed}"
    inputs = args.keep or (cached if args.reuse_inputs else Path(tempfile.mkdtemp(prefix="clicr-release-bench-")))
    work = Path(tempfile.mkdtemp(prefix="clicr-release-bench-out-"))
    cache = inputs / "cache" if args.keep or args.reuse_inputs else work / "cache"  # keyed by the RRF files
    os.environ["CLINCORP_CACHE"] = str(cache)  # inherited by the measured processes
    try:
        started = time.perf_counter()
        sizes = generate_inputs(inputs, args.scale, args.seed)
        generate_seconds = time.perf_counter() - started
        pages, meta = str(inputs / "pages"), str(inputs / "META")
        (work / "no-gold").mkdir()
        cold = None  # with the index of reused inputs cached already, only the warm release runs
        if not any(cache.glob("umls-index-*")):
            cold = measure(release, pages, meta, str(work / "no-gold"), str(work / "out-cold"))
        warm = measure(release, pages, meta, str(work / "no-gold"), str(work / "out-warm"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if args.keep is None and not args.reuse_inputs:
            shutil.rmtree(inputs, ignore_errors=True)
    cases = sizes["cases"]
    report = {
        "benchmark": "clicr_release",
        "scale": args.scale,
        "seed": args.seed,
        **sizes,
        "generate_seconds": round(generate_seconds, 1),
        "release_cold_cache": cold,
        "release_warm_cache": warm,
        "cases_per_s_warm": round(cases / warm["seconds"], 1),
        "cold_vs_warm_ratio": round(cold["seconds"] / warm["seconds"], 2) if cold else None,
        "targets": {"release_seconds_at_full_scale": 300, "peak_rss_mb_at_full_scale": 2048},
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
