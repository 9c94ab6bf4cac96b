"""Find the files of a source folder: one walk for every reader, so that nothing under a source is lost.

Every file under a source is read, named in an error, or counted in one warning when its format ignores
it by design (brat's ``annotation.conf``, hidden files):

- folders are walked recursively and symbolic links to folders are followed (a ``dev/`` split may be a
  link). A link leading back to a folder being walked (a loop) is an error naming the link: following it
  never ends, and skipping it would hide whatever the user meant it to hold. A link to a folder already
  walked (``dev -> train``) is an error too: its documents would be read twice. A dangling link is an
  error naming it.
- A suffix is matched case-insensitively (``0101.ANN`` is an ``.ann``); the stem is kept as written, so
  companions pair by stem whatever their suffixes' case. Two files of one stem whose suffixes differ only
  in case (``0101.ann`` and ``0101.ANN``) are an error naming both.
- A file with none of the format's suffixes is an error naming it, and so is a folder named as a file a
  document lacks (``0101.ann/`` beside ``0101.txt``): the document would otherwise go without it.
"""

from __future__ import annotations

import functools
import logging
import os
import stat
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from clinical_corpora.core.errors import SourceError

LISTED = 10
"""File names listed in one error or warning; the rest are counted."""

BRAT_CONFIGURATION = frozenset({"annotation.conf", "visual.conf", "tools.conf", "kb_shortcuts.conf"})
"""Files of a brat collection that configure the tool and hold no document (``.stats_cache`` is hidden)."""
EXPORT_LISTING = "dropped.tsv"
"""What ``clincorp export`` lists beside the files it writes (what it did not export as such): no document."""

logger = logging.getLogger(__name__)


def walk_files(root: Path) -> list[Path]:
    """Every file under ``root`` (hidden ones too), sorted by path relative to it, through linked folders.

    Raises SourceError naming a symbolic link that loops back to a folder being walked, leads to a folder
    already walked (its files would be read twice), or leads nowhere.
    """
    return [Path(path) for _, path in walk_relative(root)]


def walk_relative(root: Path) -> list[tuple[str, str]]:
    """:func:`walk_files` as ``(path relative to root, /-separated; path)`` strings: no Path is made, so a
    folder of 100k files is listed in a fraction of the time."""
    folder = os.fspath(Path(root))
    given = _GIVEN_WALKS.pop(folder, None)
    if given is not None:
        return given
    found = sorted(_walk(folder, (), (), {}))
    skipped = len(os.curdir + os.sep) if folder == os.curdir else 0  # each path as a Path shows it: no "./"
    return [("/".join(parts), path[skipped:]) for parts, path in found]


_GIVEN_WALKS: dict[str, list[tuple[str, str]]] = {}
"""Walks made already, each returned by the next :func:`walk_relative` of its folder (see :func:`walks_given`)."""


@contextmanager
def walks_given(walks: Mapping[Path, list[tuple[str, str]]]) -> Iterator[None]:
    """Inside, the first :func:`walk_relative` of each of these folders returns its walk, as given, instead of
    walking it again (a release lists every input file before its builder lists its documents); each walk
    is let go of once used, and those unused when the block ends."""
    keys = [os.fspath(Path(root)) for root in walks]
    _GIVEN_WALKS.update(zip(keys, walks.values(), strict=True))
    del walks  # held by _GIVEN_WALKS alone, until used
    try:
        yield
    finally:
        for key in keys:
            _GIVEN_WALKS.pop(key, None)


FolderKey = tuple[int, int]
"""A folder's device and inode: the same folder whatever the path (or link) it is reached by."""


