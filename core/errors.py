"""Errors raised by readers, builders, gates and releases.

Every error about raw input names where it happened (file, and line or record) and what was
expected, so a maintainer holding real licensed files can find and fix the offending record.
"""

from __future__ import annotations

from pathlib import Path


class ClincorpError(Exception):
    """Base class of every error this package raises on purpose."""


class SourceError(ClincorpError):
    """A raw input does not match its format.

    ``path`` is the file, ``line`` the 1-based line (or ``record`` an id such as a note_id when
    lines do not apply), ``message`` says what was found and what was expected.
    """

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        line: int | None = None,
        record: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.record = record
        self.message = message
        super().__init__(str(self))

    def __reduce__(self) -> tuple:
        """Picklable (errors cross worker processes)."""
        return (_rebuild_source_error, (self.path, self.message, self.line, self.record))

    @property
    def location(self) -> str:
        """``file:line`` or ``file [record id]`` or just ``file``."""
        if self.line is not None:
            return f"{self.path}:{self.line}"
        if self.record is not None:
            return f"{self.path} [{self.record}]"
        return self.path

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


class EncodingError(SourceError):
    """A raw input's bytes are not text in the encoding it is read in (UTF-8 unless the user names another)."""

    def __reduce__(self) -> tuple:
        return (_rebuild_encoding_error, (self.path, self.message, self.line, self.record))


def _rebuild_encoding_error(path: str, message: str, line: int | None, record: str | None) -> EncodingError:
    return EncodingError(path, message, line=line, record=record)


def _rebuild_source_error(path: str, message: str, line: int | None, record: str | None) -> SourceError:
    return SourceError(path, message, line=line, record=record)


class GateError(ClincorpError):
    """A release gate (schema, expectations, agreement, rejects) failed."""


class ReleaseError(ClincorpError):
    """A release cannot be written (e.g. the version exists with different bytes)."""


EXCERPT_LIMIT = 20


def excerpt(text: str, limit: int = EXCERPT_LIMIT) -> str:
    """``text`` quoted for an error or a reject reason, cut to ``limit`` characters with an ellipsis.

    Reasons land in logs and rejects.jsonl, which anyone may read: they cite offsets and at most a short
    excerpt of licensed note text.
    """
    return repr(text) if len(text) <= limit else repr(text[: limit - 1]) + "…"


def record_name(record_id: object) -> object:
    """A record's id for a message: as it is when it is an id (short, no whitespace), else its text cut to an
    excerpt (an id that is not a valid record's may hold anything, even licensed text)."""
    text = str(record_id)
    return record_id if len(text) <= 128 and text and not any(c.isspace() for c in text) else excerpt(text)


def error_line(error: BaseException, limit: int = 200) -> str:
    """The first line of a library's error, as a message may quote it: at most ``limit`` characters, anything
    unprintable (a corrupt file's bytes) shown as ``?``."""
    line = (str(error).splitlines() or [type(error).__name__])[0][:limit]
    return "".join(character if character.isprintable() else "?" for character in line)
