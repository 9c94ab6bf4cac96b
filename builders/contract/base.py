"""The builder contract every corpus implements, and what the pipeline hands it.

A builder declares ``CONFIGS`` (config name → pydantic record model) and its options (:data:`Builder.OPTIONS`, a
:class:`BuilderOptions` dataclass, as Hugging Face ``datasets``' BuilderConfig), reads its named
sources from a :class:`BuildContext` and yields :class:`Row` objects. It may also report agreement
(:meth:`Builder.agreement`), card statistics (:meth:`Builder.statistics`) and extra tables for the
expectation suite (:meth:`Builder.quality_tables`). The pipeline does everything else.

Shards. A builder whose documents build independently lists them in :meth:`Builder.shards`, the
``gen_kwargs`` of Hugging Face ``datasets`` (``{"pages": [page, ...]}``; list values are cut together into
contiguous groups, other values passed unchanged), and builds one group in :meth:`Builder.generate_shard`.
``clincorp release --workers N`` builds the groups in N processes; rows come back in document order, so a
release is byte-identical whatever N. A group must not depend on which other documents share it: what
spans documents (splits drawn over every case, checks across files, rejects made once) is done in
``shards()``, which runs once per build in the main process, and passed on in the lists or as a shared
value (documents a check must see together, such as patients sharing a chain id, are one list item); the
later hooks (agreement, statistics) read the written release, not state left on the builder
by a worker. What aggregates over every document (a table of the concepts all notes link) is built in the
main process by :meth:`Builder.aggregate` from the :class:`Partial` values the shards yield beside their
rows, in document order. A builder that lists nothing (the default) is one shard, built by
:meth:`Builder.generate` (whose default is ``generate_shard`` over every document, then ``aggregate``).

Beyond one machine the same groups run as Ray tasks (``clincorp release --engine ray``), each calling
``generate_shard`` and returning the Arrow record batches ``builders.release.workers`` makes; the batches,
taken in group order, feed the same parquet writer and gates, so the bytes are those of one process.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

from pydantic import BaseModel, ValidationError

from clinical_corpora.core.card import CardSection
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.core.file_limits import ARROW_STRING_BYTES, MAX_FILE_BYTES
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.reader_changes import ReaderChange
from clinical_corpora.core.results import BaselineScore
from clinical_corpora.core.text_encoding import source_encoding

if TYPE_CHECKING:
    import pandas as pd

    from clinical_corpora.builders.contract.display import DocumentDisplay, RowReader
    from clinical_corpora.builders.contract.release_view import ReleaseView
    from clinical_corpora.validation.expectations import TableBatches

OnError = Literal["fail", "quarantine"]


@dataclass(frozen=True)
class Row:
    """One record of one config and split."""

    config: str
    split: str
    record: BaseModel


@dataclass(frozen=True)
class Reject:
    """A record kept out of the release, or an annotation kept out of its released record, and why."""

    where: str
    reason: str
    kind: Literal["record", "annotation"] = "record"


@dataclass(frozen=True)
class Partial:
    """What a shard hands to :meth:`Builder.aggregate` beside its rows (e.g. one note's linked mentions)."""

    value: Any


def rows_only(items: Iterable[Row | Partial], partials: list[Any]) -> Iterator[Row]:
    """The rows of a shard's output; its :class:`Partial` values are appended to ``partials``."""
    for item in items:
        if isinstance(item, Partial):
            partials.append(item.value)
        else:
            yield item


@dataclass(frozen=True)
class BuilderOptions:
    """A builder's options: each builder declares its own subclass, with typed fields and defaults (the
    builder's behaviour, never a module constant, an environment variable or a subclass). ``clincorp release
    --option NAME=VALUE`` sets one for a run; a release records those that differ from the defaults, in its
    manifest and card, and is rebuilt (and validated) with them.

    Every builder has ``max_file_bytes``: the largest file its readers hold whole (a note's text, its
    annotation file, a page), an error naming the file beyond it (:mod:`core.file_limits`)."""

    max_file_bytes: int = MAX_FILE_BYTES
    """Largest file read whole, in bytes (at most 2,147,483,647, what one Arrow string holds)."""

    def __post_init__(self) -> None:
        if not 1 <= self.max_file_bytes <= ARROW_STRING_BYTES:
            raise ClincorpError(
                f"builder option max_file_bytes is {self.max_file_bytes}: expected 1 to {ARROW_STRING_BYTES:,} "
                "(one document's text must fit in an Arrow string)"
            )

    @classmethod
    def parse(cls, values: Mapping[str, Any]) -> Self:
        """The options with ``values`` (name → a value of the field's type, or its text as given on the
        command line) over the defaults; a ClincorpError naming an unknown option or a value of the wrong type."""
        fields = {field.name: field for field in dataclasses.fields(cls)}
        parsed: dict[str, Any] = {}
        for name, value in values.items():
            if name not in fields:
                known = ", ".join(sorted(fields)) or "none"
                raise ClincorpError(f"unknown builder option {name!r}; this corpus's options: {known}")
            parsed[name] = _option_value(name, fields[name].type, value)
        return cls(**parsed)

    def changed(self) -> dict[str, Any]:
        """The options that differ from their defaults (what a release records)."""
        default = type(self)()
        return {
            field.name: getattr(self, field.name)
            for field in dataclasses.fields(self)
            if getattr(self, field.name) != getattr(default, field.name)
        }


_OPTION_TYPES: dict[str, type] = {"bool": bool, "int": int, "float": float, "str": str}
_EXPECTED = {bool: "true or false", int: "a whole number", float: "a number", str: "text"}


def _option_value(name: str, declared: Any, value: Any) -> Any:
    """``value`` as the option's declared type (bool, int, float or str); command-line text is converted."""
    kind = _OPTION_TYPES.get(declared if isinstance(declared, str) else getattr(declared, "__name__", ""))
    if kind is None:
        raise ClincorpError(f"builder option {name!r} has type {declared!r}; options are bool, int, float or str")
    typed: Any = _from_text(name, kind, value) if isinstance(value, str) and kind is not str else value
    if kind is float and type(typed) is int:
        typed = float(typed)
    if type(typed) is not kind:
        raise ClincorpError(f"builder option {name!r} takes {_EXPECTED[kind]}, got {typed!r}")
    return typed


def _from_text(name: str, kind: type, text: str) -> Any:
    if kind is bool:
        if text.lower() not in ("true", "false"):
            raise ClincorpError(f"builder option {name!r} takes {_EXPECTED[bool]}, got {text!r}")
        return text.lower() == "true"
    try:
        return kind(text)
    except ValueError:
        raise ClincorpError(f"builder option {name!r} takes {_EXPECTED[kind]}, got {text!r}") from None


@dataclass
class AgreementReport:
    """Agreement measures (gated by corpus.yaml thresholds) and their tables for the card."""

    measures: dict[str, float]
    sections: list[CardSection] = field(default_factory=list)


class BuildContext:
    """The sources a build reads, the encodings the user named for their copies (source → encoding,
    ``core.text_encoding.EVERY_SOURCE`` for all; UTF-8 otherwise), and the bookkeeping of read and rejected
    records and of what the readers changed (lines read otherwise than written, listed in the release)."""

    def __init__(
        self,
        manifest: CorpusManifest,
        sources: dict[str, Path | None],
        on_error: OnError = "fail",
        encodings: Mapping[str, str] | None = None,
    ) -> None:
        self.manifest = manifest
        self.sources = sources
        self.on_error: OnError = on_error
        self.encodings: Mapping[str, str] = encodings or {}
        self.decoded: dict[str, str] = {}
        """Source → the encoding its reader asked for (:meth:`encoding`): the sources read as text it decodes."""
        self.read = 0
        self.rejects: list[Reject] = []
        self.reader_changes: list[ReaderChange] = []

    def encoding(self, name: str) -> str:
        """The encoding a reader decodes source ``name`` in (recorded in :attr:`decoded`)."""
        self.decoded[name] = source_encoding(self.encodings, name)
        return self.decoded[name]

    def source(self, name: str) -> Path:
        """The path of a source; an error if it was not given."""
        path = self.sources.get(name)
        if path is None:
            raise ClincorpError(f"source {name!r} is needed but was not given (use --source {name}=PATH)")
        return path

    def has_source(self, name: str) -> bool:
        return self.sources.get(name) is not None

    @contextmanager
    def record(self, where: str) -> Iterator[None]:
        """Count one raw record; its SourceError or ValidationError fails the build or is quarantined.

        ``where`` names the record (file and line, or file and id) for messages and rejects.jsonl.
        """
        self.read += 1
        try:
            yield
        except SourceError as error:
            self.reject(error)
        except ValidationError as error:
            self.reject(_schema_error(where, error))

    @contextmanager
    def annotation(self, where: str) -> Iterator[None]:
        """One annotation of a record: its SourceError or ValidationError fails the build or quarantines
        the annotation alone, and the record is released without it."""
        try:
            yield
        except SourceError as error:
            self.reject(error, "annotation")
        except ValidationError as error:
            self.reject(_schema_error(where, error), "annotation")

    def reject(self, error: SourceError, kind: Literal["record", "annotation"] = "record") -> None:
        """Fail the build with ``error``, or quarantine the record (or annotation) it names, its path
        source-relative."""
        if self.on_error == "fail":
            raise error
        where = SourceError(self.relative(error.path), error.message, line=error.line, record=error.record)
        self.rejects.append(Reject(where=where.location, reason=error.message, kind=kind))

    def record_changes(self, changes: Iterable[ReaderChange]) -> None:
        """Keep what a reader changed for the release (each file named source-relative)."""
        self.reader_changes += [dataclasses.replace(change, path=self.relative(change.path)) for change in changes]

    def rejected(self, kind: Literal["record", "annotation"]) -> int:
        return sum(reject.kind == kind for reject in self.rejects)

    def relative(self, path: str) -> str:
        """``<source>/<path inside it>`` for a path under a source, so releases hold no machine paths."""
        for name, root in self.sources.items():
            prefix = str(root)
            if root is not None and path.startswith(prefix) and path[len(prefix) :][:1] in ("", "/", ":"):
                named = f"{name}/{root.name}" if root.is_file() else name
                return named + path[len(prefix) :]
        return path


def _schema_error(where: str, error: ValidationError) -> SourceError:
    problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'record'}: {e['msg']}" for e in error.errors())
    return SourceError(where, f"record does not match its schema: {problems}")