def _walk(
    folder: str, relative: tuple[str, ...], ancestors: tuple[FolderKey, ...], seen: dict[FolderKey, str]
) -> Iterator[tuple[tuple[str, ...], str]]:
    """(relative parts, path) of the files under ``folder``; the entries' types come from the folder listing
    (``d_type``), so only folders and links cost a ``stat``."""
    try:
        info = os.stat(folder)
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError as error:
        raise SourceError(Path(folder), f"cannot list the folder: {error.strerror}") from None
    key = (info.st_dev, info.st_ino)
    seen.setdefault(key, folder)
    here = (*ancestors, key)
    for entry in entries:
        path = entry.path
        try:
            if entry.is_symlink():
                mode = os.stat(path).st_mode
            elif entry.is_dir(follow_symlinks=False):
                mode = stat.S_IFDIR
            elif entry.is_file(follow_symlinks=False):
                mode = stat.S_IFREG
            else:
                mode = 0
        except OSError as error:
            if entry.is_symlink():
                raise SourceError(
                    Path(path), f"a symbolic link to {os.readlink(path)!r}, which does not exist"
                ) from None
            raise SourceError(Path(path), f"cannot read: {error.strerror}") from None
        if stat.S_ISDIR(mode):
            target = os.stat(path)
            reached = (target.st_dev, target.st_ino)
            if reached in here:
                raise SourceError(
                    Path(path),
                    f"a symbolic link looping back to {os.path.realpath(path)}, a folder it is inside: "
                    "expected a link to a folder outside this one",
                )
            if reached in seen:
                raise SourceError(
                    Path(path),
                    f"is the same folder as {seen[reached]} (one is a link to the other): its files would be read "
                    "twice; expected each folder once",
                )
            yield from _walk(path, (*relative, entry.name), here, seen)
        elif stat.S_ISREG(mode):
            yield (*relative, entry.name), path
        else:
            raise SourceError(Path(path), "neither a file nor a folder (a pipe, socket or device): expected a file")


def is_hidden(relative: str) -> bool:
    """A file or one of its folders is hidden (its name starts with a dot)."""
    return relative.startswith(".") or "/." in relative


def split_suffix(name: str, suffixes: Sequence[str]) -> tuple[str, str] | None:
    """``(stem, suffix)`` of ``name`` for the longest of ``suffixes`` it ends with, in any case; the
    suffix as given in ``suffixes``, the stem as written. None when it ends with none of them."""
    return _suffix_splitter(tuple(suffixes))(name)


@functools.cache
def _suffix_splitter(suffixes: tuple[str, ...]) -> Callable[[str], tuple[str, str] | None]:
    """:func:`split_suffix` for one set of suffixes, ordered once (a folder lists them for every file)."""
    ordered = [(suffix, suffix.lower(), len(suffix)) for suffix in sorted(suffixes, key=len, reverse=True)]

    def split(name: str) -> tuple[str, str] | None:
        lowered = name.lower()
        for suffix, suffix_lowered, length in ordered:
            if lowered.endswith(suffix_lowered) and len(name) > length:
                return name[:-length], suffix
        return None

    return split


@dataclass(frozen=True)
class Document:
    """A document of a folder: its id (path relative to the folder without suffix, ``/``-separated) and
    the paths of its files by suffix (as the format names it: ``.ann``, whatever the case on disk).

    The paths are kept as listed, strings: a Path is made when one is asked for, in the process reading
    the file (making 100k Paths takes the listing process ~1.4 s, and pickling them to workers more)."""

    id: str
    paths: Mapping[str, str]

    @property
    def files(self) -> dict[str, Path]:
        """The document's files by suffix."""
        return {suffix: Path(path) for suffix, path in self.paths.items()}

    def get(self, suffix: str) -> Path | None:
        found = self.paths.get(suffix)
        return None if found is None else Path(found)

    def require(self, suffix: str) -> Path:
        """The document's ``suffix`` file; a SourceError naming the files it has when it lacks it."""
        found = self.get(suffix)
        if found is None:
            have = ", ".join(path.name for path in self.files.values())
            raise SourceError(
                next(iter(self.files.values())), f"{have} has no companion {self.id}{suffix}: expected both files"
            )
        return found


