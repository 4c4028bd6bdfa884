"""Reading response bodies within a bound, as they are decoded (L2).

httpx inflates a compressed chunk whole: one 64 KiB chunk of gzip-of-gzip is gigabytes.
So the client reads the raw bytes and undoes each ``Content-Encoding`` itself, with zlib's
``max_length``, in pieces of at most `PIECE_BYTES`: what a reply costs in memory is what
it decodes to, counted as it is decoded, whatever the encodings and however they stack.
Only gzip and deflate are decoded (what `ACCEPT_ENCODING` asks for); zlib bounds its output
exactly, which the zstd and brotli bindings httpx uses do not, so a reply in another
encoding is refused (`InvalidReplyError`), and one whose bytes do not decode is
`httpx.DecodingError`, as httpx has it.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import Final, cast

import httpx

from a2a_core._protocol.client import InvalidReplyError

__all__ = ["ACCEPT_ENCODING", "PIECE_BYTES", "chunks", "read_limited"]

#: What every request of the client accepts: the encodings it decodes within a bound.
ACCEPT_ENCODING: Final = "gzip, deflate"
#: The most one decoding step yields (and so holds) at once.
PIECE_BYTES: Final = 64 * 1024


class _Inflate:
    """One gzip or deflate layer, fed its input and read in pieces of bounded size."""

    def __init__(self, encoding: str) -> None:
        self._raw_fallback = encoding == "deflate"
        # deflate is the zlib format, but servers also send raw deflate (httpx reads both).
        wbits = zlib.MAX_WBITS if self._raw_fallback else zlib.MAX_WBITS | 16
        self._zlib = zlib.decompressobj(wbits)
        self._pending = b""
        self._output_full = False

    def feed(self, data: bytes) -> None:
        self._pending = self._pending + data if self._pending else data

    def read(self, size: int) -> bytes:
        """At most ``size`` bytes of output; ``b""`` when the input fed so far is spent."""
        # A read that filled its output may have left output in zlib with no input pending
        # (a match cut short): ask again, or the end of an event could wait for more bytes.
        while not self._zlib.eof and (self._pending or self._output_full):
            try:
                output = self._zlib.decompress(self._pending, size)
            except zlib.error:
                if not self._raw_fallback:
                    raise
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                self._raw_fallback = False
                continue
            self._raw_fallback = False  # the format is known from the first bytes on
            self._pending = self._zlib.unconsumed_tail
            self._output_full = len(output) == size
            if output:
                return output
        self._pending = b""  # past the end of the stream: trailing bytes are ignored
        return b""

    def finish(self) -> bytes:
        # read() left nothing in zlib but what a truncated stream holds (under one match,
        # 258 bytes), so flush(), which has no bound, is safe here.
        return b"" if self._zlib.eof else self._zlib.flush()


#: The most codings a reply's ``Content-Encoding`` may stack (``gzip, gzip`` is two).
MAX_CODINGS = 3


class BodyDecoder:
    """Undoes a reply's ``Content-Encoding`` (the codings in the order they were applied),
    yielding the decoded body in pieces of at most `PIECE_BYTES`."""

    def __init__(self, encodings: list[str], status: int | None = None) -> None:
        codings = [e.strip().lower() for e in encodings]
        codings = [e for e in codings if e and e != "identity"]
        unknown = sorted({e for e in codings if e not in ("gzip", "x-gzip", "deflate")})
        if unknown:
            raise InvalidReplyError(
                f"the reply's Content-Encoding {', '.join(unknown)[:100]} is not one the "
                f"client accepts ({ACCEPT_ENCODING})",
                status=status,
            )
        if len(codings) > MAX_CODINGS:
            # No server compresses twice on purpose; thousands of layers would cost a
            # decoder each and as many nested generators.
            raise InvalidReplyError(
                f"the reply's Content-Encoding names {len(codings)} codings; the client "
                f"undoes at most {MAX_CODINGS}",
                status=status,
            )
        # The last coding applied is the first to undo.
        self._layers = [_Inflate("deflate" if e == "deflate" else "gzip") for e in codings[::-1]]

    def feed(self, raw: bytes) -> Iterator[bytes]:
        """The decoded pieces that ``raw`` (the next bytes of the body) gives."""
        if not self._layers:
            for start in range(0, len(raw), PIECE_BYTES):
                yield raw[start : start + PIECE_BYTES]
            return
        self._layers[0].feed(raw)
        yield from self._drain(0)

    def finish(self) -> Iterator[bytes]:
        """The end of the body: what the layers still hold."""
        for index, layer in enumerate(self._layers):
            tail = layer.finish()
            if index + 1 == len(self._layers):
                if tail:
                    yield tail
            else:
                self._layers[index + 1].feed(tail)
                yield from self._drain(index + 1)

    def _drain(self, index: int) -> Iterator[bytes]:
        # Each piece of one layer goes through the next before the layer is read again, so
        # no layer ever holds more than one piece of its input.
        layer = self._layers[index]
        while piece := layer.read(PIECE_BYTES):
            if index + 1 == len(self._layers):
                yield piece
            else:
                self._layers[index + 1].feed(piece)
                yield from self._drain(index + 1)


async def chunks(response: httpx.Response) -> AsyncGenerator[bytes, None]:
    """The decoded body in pieces of at most `PIECE_BYTES`; close it with
    `contextlib.aclosing` when leaving early (trio warns of generators left to the garbage
    collector)."""
    try:
        content = response.content
    except httpx.ResponseNotRead:
        pass
    else:
        # Read whole by its transport (``httpx.MockTransport`` answers so), and decoded.
        for start in range(0, len(content), PIECE_BYTES):
            yield content[start : start + PIECE_BYTES]
        return
    encodings = response.headers.get_list("content-encoding", split_commas=True)
    decoder = BodyDecoder(encodings, response.status_code)
    try:
        # httpx's raw iterator is an async generator: closed here when the reader leaves.
        raw_chunks = cast(AsyncGenerator[bytes, None], response.aiter_raw())
        async with contextlib.aclosing(raw_chunks) as raw:
            async for data in raw:
                for piece in decoder.feed(data):
                    yield piece
        for piece in decoder.finish():
            yield piece
    except zlib.error as exc:
        raise httpx.DecodingError(f"the reply does not decode: {exc}") from None


async def read_limited(
    response: httpx.Response, limit: int, too_large: Callable[[], Exception]
) -> bytes:
    """The whole decoded body, or ``too_large()`` raised once it passes ``limit`` bytes."""
    parts: list[bytes] = []
    size = 0
    async with contextlib.aclosing(chunks(response)) as body:
        async for piece in body:
            size += len(piece)
            if size > limit:
                raise too_large()
            parts.append(piece)
    return b"".join(parts)
