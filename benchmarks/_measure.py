"""Run a function in a child process and report its wall time and peak RSS."""

from __future__ import annotations

import multiprocessing
import resource
import time
from collections.abc import Callable
from queue import Empty
from typing import Any


def _child(function: Callable[..., Any], args: tuple[Any, ...], queue: multiprocessing.Queue) -> None:
    start = time.perf_counter()
    result = function(*args)
    elapsed = time.perf_counter() - start
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    queue.put(
        {
            "seconds": round(elapsed, 3),
            "cpu_seconds": round(own.ru_utime + own.ru_stime, 3),
            "worker_cpu_seconds": round(workers.ru_utime + workers.ru_stime, 3),
            "peak_rss_mb": round(own.ru_maxrss / 1024, 1),
            "worker_peak_rss_mb": round(workers.ru_maxrss / 1024, 1),
            "result": result,
        }
    )


def measure(function: Callable[..., Any], *args: Any) -> dict[str, Any]:
    """Wall and CPU seconds and peak RSS (MB) of ``function(*args)`` run alone in a fresh process.

    On a shared machine CPU seconds are the steadier figure; ``worker_cpu_seconds`` is the CPU time of the
    function's own worker processes (ended ones), and peak RSS is the main process's.
    """
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_child, args=(function, args, queue))
    process.start()
    while True:
        try:
            outcome = queue.get(timeout=5)
            break
        except Empty:
            if not process.is_alive():
                raise RuntimeError(
                    f"{getattr(function, '__name__', function)} died with exit code {process.exitcode}"
                ) from None
    process.join()
    return outcome
