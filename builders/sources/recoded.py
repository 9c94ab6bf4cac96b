"""A file in the encoding a user named for their copy (``--source-encoding``), read as the UTF-8 bytes the readers
parse: decoded chunk by chunk as it streams, so memory does not grow with the file."""

from __future__ import annotations

import codecs
import io
from typing import BinaryIO

from clinical_corpora.core.errors import EncodingError

CHUNK_BYTES = 1 << 20


class _Utf8Recoder(io.RawIOBase):
    """The bytes of ``stream`` (text in ``encoding``) as UTF-8; a byte that is not ``encoding`` text is an
    EncodingError naming it and its offset in the file."""

    def __init__(self, stream: BinaryIO, encoding: str, path: str) -> None:
        self.stream, self.encoding, self.path = stream, encoding, path
        self.decoder = codecs.getincrementaldecoder(encoding)()
        self.pending = b""
        self.offset = 0
        self.ended = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self.pending and not self.ended:
            chunk = self.stream.read(CHUNK_BYTES)
            self.ended = not chunk
            try:
                self.pending = self.decoder.decode(chunk, final=self.ended).encode("utf-8")
            except UnicodeDecodeError as error:
                at = self.offset + error.start - len(self.decoder.getstate()[0])
                raise EncodingError(
                    self.path,
                    f"expected {self.encoding} text (as --source-encoding says), found byte "
                    f"0x{error.object[error.start]:02x} at byte offset {max(at, 0)}",
                ) from None
            self.offset += len(chunk)
        size = min(len(buffer), len(self.pending))
        buffer[:size] = self.pending[:size]
        self.pending = self.pending[size:]
        return size

    def close(self) -> None:
        self.stream.close()
        super().close()


def utf8_stream(stream: BinaryIO, encoding: str, path: str) -> BinaryIO:
    """``stream`` (bytes of text in ``encoding``) as a buffered stream of UTF-8 bytes."""
    return io.BufferedReader(_Utf8Recoder(stream, encoding, path), CHUNK_BYTES)
