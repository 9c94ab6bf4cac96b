"""Tamper evidence that ``clincorp validate`` gives for a text-free release without its sources.

The leak gate proves, with the sources, that no file holds more than :data:`LEAK_LIMIT` characters of a
source document in a row. Without them, the converse is checked: every run of prose in the release (its
cards, JSON files and parquet string values) longer than LEAK_LIMIT is made of words this package writes:
word trigrams of its own modules, corpus.yaml files and corpus READMEs (the templates of cards, gates and
manifests), and, one word at a time, the names the installed corpus declares (corpus, configs, sources,
splits, fields, labels). A run of more than LEAK_LIMIT characters with no such trigram in it is *foreign*:
text planted after the build, a note in a card or a sentence in an id.

What it cannot catch, and only ``--expect-digest`` (the maintainer's digest) or the sources (``clincorp
rehydrate`` then ``clincorp release --text-free``) can: foreign runs of LEAK_LIMIT characters or fewer,
runs made of the package's own words, and text in fields a record model marks :class:`Vocabulary` (names
from a source's open vocabulary, such as BMJ series and UMLS semantic types, which no list here holds).
"""

from __future__ import annotations

import importlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from datasets import ClassLabel, Features

from clinical_corpora.builders.contract.base import Builder
from clinical_corpora.builders.contract.release_view import ReleaseView
from clinical_corpora.builders.text_free.leak_gate import LEAK_LIMIT, parquet_strings
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.schemas.features import features_for
from clinical_corpora.schemas.licensed import vocabulary_tree

WORD = re.compile(r"[^\W\d_]+")
PROSE = re.compile(r"[^\W\d_]+(?:[ ,.;:'’()\-]+[^\W\d_]+)*")
"""A run of prose: words joined by spaces and sentence punctuation (digits, line ends, ``|``, ``/``, ``_``
and quotes end it, so ids, paths, numbers and table cells are runs of their own)."""
TOKEN = re.compile(r"[^\W\d_]+[:.\-][^\W\d_]+")
"""Two words written as one token (a prefixed key, a dotted name)."""
TEMPLATE_SUFFIXES = (".py", ".yaml", ".md")
PACKAGE_FOLDERS = ("core", "schemas", "validation", "builders", "corpora")
QUOTED = 3
"""Characters of a foreign run quoted in a problem (enough to find it; never the run itself)."""


@dataclass(frozen=True)
class PackageWords:
    """What the package writes: word trigrams of its templates and the installed corpus's names."""

    phrases: frozenset[tuple[str, ...]]
    names: frozenset[str]


def package_words(corpus: CorpusManifest, builder: Builder) -> PackageWords:
    """The trigrams of the installed package's templates and the names ``corpus`` and ``builder`` declare."""
    names = {corpus.name, *corpus.sources, *corpus.configs, "train", "dev", "validation", "test"}
    for model in builder.CONFIGS.values():
        names |= _feature_names(features_for(model))
    return PackageWords(_template_phrases(), frozenset(word.lower() for name in names for word in WORD.findall(name)))


@cache
def _template_phrases() -> frozenset[tuple[str, ...]]:
    """Word trigrams of the installed package's modules, corpus.yaml files and READMEs (samples aside), and
    the pairs of words written as one token (``rai:personalSensitiveInformation``), which make runs of two
    words."""
    phrases: set[tuple[str, ...]] = set()
    for package in PACKAGE_FOLDERS:
        root = Path(importlib.import_module(f"clinical_corpora.{package}").__file__ or "").parent
        for folder, subfolders, files in os.walk(root.resolve(), followlinks=True):
            subfolders[:] = [name for name in subfolders if name not in ("sample", "__pycache__")]
            for name in files:
                if name.endswith(TEMPLATE_SUFFIXES):
                    text = Path(folder, name).read_text(encoding="utf-8")
                    words = [word.lower() for word in WORD.findall(text)]
                    phrases.update(zip(words, words[1:], words[2:], strict=False))
                    for token in TOKEN.findall(text):
                        pair = tuple(word.lower() for word in WORD.findall(token))
                        if len(pair) == 2:
                            phrases.add(pair)
    return frozenset(phrases)


def _feature_names(features: Features | dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for name, feature in features.items():
        names.add(name)
        inner = getattr(feature, "feature", feature)
        if isinstance(inner, ClassLabel):
            names.update(inner.names)
        elif isinstance(inner, dict):
            names |= _feature_names(inner)
    return names


def foreign_runs(text: str, words: PackageWords) -> Iterator[str]:
    """The runs of prose in ``text`` longer than LEAK_LIMIT characters that none of ``words`` covers."""
    for prose in PROSE.finditer(text):
        if prose.end() - prose.start() > LEAK_LIMIT:
            yield from _uncovered(prose.group(), words)


def _uncovered(run: str, words: PackageWords) -> Iterator[str]:
    found = list(WORD.finditer(run))
    lowered = [match.group().lower() for match in found]
    covered = [word in words.names or tuple(lowered) in words.phrases for word in lowered]
    for index in range(len(lowered) - 2):
        if (lowered[index], lowered[index + 1], lowered[index + 2]) in words.phrases:
            covered[index] = covered[index + 1] = covered[index + 2] = True
    start: int | None = None
    for index, match in enumerate([*found, None]):
        if match is not None and not covered[index]:
            start = match.start() if start is None else start
            continue
        if start is not None and found[index - 1].end() - start > LEAK_LIMIT:
            yield run[start : found[index - 1].end()]
        start = None


def tamper_problems(folder: Path, corpus: CorpusManifest, builder: Builder) -> list[str]:
    """Each file of the text-free release ``folder`` holding a foreign run, with where and how long."""
    words = package_words(corpus, builder)
    skipped = {config: vocabulary_tree(model) for config, model in builder.CONFIGS.items()}
    view = ReleaseView(folder)
    shard_configs = {shard: config for config in view.configs() for shard in view.shards(config)}
    problems = []
    for path in sorted(path for path in folder.rglob("*") if path.is_file()):
        where = path.relative_to(folder).as_posix()
        if path.suffix == ".parquet":
            strings = parquet_strings(path, skipped.get(shard_configs.get(path, ""), {}))
        else:
            strings = _file_strings(path)
        for place, text in strings:
            run = next(foreign_runs(text, words), None)
            if run is not None:
                problems.append(
                    f"{where}{place}: {len(run)} characters of prose this package does not write "
                    f"(from {run[:QUOTED]!r}…); text planted after the build?"
                )
                break
    return problems


def _file_strings(path: Path) -> Iterator[tuple[str, str]]:
    """A JSON file's string values (with their key path), a JSON Lines file's by line, else the text by line;
    read a line at a time but for a JSON file."""
    if path.suffix == ".json":
        text = path.read_bytes().decode("utf-8", "replace")
        yield from _json_line_strings(text, "")
        return
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, start=1):
            line = line.rstrip("\n")
            if path.suffix == ".jsonl":
                yield from _json_line_strings(line, f" line {number}")
            else:
                yield f" line {number}", line


def _json_line_strings(text: str, where: str) -> Iterator[tuple[str, str]]:
    """The string values (and keys) of a JSON text with their key path, or the text when it is not JSON."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        yield where, text
        return
    for key, string in _json_strings(value, ""):
        yield where + (f" at {key}" if key else ""), string


def _json_strings(value: Any, key: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, dict):
        for name, item in value.items():
            yield from _json_strings(name, key)
            yield from _json_strings(item, f"{key}.{name}" if key else str(name))
    elif isinstance(value, list):
        for item in value:
            yield from _json_strings(item, f"{key}[]")
