"""UMLS Metathesaurus RRF files: streaming readers for MRCONSO.RRF and MRSTY.RRF.

RRF is pipe-delimited text, one row a line, no header, no quoting or escaping. MetamorphoSys follows
every field with a ``|`` (so a line ends with a trailing pipe); database exports of the same tables
join the fields with ``|`` and leave the trailing one out. Both layouts are read, detected per file from
its first line (as QuickUMLS and MedCAT read both, splitting on ``|`` and ignoring the empty last
field). MRCONSO has 18 columns::

    CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|SRL|SUPPRESS|CVF|

and MRSTY 6 (``CUI|TUI|STN|STY|ATUI|CVF|``). The readers stream: memory does not grow with the
file. A line with another number of fields than the file's layout, or with a CUI that is not
``C`` + 7 digits (a TUI not ``T`` + 3 digits) raises :class:`SourceError` naming file and line.

:func:`rrf_batches` reads chosen columns as Arrow record batches (pyarrow's CSV reader, ``|``-delimited,
no quoting), many times faster than the row readers. It checks the same rules per batch; a file it cannot
vouch for row by row (a carriage return anywhere, a byte-order mark, a row breaking a rule) raises
:class:`NotPlainRrf`, and the row readers then give the exact result or the error naming the line.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from clinical_corpora.builders.sources.discovery import walk_files, warn_left_out
from clinical_corpora.builders.sources.text_lines import utf8_lines
from clinical_corpora.core.errors import SourceError

MRCONSO_FILENAME = "MRCONSO.RRF"
MRSTY_FILENAME = "MRSTY.RRF"

_CUI = re.compile(r"C\d{7}")
_TUI = re.compile(r"T\d{3}")


MRCONSO_COLUMNS = tuple("CUI LAT TS LUI STT SUI ISPREF AUI SAUI SCUI SDUI SAB TTY CODE STR SRL SUPPRESS CVF".split())
MRSTY_COLUMNS = tuple("CUI TUI STN STY ATUI CVF".split())
_BLOCK_BYTES = 4 << 20


class NotPlainRrf(Exception):
    """The columnar reader cannot vouch for a file row by row: read it with the row readers instead."""


class MrconsoRow(NamedTuple):
    """One MRCONSO.RRF row (a concept name from one source); ``string`` is the STR column."""

    cui: str
    lat: str
    ts: str
    lui: str
    stt: str
    sui: str
    ispref: str
    aui: str
    saui: str
    scui: str
    sdui: str
    sab: str
    tty: str
    code: str
    string: str
    srl: str
    suppress: str
    cvf: str


class MrstyRow(NamedTuple):
    """One MRSTY.RRF row: a semantic type (TUI, STY name) of a concept."""

    cui: str
    tui: str
    stn: str
    sty: str
    atui: str
    cvf: str


def rrf_layout(path: Path, n_columns: int) -> bool:
    """Whether the rows of ``path`` end with a trailing ``|`` (MetamorphoSys writes one after every field) or
    not (database exports, ``SELECT ... INTO OUTFILE``, join the fields with ``|``), read from its first line: a
    file uses one layout throughout. An empty file counts as trailing."""
    with open(path, "rb") as handle:
        first = handle.readline().rstrip(b"\r\n")
    return not first or first.count(b"|") != n_columns - 1


def _rows(path: Path, n_columns: int, header: str) -> Iterator[tuple[int, list[str]]]:
    """The fields of each line (without the empty one after a trailing pipe), in the layout of line 1."""
    trailing: bool | None = None
    for line_number, line in utf8_lines(path):
        fields = line.rstrip("\r\n").split("|")
        if trailing is None:
            trailing = len(fields) != n_columns
        if trailing and (len(fields) != n_columns + 1 or fields[-1]):
            text_after = ", with text after the last one" if fields[-1] else ""
            raise SourceError(
                path,
                f"expected {n_columns} fields each ended by '|' ({header}|, the layout of line 1), found "
                f"{len(fields) - 1} '|'{text_after}",
                line=line_number,
            )
        if not trailing and len(fields) != n_columns:
            raise SourceError(
                path,
                f"expected {n_columns} fields joined by '|' ({header}, no trailing '|': the layout of line 1), "
                f"found {len(fields) - 1} '|'",
                line=line_number,
            )
        if trailing:
            fields.pop()
        if not _CUI.fullmatch(fields[0]):
            raise SourceError(path, f"expected a CUI (C + 7 digits) in column 1, found {fields[0]!r}", line=line_number)
        yield line_number, fields


def read_mrconso(path: str | Path) -> Iterator[MrconsoRow]:
    """Stream the rows of an MRCONSO.RRF file."""
    for _, row in read_mrconso_lines(path):
        yield row


def read_mrconso_lines(path: str | Path) -> Iterator[tuple[int, MrconsoRow]]:
    """Stream the rows of an MRCONSO.RRF file with their line numbers."""
    header = "CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|SRL|SUPPRESS|CVF"
    for line_number, fields in _rows(Path(path), 18, header):
        yield line_number, MrconsoRow._make(fields)


def read_mrsty(path: str | Path) -> Iterator[MrstyRow]:
    """Stream the rows of an MRSTY.RRF file."""
    path = Path(path)
    for line_number, fields in _rows(path, 6, "CUI|TUI|STN|STY|ATUI|CVF"):
        if not _TUI.fullmatch(fields[1]):
            raise SourceError(path, f"expected a TUI (T + 3 digits) in column 2, found {fields[1]!r}", line=line_number)
        yield MrstyRow._make(fields)


def rrf_batches(
    path: str | Path, header: Sequence[str], columns: Sequence[str]
) -> Iterator[tuple[int, pa.RecordBatch]]:
    """``(line number of the first row, batch of ``columns`` as strings)`` for an RRF file whose rows have the
    ``header`` fields; rows are lines. Raises :class:`NotPlainRrf` where the row readers' rules or line
    numbering could differ (a CUI column not ``C`` + 7 ASCII digits, a TUI column not ``T`` + 3, a wrong
    number of fields, text after the last pipe, bytes that are not UTF-8, a carriage return, a BOM)."""
    path = Path(path)
    if _has_carriage_return_or_bom(path):
        raise NotPlainRrf(path)
    trailing = rrf_layout(path, len(header))
    names = [*header, ""] if trailing else list(header)  # "": the empty field after the trailing pipe
    try:
        reader = pacsv.open_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=names, block_size=_BLOCK_BYTES),
            parse_options=pacsv.ParseOptions(
                delimiter="|", quote_char=False, escape_char=False, double_quote=False, ignore_empty_lines=False
            ),
            convert_options=pacsv.ConvertOptions(
                include_columns=[*columns, ""] if trailing else list(columns),
                column_types=dict.fromkeys(names, pa.string()),
            ),
        )
        line = 1
        for batch in reader:
            _check_batch(batch)
            yield line, batch.drop_columns([""]) if trailing else batch
            line += batch.num_rows
    except (pa.ArrowInvalid, UnicodeDecodeError) as error:
        raise NotPlainRrf(path) from error


def _check_batch(batch: pa.RecordBatch) -> None:
    if "" in batch.schema.names and not pc.all(pc.equal(batch.column(""), "")).as_py():
        raise NotPlainRrf("text after the last pipe")
    for name, pattern in (("CUI", "^C[0-9]{7}$"), ("TUI", "^T[0-9]{3}$")):
        if name in batch.schema.names and not pc.all(pc.match_substring_regex(batch.column(name), pattern)).as_py():
            raise NotPlainRrf(f"a {name} that is not plain")


def _has_carriage_return_or_bom(path: Path) -> bool:
    with open(path, "rb") as handle:
        if handle.read(3) == b"\xef\xbb\xbf":
            return True
        handle.seek(0)
        return any(b"\r" in block for block in iter(lambda: handle.read(_BLOCK_BYTES), b""))


def locate_rrf_files(meta: Path) -> tuple[Path, Path]:
    """MRCONSO.RRF and MRSTY.RRF of a UMLS ``META`` folder (names in any case); the release's other files
    are counted in a warning. A missing file, or two differing only in case, is a SourceError naming it."""
    if not meta.is_dir():
        raise SourceError(meta, f"expected a UMLS META folder holding {MRCONSO_FILENAME} and {MRSTY_FILENAME}")
    wanted: dict[str, list[Path]] = {MRCONSO_FILENAME: [], MRSTY_FILENAME: []}
    left_out: list[Path] = []
    for path in walk_files(meta):
        relative = path.relative_to(meta).as_posix()
        wanted.get(relative.upper(), left_out).append(path)
    for name, paths in wanted.items():
        if len(paths) != 1:
            found = f"found {' and '.join(path.name for path in paths)}" if paths else "missing"
            raise SourceError(meta / name, f"{found}: the umls source is a META folder with one {name}")
    if left_out:
        warn_left_out(meta, [path.relative_to(meta).as_posix() for path in left_out], "MRCONSO.RRF or MRSTY.RRF")
    return wanted[MRCONSO_FILENAME][0], wanted[MRSTY_FILENAME][0]


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (identifies an RRF release for caches and manifests)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
