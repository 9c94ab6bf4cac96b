"""A function run in a forked child of the test process, its output captured: what a test needs when a release
must run in a process of its own (to be killed, to race another, to be unable to hang the test) without paying
for a fresh interpreter's imports (datasets, great-expectations: seconds per process)."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from clinical_corpora.builders.commands.main import main
from clinical_corpora.core.processes import end_with_parent


@dataclass
class Child:
    """A forked child running a function; its stdout and stderr go to files this process reads."""

    pid: int
    stdout: IO[bytes]
    stderr: IO[bytes]

    def output(self) -> tuple[str, str]:
        return _read(self.stdout), _read(self.stderr)

    def wait_for(self, line: str, timeout: float = 120) -> None:
        """Wait until the child has printed ``line`` on stdout (an AssertionError after ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while line not in self.output()[0].splitlines():
            assert time.monotonic() < deadline, f"the child never printed {line!r}: {self.output()}"
            time.sleep(0.02)

    def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)

    def wait(self, timeout: float = 300) -> tuple[int, str, str]:
        """The child's exit status, stdout and stderr once it ends (killed, and an AssertionError, after
        ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status), *self.output()
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"the child ran over {timeout} s: {self.output()}")
            time.sleep(0.02)


def start(function: Callable[[], int]) -> Child:
    """Fork a child running ``function``; it exits with the status ``function`` returns (70 on an exception,
    its traceback on stderr) and never returns into the test process."""
    stdout, stderr = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid:
        return Child(pid, stdout, stderr)
    status = 70
    try:
        end_with_parent(parent)  # a child left running (a stalled release) ends with the test process
        sys.stdout = open(stdout.fileno(), "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(stderr.fileno(), "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        os.dup2(stdout.fileno(), 1)
        os.dup2(stderr.fileno(), 2)
        status = function()
    except BaseException:  # the child reports anything and always ends here
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def clincorp(*argv: str, timeout: float = 300) -> tuple[int, str, str]:
    """``clincorp ARGV`` in a forked child: its exit status, stdout and stderr."""
    return start(lambda: main(list(argv))).wait(timeout)


def _read(file: IO[bytes]) -> str:
    """What the child wrote so far, read at its offsets (the file's own offset is the child's, shared by fork)."""
    descriptor = file.fileno()
    return os.pread(descriptor, os.fstat(descriptor).st_size, 0).decode("utf-8", errors="replace")
