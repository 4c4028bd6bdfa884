"""Raw HTTP/1.1 over a socket: what a client library will not send on purpose.

A head without its body, a body that never ends, an ``Expect: 100-continue`` answered (or
not) before the body, malformed or oversized headers. `head` writes a request head byte for
byte; `ResponseReader` parses what comes back, interim ``100 Continue`` included, from a
blocking socket (`read_response`) or an anyio stream (`aread_response`).
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from dataclasses import dataclass

import anyio
from anyio.abc import ByteStream


def head(
    method: str, path: str, headers: Iterable[tuple[str, str]] = (), *, host: str = "127.0.0.1"
) -> bytes:
    """A request head (request line, ``Host`` and ``headers`` as given, blank line)."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body (``b""`` gives the last chunk)."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


@dataclass
class RawResponse:
    """One response as it came over the wire."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        """The first value of a header (names compared case-insensitively)."""
        key = name.lower()
        return next((value for item, value in self.headers if item == key), None)


class ResponseReader:
    """Parses responses from bytes fed as they arrive (one at a time, pipelining aside)."""

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, data: bytes) -> RawResponse | None:
        """Add bytes; the response once it is complete (the rest stays buffered)."""
        self.buffer += data
        return self._parse(eof=False)

    def end(self) -> RawResponse:
        """The connection closed: the response delimited by the close."""
        response = self._parse(eof=True)
        assert response is not None, f"the connection closed mid-response: {self.buffer!r}"
        return response

    def _parse(self, *, eof: bool) -> RawResponse | None:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        lines = self.buffer[:end].decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = []
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers.append((name.strip().lower(), value.strip()))
        response = RawResponse(status, headers, b"")
        rest = self.buffer[end + 4 :]
        if status < 200 or status in (204, 304):
            self.buffer = rest
            return response
        length = response.header("content-length")
        if length is not None:
            if len(rest) < int(length):
                return None
            response.body, self.buffer = rest[: int(length)], rest[int(length) :]
            return response
        if (response.header("transfer-encoding") or "").lower() == "chunked":
            return self._chunked(response, rest)
        if not eof:
            return None  # delimited by the close
        response.body, self.buffer = rest, b""
        return response

    def _chunked(self, response: RawResponse, rest: bytes) -> RawResponse | None:
        body = b""
        while True:
            line_end = rest.find(b"\r\n")
            if line_end < 0:
                return None
            size = int(rest[:line_end].split(b";")[0], 16)
            if len(rest) < line_end + 2 + size + 2:
                return None
            body += rest[line_end + 2 : line_end + 2 + size]
            rest = rest[line_end + 2 + size + 2 :]
            if size == 0:
                response.body, self.buffer = body, rest
                return response


def read_response(sock: socket.socket, reader: ResponseReader | None = None) -> RawResponse:
    """The next response on a blocking socket."""
    reader = reader or ResponseReader()
    response = reader.feed(b"")
    while response is None:
        data = sock.recv(65536)
        if not data:
            return reader.end()
        response = reader.feed(data)
    return response


async def aread_response(stream: ByteStream, reader: ResponseReader | None = None) -> RawResponse:
    """The next response on an anyio byte stream."""
    reader = reader or ResponseReader()
    response = reader.feed(b"")
    while response is None:
        try:
            data = await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return reader.end()
        response = reader.feed(data)
    return response