def find_documents(
    root: Path, suffixes: Sequence[str], *, what: str, ignored: Collection[str] = (), quiet: bool = False
) -> list[Document]:
    """The documents under ``root``: files grouped by stem, one file per suffix, sorted by id.

    ``what`` names the format in errors (``BRAT .txt/.ann files``). Hidden files and files named in
    ``ignored`` (in any folder) are left out, counted in a warning unless ``quiet``; any other file
    without one of ``suffixes`` is an error naming it.
    """
    root = Path(root)
    if not root.is_dir():
        raise SourceError(root, f"expected a folder of {what}")
    lowered = {name.lower() for name in ignored}
    split = _suffix_splitter(tuple(suffixes))
    documents: dict[str, dict[str, str]] = {}
    left_out, unexpected = [], []
    for relative, path in walk_relative(root):
        name = relative.rpartition("/")[2]
        if is_hidden(relative) or name.lower() in lowered:
            left_out.append(relative)
            continue
        found = split(name)
        if found is None:
            unexpected.append(relative)
            continue
        stem, suffix = found
        doc_id = relative[: -len(name)] + stem
        twin = documents.setdefault(doc_id, {}).setdefault(suffix, path)
        if twin != path:
            raise SourceError(
                Path(path),
                f"{os.path.basename(twin)} and {name} are both the {suffix} file of document {doc_id}: "
                "keep one (suffixes are read in any case)",
            )
    if unexpected:
        raise SourceError(
            root,
            f"{_listed(unexpected)} {'is' if len(unexpected) == 1 else 'are'} not {what}: expected names ending "
            f"in {' or '.join(suffixes)} (in any case)",
        )
    misnamed = _folders_named_like_files(root, documents, suffixes)
    if misnamed:
        others = f" (folders so named: {_listed(misnamed)})" if len(misnamed) > 1 else ""
        raise SourceError(
            root / misnamed[0],
            f"a folder named like a document's file: the document would be read without it; expected a file{others}",
        )
    if left_out and not quiet:
        warn_left_out(root, left_out, what)
    return [Document(doc_id, documents[doc_id]) for doc_id in sorted(documents)]


def _folders_named_like_files(
    root: Path, documents: Mapping[str, Mapping[str, str]], suffixes: Sequence[str]
) -> list[str]:
    """Folders (relative to ``root``) named as a file a document lacks (``0101.ann/`` beside ``0101.txt``, in
    any case): the walk sees no file there, so the document would silently go without it. Only the folders
    of documents lacking a file are listed."""
    found: list[str] = []
    subfolders: dict[str, dict[str, str]] = {}
    for doc_id, files in documents.items():
        missing = [suffix for suffix in suffixes if suffix not in files]
        if not missing:
            continue
        parent, _, stem = doc_id.rpartition("/")
        if parent not in subfolders:
            subfolders[parent] = _subfolders(root / parent)
        for suffix in missing:
            name = subfolders[parent].get(f"{stem}{suffix}".lower())
            if name is not None:
                found.append(f"{parent}/{name}" if parent else name)
    return found


def _subfolders(folder: Path) -> dict[str, str]:
    """The folders in ``folder`` (links to folders too), by lower-case name."""
    try:
        with os.scandir(folder) as listing:
            return {entry.name.lower(): entry.name for entry in listing if entry.is_dir()}
    except OSError:
        return {}


def warn_left_out(root: Path, names: Sequence[str], what: str) -> None:
    """One warning counting the files under ``root`` a format ignores by design."""
    logger.warning("%s: %d file(s) left out by design (not %s): %s", root, len(names), what, _listed(names))


def _listed(names: Iterable[str]) -> str:
    names = list(names)
    shown = ", ".join(names[:LISTED])
    return shown + (f" and {len(names) - LISTED} more" if len(names) > LISTED else "")