class Builder:
    """Base class of corpus builders."""

    CONFIGS: ClassVar[dict[str, type[BaseModel]]]
    OPTIONS: ClassVar[type[BuilderOptions]] = BuilderOptions
    """The builder's options dataclass (none by default)."""
    DOCUMENTS: ClassVar[dict[str, str]] = {}
    """Per source, the files its documents are (e.g. ``{"bmj_html": "<case id>.html"}``), named in the
    error a build that reads no document gets."""
    RECORD_CONFIG: ClassVar[str | None] = None
    """The config with one row per record read (each :meth:`BuildContext.record` is released as one row of it,
    or rejected): ``clincorp validate`` checks a release's ``counts.read`` against it. None: not checked."""

    def __init__(self, options: BuilderOptions | None = None) -> None:
        self.options = options if options is not None else self.OPTIONS()
        if not isinstance(self.options, self.OPTIONS):
            raise ClincorpError(f"{type(self).__name__} takes {self.OPTIONS.__name__}, not {type(options).__name__}")

    @classmethod
    def for_corpus(cls, corpus: CorpusManifest, options: BuilderOptions) -> Builder:
        """The builder of ``corpus``: this class with ``options``, unless corpus.yaml configures it (the generic
        BRAT builder derives its record models from the corpus's ``brat:`` declaration)."""
        return cls(options)

    def generate(self, ctx: BuildContext) -> Iterator[Row]:
        """Yield every record of every config, reading sources from ``ctx``; by default every shard."""
        documents = self.shards(ctx)
        if not documents:
            raise NotImplementedError(f"{type(self).__name__} implements neither generate() nor shards()")
        return self.generate_documents(ctx, documents)

    def generate_documents(self, ctx: BuildContext, documents: dict[str, Any]) -> Iterator[Row]:
        """Every record of ``documents`` (what :meth:`shards` gave) as one shard, then the aggregates."""
        partials: list[Any] = []
        yield from rows_only(self.generate_shard(ctx, **documents), partials)
        yield from self.aggregate(ctx, partials)

    def shards(self, ctx: BuildContext) -> dict[str, Any]:
        """The documents as ``gen_kwargs`` for :meth:`generate_shard` (equal-length lists are cut into
        groups); empty (the default) when the build is one shard, :meth:`generate`."""
        return {}

    generate_shard: Callable[..., Iterator[Row | Partial]]
    """``generate_shard(ctx, **documents)``: the records of one group of documents (slices of the lists
    :meth:`shards` gives, as keyword arguments), in the order :meth:`generate` would yield them, and the
    :class:`Partial` values :meth:`aggregate` needs."""

    def aggregate(self, ctx: BuildContext, partials: list[Any]) -> Iterator[Row]:
        """The records built over every document, from the shards' partial values in document order (run
        once, in the main process, after every shard); none by default."""
        return iter(())

    def workers_started(self) -> None:
        """Called in the main process once the worker processes have started, each with its own copy of
        what :meth:`shards` loaded: drop what only :meth:`generate_shard` needs. Nothing by default."""

    def built(self) -> None:
        """Called once every record is written: drop what only building needed (a dictionary, a model), since
        the gates and the card read the written release. Nothing by default."""

    def count(self, ctx: BuildContext) -> int | None:
        """How many raw records (``ctx.record`` calls) :meth:`generate` will read, when that is cheap to
        know (a file listing, a small annotation file); None otherwise. The progress bar's total."""
        return None

    def agreement(self, ctx: BuildContext, release: ReleaseView) -> AgreementReport | None:
        """Inter-annotator agreement when annotator data is given, else None."""
        return None

    def statistics(self, release: ReleaseView) -> list[CardSection]:
        """Corpus statistics for the dataset card, computed from the written release alone (``clincorp
        validate`` computes them again and draws the card again)."""
        return []

    def baselines(self, release: ReleaseView) -> list[BaselineScore]:
        """The corpus's non-neural baselines run on the written release and scored as ``clincorp score`` scores
        their predictions, for the card's baselines table; deterministic (a random baseline's seed fixed), as
        ``clincorp validate`` runs them again. None by default."""
        return []

    def note_sources(self, release: ReleaseView) -> tuple[str, ...] | None:
        """The sources the release's notes come from (SHAC's mimic and uw), sorted, when its rows say; None
        when the corpus does not record them. A published number's ``applies_to`` is checked against them."""
        return None

    def measured(self) -> list[CardSection]:
        """Card sections of what only the build could see (what the readers met, such as spans read with
        whitespace at their ends), once every record is written: the release records them in validation.json,
        as no one can compute them again from its rows. None by default."""
        return []

    def quality_tables(self, release: ReleaseView) -> Mapping[str, pd.DataFrame | TableBatches]:
        """Derived tables the expectation suite checks, beside the flattened configs: each a DataFrame, or a
        function giving the asked columns batch by batch (``validation.expectations.TableBatches``), which keeps
        a large corpus's table out of memory."""
        return {}

    def source_documents(self, ctx: BuildContext, config: str, row: Mapping[str, Any]) -> list[str]:
        """The locators (``<source>:<key>``, e.g. ``noteevents:12345``) of the documents a released row's
        licensed text comes from, for its text-free variant; ``row`` is as stored (ClassLabel ids)."""
        raise ClincorpError(
            f"{type(self).__name__} names no source documents for config {config!r}, so it has no text-free "
            "variant: its source_documents hook must name them"
        )

    def read_documents(self, ctx: BuildContext, locators: Collection[str]) -> Iterator[tuple[str, str]]:
        """Stream (locator, text) for the wanted locators from the sources in ``ctx``, reading each source
        once and keeping only those; a locator the sources lack is not yielded (the caller names it)."""
        raise ClincorpError(f"{type(self).__name__} names no source documents: it has no text-free variant")

    def read_wanted(self, ctx: BuildContext, wanted: Collection[str]) -> dict[str, str]:
        """The texts of the ``wanted`` documents (locator → text), streamed from the sources by
        :meth:`read_documents` (anything else read is dropped at once)."""
        documents: dict[str, str] = {}
        for locator, text in self.read_documents(ctx, wanted):
            if locator in wanted:
                documents.setdefault(locator, text)
        return documents

    def displays(self, rows: RowReader) -> Iterator[DocumentDisplay]:
        """What ``clincorp view`` shows: one display per document of a release, in release order, from its rows
        (licensed text None in a text-free release)."""
        raise ClincorpError(f"{type(self).__name__} describes no document for clincorp view: its displays hook must")

    def annotator_displays(self, ctx: BuildContext, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
        """Each annotator's documents (annotator → document id → display) from the annotators' sources in
        ``ctx`` (and the release's ``rows``), for the view's overlay of two annotators; empty (the default)
        when there are none."""
        return {}

    def prediction_displays(self, predictions: Path, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]] | None:
        """The release's gold and a system's ``predictions`` (a file in the format the corpus's scorer reads),
        as ``{"gold": …, "system": …}`` (document id → display), for the view to draw one against the other;
        None (the default) when the corpus's view cannot read predictions."""
        return None


def make_builder(corpus: CorpusManifest, options: object = None) -> Builder:
    """The builder corpus.yaml names (``module:Class``) with ``options`` (a mapping of option values, as a
    release's manifest or ``--option`` gives them, parsed by its :class:`BuilderOptions`; None or empty: its
    defaults)."""
    builder_class = load_builder_class(corpus.builder)
    if options is not None and not isinstance(options, Mapping):
        raise ClincorpError(f"builder options must map names to values, got {options!r}")
    return builder_class.for_corpus(corpus, builder_class.OPTIONS.parse(options or {}))


def load_builder_class(reference: str) -> type[Builder]:
    """Import ``module:Class`` and check that it is a Builder."""
    module_name, _, class_name = reference.partition(":")
    try:
        builder = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise ClincorpError(f"cannot load builder {reference!r}: {error}") from error
    if not (isinstance(builder, type) and issubclass(builder, Builder)):
        raise ClincorpError(f"{reference!r} is not a Builder subclass")
    return builder
