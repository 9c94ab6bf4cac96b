"""A release folder on disk: staged in a hidden folder, published by one rename, its files hashed.

Every command that writes a release folder (``release``, ``build``, the text-free variant, ``rehydrate``)
stages it with :func:`make_staging` (or :func:`staged`) and publishes it with :func:`publish`; its
manifest.json is read and written by ``core/release_manifest.py`` alone. A run's staging folder is named
after its process and host so that a later run removes the staging folders of killed runs
(:func:`remove_stale_staging`).

A release that left the machine that built it is untrusted input: it is opened only through
``builders/release/opened.py`` (the door), whose typed manifest allows only release versions and relative POSIX
paths inside the folder.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from clinical_corpora.core.errors import ClincorpError, ReleaseError
from clinical_corpora.core.hashing import sha256_file
from clinical_corpora.core.manifest import SAMPLE_TAG
from clinical_corpora.core.release_manifest import MANIFEST_FILE, read_manifest

STAGING_TAG = ".staging-"
"""A run stages its release in ``<out>/<corpus>/.<corpus>-<version>.staging-<pid>@<host>.<random>``: the pid tells a
later run on the same host whether the folder's owner still runs (a shared --out may serve several hosts)."""

_STAGING_NAME = re.compile(r"\..+" + re.escape(STAGING_TAG) + r"(\d+)@([A-Za-z0-9-]*)\.[^.]+")


def tree_digest(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative POSIX name) with its sha256."""
    return {
        path.relative_to(folder).as_posix(): sha256_file(path) for path in sorted(folder.rglob("*")) if path.is_file()
    }


def release_folder(corpus: str, version: str) -> str:
    """The name of a release's folder in ``<out>/<corpus>/``: ``<corpus>-<version>``. ``datasets`` names a
    dataset loaded from a folder after the folder (``load_dataset`` of a local path), so the name says the
    corpus, not the version alone."""
    return f"{corpus}-{version}"


def make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ReleaseError(f"cannot create the output folder {folder}: {error.strerror or error}") from None


def make_staging(parent: Path, name: str) -> Path:
    """The run's own hidden staging folder for the release folder ``parent/name``, named after its process
    and host (``parent`` is created when missing)."""
    make_folder(parent)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{name}{STAGING_TAG}{os.getpid()}@{_host()}.", dir=parent))
    except OSError as error:
        raise ReleaseError(f"cannot write into {parent}: {error.strerror or error}") from None
    staging.chmod(0o777 & ~_umask())  # mkdtemp makes 0700 folders; a release gets what the umask gives
    return staging


@contextmanager
def staged(parent: Path, name: str) -> Iterator[Path]:
    """:func:`make_staging`, removed when the run ends; the folders it had to create for it are removed too when
    the run left nothing in them (a refused run writes nothing)."""
    created = [folder for folder in (parent, *parent.parents) if not folder.exists()]
    staging = make_staging(parent, name)
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        for folder in created:  # the deepest first; rmdir leaves a folder that holds anything
            try:
                folder.rmdir()
            except OSError:
                break


def remove_stale_staging(parent: Path) -> None:
    """Remove the staging folders in ``parent`` left by runs that were killed (their owner process is gone)."""
    if not parent.is_dir():
        return
    for folder in parent.iterdir():
        match = _STAGING_NAME.fullmatch(folder.name)
        if match and match[2] == _host() and folder.is_dir() and not _running(int(match[1])):
            print(f"{parent.name}: removing {folder.name}, left by a run that was killed", file=sys.stderr, flush=True)
            shutil.rmtree(folder, ignore_errors=True)


def publish(staging: Path, target: Path) -> Literal["released", "unchanged"]:
    """Rename ``staging`` to ``target`` in one step. A ``target`` that exists (there before, or published by
    a concurrent run meanwhile) is left as it is when it holds the same bytes; else a ReleaseError."""
    try:
        staging.rename(target)
        return "released"
    except OSError as error:
        if error.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR, errno.ENOTDIR):
            raise ReleaseError(f"cannot write the release to {target}: {error.strerror or error}") from None
    _check_same_release(staging, target)
    return "unchanged"


def check_out(out: Path, corpus_dir: Path) -> None:
    """Refuse an ``--out`` that lies under a file (or is one) before any work is done."""
    for folder in (corpus_dir, out, *out.parents):
        if folder.exists():
            if not folder.is_dir():
                raise ReleaseError(f"--out {out}: {folder} is a file, not a folder; give --out a folder")
            return


def check_build_target(target: Path) -> None:
    """Refuse to build into a version folder that holds a release or anything ``build`` did not write."""
    if not target.exists() and not target.is_symlink():
        return
    flag = _release_flag(target)
    if flag is False:
        return
    what = "holds a release" if (target / MANIFEST_FILE).is_file() else "was not written by clincorp build"
    raise ReleaseError(f"{target} {what}: build never replaces it; give build another --out (releases are immutable)")


def _release_flag(folder: Path) -> bool | None:
    """Whether ``folder``'s manifest says it is a release (false: a clincorp build); None when it has no
    manifest a release has."""
    try:
        return read_manifest(folder).release
    except ClincorpError:
        return None


def replace_build(staging: Path, target: Path) -> None:
    """Put a build in place of the previous build of this version (never of a release)."""
    check_build_target(target)
    try:
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    except OSError as error:
        raise ReleaseError(f"cannot write the build to {target}: {error.strerror or error} (another run?)") from None


def _check_same_release(staging: Path, target: Path) -> None:
    if not (target / MANIFEST_FILE).is_file():
        raise ReleaseError(f"{target} already exists and is not a release (no manifest.json): move it away")
    if _release_flag(target) is False:
        raise ReleaseError(f"{target} holds a clincorp build, not a release: release into another --out")
    if tree_digest(target) == tree_digest(staging):
        return
    if SAMPLE_TAG in target.name:
        raise ReleaseError(
            f"{target} already exists with different bytes: it is a sample release of invented data, "
            "so remove it (or release into another --out) to rebuild it"
        )
    raise ReleaseError(
        f"{target} already exists with different bytes: releases are immutable; bump the corpus version in corpus.yaml"
    )


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine (a process of another user counts)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:  # e.g. a pid beyond the system's range
        return False
    return True


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
