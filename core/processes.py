"""Helper processes that end with the process that started them.

A release forks helpers (build workers, input hashing, scoring workers, the UMLS index builder). If the
release process is killed outright (SIGKILL, the out-of-memory killer), nothing tells them: a worker waits
forever for its next job, and a helper waiting for the end of its pipe never sees it while a sibling forked
later still holds a copy of that pipe's other end. Each helper therefore watches its parent and exits once it
is gone.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from clinical_corpora.core.errors import ClincorpError

if TYPE_CHECKING:
    from multiprocessing.context import DefaultContext, ForkContext

WATCH_SECONDS = 0.5
"""How often a helper checks that its parent is still there."""


def end_with_parent(parent: int) -> None:
    """Exit this process (status 1) soon after ``parent`` is gone: call it first thing in a forked helper, with
    the pid the starting process had before it forked (``os.getpid()`` there). A daemon thread compares the
    parent's pid with it (an orphan is adopted by another), so a helper whose parent was killed before this
    call exits at once; reading the parent's pid here instead would watch the adopter forever. A SIGTERM ends
    the helper quietly, whatever handler it inherited (a process connected to Ray has one printing a stack
    dump)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="clincorp-end-with-parent", daemon=True).start()


def fork_context() -> ForkContext | DefaultContext:
    """Helpers fork where the platform can (they inherit what this process has loaded), else start its default way."""
    if "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


@contextlib.contextmanager
def child_process(what: str) -> Iterator[Callable[..., Callable[[], Any]]]:
    """A helper process for one job run beside this process's own work: ``start(function, *args)`` starts it
    and returns a function that waits for its result. The helper's death (the out-of-memory killer) is a
    ClincorpError saying "the process ``what`` died"."""
    with ProcessPoolExecutor(
        1, mp_context=fork_context(), initializer=end_with_parent, initargs=(os.getpid(),)
    ) as pool:

        def start(function: Callable[..., Any], *args: Any) -> Callable[[], Any]:
            future = pool.submit(function, *args)

            def result() -> Any:
                try:
                    return future.result()
                except BrokenProcessPool:
                    raise ClincorpError(f"the process {what} died (out of memory?)") from None

            return result

        yield start


COLLECTOR_THRESHOLDS = (100_000, 50, 100)
"""The cyclic garbage collector's thresholds in a clincorp process (forked workers inherit them): a young
collection per 100,000 allocations rather than Python's 700, a middle one per 50 young, a full one per 100
middle. A release allocates millions of objects that stay alive (the libraries it imports, a batch of encoded
rows per split) and makes next to no cycles. Releasing 20,000 synthetic SDOH notes in one process took 21.5
CPU-seconds with Python's thresholds (8,092 collections, 8.7 s of them) and 13.3–14.6 with these (51, 1.3 s)."""


def tune_collector() -> None:
    """Set :data:`COLLECTOR_THRESHOLDS`: called once, at the entry of a process that builds or reads releases
    (``clincorp``, the test session)."""
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
