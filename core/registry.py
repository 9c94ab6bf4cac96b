"""Registries that each corpus plugin fills itself: its corpus folder, its scorers, exporters and baselines.

A corpus package registers its parts when it is imported (the pipeline imports every package named in
the ``clinical_corpora.plugins`` entry-point group), so adding a corpus touches no central file. A
command names the object that implements it (``module`` or ``module:attribute``, with
``configure(parser)`` and ``run(args)``) and is imported only when it is used, so that listing and
``--help`` stay fast.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar, cast

from clinical_corpora.core.errors import ClincorpError

Key = TypeVar("Key", bound=Hashable)
Entry = TypeVar("Entry")


class CommandImplementation(Protocol):
    """What a score or export command implements."""

    def configure(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


@dataclass(frozen=True)
class Command:
    """A CLI command a corpus provides: where it is implemented, a one-line help, and which of its arguments may
    name a release (the command line opens those through the door and hands the command a ``GivenRelease``)."""

    target: str
    help: str
    releases: tuple[str, ...] = ()

    def load(self) -> CommandImplementation:
        """Import the implementing module (and attribute)."""
        return cast(CommandImplementation, self.load_target())

    def load_target(self) -> object:
        """The object the target names, imported now."""
        module_name, _, attribute = self.target.partition(":")
        try:
            module = importlib.import_module(module_name)
            return getattr(module, attribute) if attribute else module
        except (ImportError, AttributeError) as error:
            raise ClincorpError(f"cannot load command {self.target!r}: {error}") from error


class Registry(Generic[Key, Entry]):
    """Named entries of one kind, registered once each."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[Key, Entry] = {}

    def register(self, key: Key, entry: Entry) -> Entry:
        """Add ``entry`` under ``key``; registering the same entry again is a no-op."""
        if self._entries.get(key, entry) != entry:
            raise ClincorpError(f"two {self.kind}s are registered as {key!r}")
        self._entries[key] = entry
        return entry

    def get(self, key: Key) -> Entry:
        """The entry under ``key``, or an error listing the known keys."""
        if key not in self._entries:
            known = ", ".join(sorted(map(str, self._entries))) or "none"
            raise ClincorpError(f"no {self.kind} {key!r}; registered: {known}")
        return self._entries[key]

    def keys(self) -> list[Key]:
        return list(self._entries)

    def unregister(self, key: Key) -> None:
        """Remove an entry (for plugins loaded only for a while, such as a test's)."""
        self._entries.pop(key, None)


corpora: Registry[str, Path] = Registry("corpus")
"""Corpus name → the folder holding its corpus.yaml and sample."""

scorers: Registry[str, Command] = Registry("scorer")
"""``clincorp score NAME``."""

exporters: Registry[tuple[str, str], Command] = Registry("exporter")
"""``clincorp export FORMAT RELEASE``, by (format, corpus)."""

baselines: Registry[tuple[str, str], Command] = Registry("baseline")
"""``clincorp baseline CORPUS RELEASE --name NAME``, by (corpus, name): the target is a function taking a
``BaselineRequest`` (``builders/contract/baseline.py``) and returning the files it wrote."""
