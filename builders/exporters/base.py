"""The contract of an export format: write a release as a community format, say what the format cannot hold,
and say how to read the export back.

A corpus registers one :class:`Exporter` instance per format (``exporters.register((format, corpus),
Command("module:attribute", help))``). ``clincorp export FORMAT RELEASE --out DIR`` calls :meth:`Exporter.run`;
the round-trip test calls :meth:`Exporter.reread` (an exported folder released again through the corpus's
own builder, when a builder reads the format) or :meth:`Exporter.read_back` (the exported files read by
the format's reader, when none does), and compares what :attr:`Exporter.lost` does not name.
"""

from __future__ import annotations

import argparse
import inspect
import shutil
import tempfile
import textwrap
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.lost_spans import KeptView
from clinical_corpora.builders.contract.release_view import GivenRelease, ReleaseView
from clinical_corpora.builders.sources.discovery import EXPORT_LISTING
from clinical_corpora.core.errors import ClincorpError

Record = Mapping[str, Any]


@dataclass(frozen=True)
class ReleaseInputs:
    """How to release a corpus again from an export: ``--source NAME=PATH`` for each of ``sources``, plus the
    inputs the format does not carry (``not_carried``, such as a terminology), which the user gives from their own
    copy (the round-trip test reads the embedded sample's with ``--sample NAME``)."""

    sources: Mapping[str, Path]
    not_carried: tuple[str, ...] = field(default=())

    def command(self, corpus: str) -> str:
        """The ``clincorp release`` command line."""
        options = [f"--source {name}={path}" for name, path in self.sources.items()]
        options += [f"--source {name}=<your {name}>" for name in self.not_carried]
        return " ".join(["clincorp release", corpus, *options])


class Exporter(ABC):
    """``clincorp export FORMAT RELEASE --out DIR`` for one corpus."""

    configs: tuple[str, ...] = ()
    """The configs of the release the format is written from."""

    lost: tuple[str, ...] = ()
    """What the format cannot hold, one item a line: shown by ``--help`` and listed in the corpus README."""

    exact: bool = True
    """Whether releasing the export again (with the inputs :meth:`reread` names) gives byte-identical data:
    true when nothing is lost, or when what is lost comes back from those inputs (a terminology)."""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        """Show what is lost under ``--help``; subclasses add their own options after calling this."""
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        parser.description = inspect.cleandoc(type(self).__doc__ or "")
        parser.epilog = lost_text(self.lost)

    def run(self, args: argparse.Namespace) -> int:
        if args.out.exists() and (not args.out.is_dir() or any(args.out.iterdir())):
            raise ClincorpError(
                f"{args.out} is not an empty folder: export into a new or empty one (files of another export "
                "there would be read as part of this one)"
            )
        release: GivenRelease = args.release
        view = release.view
        missing = [config for config in self.configs if config not in view.configs()]
        if missing:
            raise ClincorpError(f"{view.folder} has no data/{missing[0]}: expected a release with {self.configs}")
        for line in staged_write(args.out, lambda staging: self._written(view, staging, args)):
            print(line)
        inputs = self.reread(args.out)
        if inputs is not None:
            print(f"to release these files again: {inputs.command(release.corpus)}")
        return 0

    def _written(self, view: ReleaseView, out: Path, options: argparse.Namespace) -> Iterator[str]:
        """:meth:`write`, then what it left out of a re-anchored release listed in ``dropped.tsv``."""
        yield from self.write(view, out, options)
        lost = view.lost if isinstance(view, KeptView) else []
        if lost:
            write_dropped(out, [span.tsv_fields() for span in lost])
            listed = out / DROPPED_FILE
            yield f"left out {len(lost)} annotation(s) holding a span lost when re-anchoring, listed in {listed}"

    @abstractmethod
    def write(self, view: ReleaseView, out: Path, options: argparse.Namespace | None = None) -> Iterator[str]:
        """Write the export into ``out``, yielding one line per file or folder written."""

    def reread(self, out: Path) -> ReleaseInputs | None:
        """The inputs that release the corpus again from an export in ``out``; None when no builder reads it."""
        return None

    def kept(self, config: str, row: dict[str, Any]) -> dict[str, Any]:
        """A released row as the format holds it: what :attr:`lost` names erased or put in a comparable form."""
        return row

    def read_back(self, out: Path) -> dict[str, Any]:
        """For a format no builder reads: the export in ``out`` read by the format's reader, by document."""
        raise NotImplementedError(f"{type(self).__name__} is read back by releasing it again (reread)")

    def expected(self, view: ReleaseView) -> dict[str, Any]:
        """For a format no builder reads: what :meth:`read_back` must give for ``view``, by document."""
        raise NotImplementedError(f"{type(self).__name__} is read back by releasing it again (reread)")


STAGING_PREFIX = ".export-staging-"


def staged_write(out: Path, write: Callable[[Path], Iterator[str]]) -> list[str]:
    """Run ``write`` into a hidden staging folder inside ``out`` and move what it wrote into ``out`` once it
    finished: an export that fails leaves nothing behind (``out`` is removed again when this run made it).
    Returns ``write``'s lines, naming ``out`` instead of the staging folder."""
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out))
    try:
        lines = list(write(staging))
        for entry in sorted(staging.iterdir()):
            entry.rename(out / entry.name)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if made and not any(out.iterdir()):
            out.rmdir()
        raise
    staging.rmdir()
    return [line.replace(str(staging), str(out)) for line in lines]


def lost_text(lost: tuple[str, ...]) -> str:
    """The ``--help`` paragraph listing what a format cannot hold."""
    if not lost:
        return "Nothing released is lost: releasing the exported files again gives byte-identical data."
    items = (textwrap.fill(item, width=100, initial_indent="  - ", subsequent_indent="    ") for item in lost)
    return "What this format cannot hold (lost in the export):\n" + "\n".join(items)


DROPPED_FILE = EXPORT_LISTING
"""Written in an export folder when something released is not exported as such: one item a line, with why."""
DROPPED_COLUMNS = ("split", "record", "chain", "item", "start", "end", "reason")
"""Its columns: the record, the chain (of a mention, if any), the mention or field, its character offsets."""


def write_dropped(out: Path, lines: Iterable[tuple[str, ...]]) -> None:
    """Add ``lines`` (:data:`DROPPED_COLUMNS`) to ``out/dropped.tsv``, its header first when it is new."""
    path = out / DROPPED_FILE
    new = not path.exists()
    with open(path, "a", encoding="utf-8", newline="") as handle:
        if new:
            handle.write("\t".join(DROPPED_COLUMNS) + "\n")
        for line in lines:
            handle.write("\t".join(field.replace("\t", " ").replace("\n", " ") for field in line) + "\n")


def write_text(path: Path, text: str) -> None:
    """UTF-8 text, line endings untouched (offsets count every character), parents created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
