"""BMJ page cleaning time against the number of paragraphs; prints JSON.

For pages of 2k, 4k, 8k and 16k paragraphs (and one page of about 20 MB) it times, in this run:

- ``ours``: ``read_case_report`` as released (jusText's classification revised in linear time,
  ``builders/sources/boilerplate.py``);
- ``naive``: the same reader with jusText's own ``revise_paragraph_classification``, quadratic in a run
  of short or near-good paragraphs (the behaviour before); not run on the 20 MB page, where it would take
  about ``naive_estimate_seconds`` (the 16k time scaled by the square of the paragraph ratio);
- ``floor``: parsing the page and making jusText's paragraphs only, which every reader must do.

The 20 MB page is read with ``max_bytes`` raised past it; with the default limit it is refused at once
(``refused_seconds``). Usage: ``python benchmarks/bmj_page_cleaning.py [--sizes 2000 4000]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import justext.core

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clinical_corpora.builders.sources import bmj_html  # noqa: E402
from clinical_corpora.core.errors import SourceError  # noqa: E402

SIZES = (2_000, 4_000, 8_000, 16_000)
BIG_PAGE_BYTES = 20_000_000
PARAGRAPHS = (
    "<p>The patient was admitted with fever and a cough for three days and was treated with antibiotics.</p>\n",
    "<p>Afebrile.</p>\n",
    "<p>See figure 2 and table 1 for the results of the chest radiograph taken on admission.</p>\n",
    "<p>CRP 45 mg/L.</p>\n",
)
PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Case</title></head>
<body><article><h1>A case of many paragraphs</h1><h2>Case presentation</h2>
{paragraphs}<h2>Learning points</h2><ul><li><p>Consider tuberculosis.</p></li></ul></article></body></html>"""


def write_page(folder: Path, paragraphs: int) -> Path:
    path = folder / f"bcr-{paragraphs}.html"
    body = "".join(PARAGRAPHS[i % len(PARAGRAPHS)] for i in range(paragraphs))
    path.write_text(PAGE.format(paragraphs=body), encoding="utf-8")
    return path


def paragraphs_for(page_bytes: int) -> int:
    per_paragraph = sum(len(p) for p in PARAGRAPHS) / len(PARAGRAPHS)
    return int(page_bytes / per_paragraph)


def seconds(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return round(time.perf_counter() - start, 3)


def floor(path: Path) -> None:
    root = bmj_html._parse_page(path)
    justext.core.ParagraphMaker.make_paragraphs(root)


def naive(path: Path) -> None:
    with mock.patch.object(bmj_html, "revise_paragraph_classification", justext.core.revise_paragraph_classification):
        bmj_html.read_case_report(path, max_bytes=BIG_PAGE_BYTES * 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--big-page-bytes", type=int, default=BIG_PAGE_BYTES)
    args = parser.parse_args()
    results: dict[str, object] = {"sizes": []}
    with tempfile.TemporaryDirectory() as folder:
        rows = []
        for size in args.sizes:
            page = write_page(Path(folder), size)
            ours = seconds(lambda page=page: bmj_html.read_case_report(page, max_bytes=args.big_page_bytes * 2))
            before = seconds(lambda page=page: naive(page))
            rows.append(
                {
                    "paragraphs": size,
                    "bytes": page.stat().st_size,
                    "ours_seconds": ours,
                    "naive_seconds": before,
                    "floor_seconds": seconds(lambda page=page: floor(page)),
                    "speedup": round(before / ours, 1) if ours else None,
                }
            )
        results["sizes"] = rows
        count = paragraphs_for(args.big_page_bytes)
        big = write_page(Path(folder), count)
        largest = rows[-1]
        results["big_page"] = {
            "paragraphs": count,
            "bytes": big.stat().st_size,
            "ours_seconds": seconds(lambda: bmj_html.read_case_report(big, max_bytes=args.big_page_bytes * 2)),
            "floor_seconds": seconds(lambda: floor(big)),
            "naive_estimate_seconds": round(largest["naive_seconds"] * (count / largest["paragraphs"]) ** 2),
            "refused_seconds": seconds(lambda: _refused(big)),
            "default_limit_bytes": bmj_html.MAX_PAGE_BYTES,
        }
    ratios = [b["ours_seconds"] / a["ours_seconds"] for a, b in zip(rows, rows[1:], strict=False) if a["ours_seconds"]]
    results["ours_growth_per_doubling"] = [round(r, 2) for r in ratios]
    print(json.dumps(results, indent=2))


def _refused(path: Path) -> None:
    try:
        bmj_html.read_case_report(path)
    except SourceError:
        return
    raise AssertionError(f"{path} was read despite the default size limit")


if __name__ == "__main__":
    main()
