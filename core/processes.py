"""Helper processes that end with the process that started them.

A release forks helpers (build workers, input hashing, the expectation process, scoring workers, the UMLS
index builder). If the release process is killed outright (SIGKILL, the out-of-memory killer), nothing tells
them: a worker waits forever for its next job, and a helper waiting for the end of its pipe never sees it
while a sibling forked later still holds a copy of that pipe's other end. Each helper therefore watches its
parent and exits once it is gone.
"""

from __future__ import annotations

import os
import threading
import time

WATCH_SECONDS = 0.5
"""How often a helper checks that its parent is still there."""


def end_with_parent() -> None:
    """Exit this process (status 1) soon after its parent is gone: call it first thing in a forked helper.
    A daemon thread compares the parent's pid with the one seen now (an orphan is adopted by another)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="clincorp-end-with-parent", daemon=True).start()
