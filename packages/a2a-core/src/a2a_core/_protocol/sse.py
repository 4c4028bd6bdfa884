"""Server-Sent Events: the framing of A2A streams and the encoding of each event in them.

This module owns everything between "the runtime has the next `StreamResponse`" and "these
bytes go on the wire" (spec-decisions F9):

- `STREAM_HEADERS` / `stream_headers`: the response headers of every stream;
- `data_frame` / `comment_frame`: one SSE frame from ready JSON bytes, or a comment;
- `EventStream`: one stream's encoder. It knows the binding, the dialect and the JSON-RPC
  request id, turns each event into one complete frame in that dialect, closes itself after
  the event that ends the stream (`ends_stream` with the stream's closing states: a send
  stream's `CLOSING_STATES` or a subscription's `SUBSCRIPTION_CLOSING_STATES`,
  spec-decisions A6) or after one error frame (spec-decisions F7), and then refuses to
  encode anything more, as h11 refuses data after end-of-message;
- `SseParser` / `parse_frames`: a faithful minimal parser of the WHATWG event-stream format,
  for tests and for clients built on the core.

What goes into each frame's ``data:`` is a small table (`EventStream` documents it), so that
a new binding or dialect is one more row. Everything is pure and synchronous: the runtime
decides *when* a frame is written (and when to send a keep-alive), this module only says
*what* the bytes are.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from a2a_core._protocol import codec
from a2a_core._protocol.errors import (
    A2AError,
    HttpStatusTable,
    LocalProtocolError,
    TableName,
    rest_error_body,
)
from a2a_core._protocol.grpc import codec as grpc_codec
from a2a_core._protocol.grpc.binding import status_of, trailers_frame
from a2a_core._protocol.jsonrpc import JsonRpcId, encode_error, encode_result
from a2a_core._protocol.operations import Binding, Dialect
from a2a_core.compat.v0_3.convert import stream_event_from_v1
from a2a_core.compat.v0_3.rest_convert import stream_response_from_v1
from a2a_core.types import TERMINAL_STATES, StreamResponse, TaskState

__all__ = [
    "CLOSING_STATES",
    "STREAM_HEADERS",
    "Binding",
    "EventEncoder",
    "EventStream",
    "Frame",
    "SUBSCRIPTION_CLOSING_STATES",
    "SseParser",
    "comment_frame",
    "data_frame",
    "ends_stream",
    "parse_frames",
    "stream_headers",
]


#: Encodes one event as the JSON that a binding carries for it: the ``result`` of a JSON-RPC
#: response, or the whole ``data:`` of a REST frame. It must return one line of JSON.
EventEncoder = Callable[[StreamResponse], bytes]

#: The response headers of every stream, as lower-case ``(name, value)`` pairs.
#: ``no-cache`` keeps caches from storing or replaying a live stream. ``x-accel-buffering:
#: no`` tells nginx (and proxies that copy its convention) not to buffer the response: by
#: default nginx collects upstream output into buffers before passing it on, which holds
#: events back for seconds and can swallow keep-alive comments until a proxy times out.
STREAM_HEADERS: Final[tuple[tuple[str, str], ...]] = (
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("x-accel-buffering", "no"),
)


def stream_headers(extra: Iterable[tuple[str, str]] = ()) -> tuple[tuple[str, str], ...]:
    """`STREAM_HEADERS` followed by ``extra`` (e.g. ``A2A-Version``), names lower-cased."""
    return STREAM_HEADERS + tuple((name.lower(), value) for name, value in extra)


# ---------------------------------------------------------------------------------------
# Frames


def _check_line(value: bytes, what: str) -> None:
    # A CR or LF inside a field ends the line early: the rest would be read as another field
    # (or a blank line would dispatch half an event). Only our own code produces these bytes,
    # so this is a developer's bug, never client input.
    if b"\n" in value or b"\r" in value:
        raise LocalProtocolError(f"SSE {what} must not contain a line break")


def data_frame(data: bytes, event_id: str | int | None = None) -> bytes:
    """One SSE frame: ``id: <event_id>`` (unless ``None``), ``data: <data>``, a blank line.

    ``data`` must be one line, as compact JSON from msgspec always is (it escapes line breaks
    inside strings); an ``event_id`` must contain neither line breaks nor NUL (a client
    ignores an id with NUL, WHATWG). Either mistake raises `LocalProtocolError`.
    """
    _check_line(data, "data")
    if event_id is None:
        return b"data: " + data + b"\n\n"
    id_bytes = str(event_id).encode()
    _check_line(id_bytes, "id")
    if b"\0" in id_bytes:
        raise LocalProtocolError("SSE id must not contain NUL")
    return b"".join((b"id: ", id_bytes, b"\ndata: ", data, b"\n\n"))


def comment_frame(text: str = "keep-alive") -> bytes:
    """A comment frame, ``: <text>`` and a blank line: ignored by clients, kept by proxies.

    Sent while a stream is idle so that proxies and load balancers that cut quiet
    connections keep it open (spec-decisions F9). A line break in ``text`` raises
    `LocalProtocolError`.
    """
    encoded = text.encode()
    _check_line(encoded, "comment")
    return b": " + encoded + b"\n\n" if encoded else b":\n\n"


# ---------------------------------------------------------------------------------------
# Which event ends a stream

#: Task states after which a SendStreamingMessage stream closes: the terminal states and
#: input-required. This is the reference SDK's choice (spec-decisions A6); auth-required keeps the
#: stream open (spec §7.6.1: the client authenticates out of band and the task goes on in the
#: same stream).
CLOSING_STATES: Final[frozenset[TaskState]] = frozenset(
    {
        TaskState.COMPLETED,
        TaskState.FAILED,
        TaskState.CANCELED,
        TaskState.REJECTED,
        TaskState.INPUT_REQUIRED,
    }
)
#: Task states after which a SubscribeToTask (v0.3 ``tasks/resubscribe``) stream closes: the
#: terminal states only (spec §3.1.6, spec-decisions A6), so that a subscriber can watch a
#: multi-turn task across any number of interruptions.
SUBSCRIPTION_CLOSING_STATES: Final[frozenset[TaskState]] = frozenset(TERMINAL_STATES)


def ends_stream(
    event: StreamResponse, closing_states: frozenset[TaskState] = CLOSING_STATES
) -> bool:
    """Whether ``event`` is the last one of its stream (spec-decisions F9, A6).

    A message ends a message-only stream; a task snapshot or a status update ends a task
    stream when its state is in ``closing_states`` (a send stream's `CLOSING_STATES` by
    default, a subscription's `SUBSCRIPTION_CLOSING_STATES`); an artifact update never
    does. `EventStream` applies the same rule to stop writing, and the v0.3 ``final`` flag
    is computed from it, so that a v0.3 client sees ``final: true`` exactly on the last
    event.
    """
    if event.message is not None:
        return True
    if event.task is not None:
        return event.task.status.state in closing_states
    if event.status_update is not None:
        return event.status_update.status.state in closing_states
    return False


# ---------------------------------------------------------------------------------------
# Per-event payloads: the table


#: A built-in payload encoder: the event, and whether it is the last one of its stream (the
#: v0.3 dialects carry that as ``final``).
_Payload = Callable[[StreamResponse, bool], bytes]


def _encode_v1(event: StreamResponse, _final: bool) -> bytes:
    # ProtoJSON of the oneof wrapper: {"task":…} | {"message":…} | {"statusUpdate":…} | …
    return codec.encode(event)


def _encode_v0_3(event: StreamResponse, final: bool) -> bytes:
    # The bare v0.3 object with its `kind`, `final` on the stream's last event.
    return codec.encode(stream_event_from_v1(event, final=final))


def _encode_rest_v0_3(event: StreamResponse, final: bool) -> bytes:
    # The ProtoJSON of the v0.3 *proto*'s StreamResponse (spec-decisions F9): not the JSON-RPC kind
    # object; its status updates carry `final` too.
    return codec.encode(stream_response_from_v1(event, final=final))


def _encode_protobuf(event: StreamResponse, _final: bool) -> bytes:
    # The protobuf StreamResponse, the message of a gRPC stream.
    return grpc_codec.encode(event, "StreamResponse")


#: The payload of each event per (binding, dialect).
_PAYLOADS: Final[Mapping[tuple[Binding, Dialect], _Payload]] = MappingProxyType(
    {
        ("jsonrpc", "1.0"): _encode_v1,
        ("jsonrpc", "0.3"): _encode_v0_3,
        ("rest", "1.0"): _encode_v1,
        ("rest", "0.3"): _encode_rest_v0_3,
        ("grpc", "1.0"): _encode_protobuf,
    }
)
#: The payloads that carry the v0.3 ``final`` flag, so depend on the stream's closing states.
_CARRY_FINAL: Final = frozenset({_encode_v0_3, _encode_rest_v0_3})


class EventStream:
    """The encoder of one SSE stream: each event in, one complete frame out.

    What each frame's ``data:`` holds (spec-decisions F9):

    ==========  =======  ===================================================================
    binding     dialect  data
    ==========  =======  ===================================================================
    jsonrpc     1.0      ``{"jsonrpc":"2.0","id":<request_id>,"result":<StreamResponse>}``
    jsonrpc     0.3      the same envelope; ``result`` is the v0.3 Task, Message,
                         ``status-update`` (with ``final``) or ``artifact-update``
    rest        1.0      the bare ``StreamResponse``
    rest        0.3      the ProtoJSON of the v0.3 proto's StreamResponse (status updates
                         with ``final``)
    grpc        1.0      not SSE: each event is a gRPC length-prefixed protobuf
                         ``StreamResponse``, with no id; an error is a trailers frame with
                         the status (`a2a_core._protocol.grpc.binding`); a keep-alive is
                         nothing (HTTP/2 PINGs keep the connection alive)
    ==========  =======  ===================================================================

    ``event_encoder`` overrides the payload of any row; the JSON-RPC envelope is still added
    around it. The error frame is a JSON-RPC error response with the same id in the
    dialect, or on REST an AIP-193 body (the status table chooses its ``code``; mid-stream
    REST errors are unspecified, spec-decisions F7, so both dialects use the v1.0 form, and v0.3
    adds the JSON-RPC ``code`` and ``message`` at the top level, as its clients read them).

    The stream *finishes* after the event for which `ends_stream` is true with the stream's
    ``closing_states``, or after the error frame; from then on `encode`, `encode_error` and
    `keep_alive` raise `LocalProtocolError`, since writing after the end is a bug in the
    caller.

    Streams of one task's subscribers can share the payload of an event instead of each
    encoding (and holding) its own: `share_key` says which streams carry the same payload
    bytes for the same event, `encode_payload` encodes it once, and `encode_around` gives
    each stream its own ``id:`` line and JSON-RPC envelope around it.
    """

    __slots__ = (
        "_encode_payload",
        "_envelope",
        "_finished",
        "_status_table",
        "_trusted",
        "binding",
        "closing_states",
        "dialect",
        "headers",
        "request_id",
    )

    binding: Binding
    dialect: Dialect
    request_id: JsonRpcId

    def __init__(
        self,
        binding: Binding,
        dialect: Dialect,
        request_id: JsonRpcId = None,
        *,
        event_encoder: EventEncoder | None = None,
        status_table: HttpStatusTable | TableName = HttpStatusTable.V1_0_0,
        closing_states: frozenset[TaskState] = CLOSING_STATES,
        headers: tuple[tuple[str, str], ...] = STREAM_HEADERS,
    ) -> None:
        """Open the encoder of one stream.

        ``request_id`` is the JSON-RPC request's id (``None`` answers ``"id": null``); a
        REST stream has none, and passing one is an error. A binding or dialect not in the
        table raises ``ValueError``. ``closing_states`` are the task states whose snapshot or
        status update ends the stream: `CLOSING_STATES` for a send stream,
        `SUBSCRIPTION_CLOSING_STATES` for a subscription. ``headers`` are the response
        headers of the stream (`ServerProtocol.open_event_stream` adds the call's own to
        `STREAM_HEADERS`).
        """
        if (binding, dialect) not in _PAYLOADS:
            raise ValueError(f"no SSE encoding for binding {binding!r}, dialect {dialect!r}")
        if binding != "jsonrpc" and request_id is not None:
            raise ValueError(f"a {binding} stream has no JSON-RPC request id")
        self.binding = binding
        self.dialect = dialect
        self.request_id = request_id
        #: The response headers of the stream.
        self.headers = headers
        self.closing_states = closing_states
        payload: _Payload
        if event_encoder is None:
            payload = _PAYLOADS[binding, dialect]
        else:
            custom = event_encoder
            payload = lambda event, _final: custom(event)  # noqa: E731
        self._encode_payload = payload
        # Our own encoders are msgspec's compact JSON, which never holds a raw line break.
        self._trusted = event_encoder is None
        self._status_table = HttpStatusTable(status_table)
        self._finished = False
        self._envelope: bytes | None = None  # the JSON-RPC envelope up to "result":

    @property
    def finished(self) -> bool:
        """Whether the stream has ended; nothing more may be encoded."""
        return self._finished

    @property
    def whole_frames(self) -> bool:
        """Whether each frame must reach the transport in one piece.

        True for gRPC: a message is handed to the transport whole whatever its size, so
        cutting it would only make the adapter copy the pieces back together (once per
        stream, where the pieces of a shared payload cost nothing). An SSE frame is cut
        into writes of about 64 KiB instead, so that a transport buffers a piece of it.
        """
        return self.binding == "grpc"

    def encode(self, event: StreamResponse, event_id: str | int | None = None) -> bytes:
        """One frame carrying ``event``, with ``id: <event_id>`` unless it is ``None``.

        The event is encoded once; on JSON-RPC its bytes are spliced into the envelope
        without being parsed again. If `ends_stream` holds for it, the stream finishes.
        """
        self._check_open("an event")
        last = ends_stream(event, self.closing_states)
        payload = self._encode_payload(event, last)
        if self.binding == "jsonrpc":
            payload = encode_result(self.request_id, payload)
        elif self.binding == "grpc":
            self._finished = last
            return b"\x00" + len(payload).to_bytes(4, "big") + payload
        if self._trusted and type(event_id) is int:
            # What data_frame builds, without its line-break scans (nothing to find in our
            # JSON or in a decimal id): every subscriber of every event takes this path.
            frame = b"id: %d\ndata: %b\n\n" % (event_id, payload)
        else:
            frame = data_frame(payload, event_id)
        # Only a frame that was built counts: a refused id leaves the stream as it was.
        self._finished = last
        return frame

    def share_key(self, event: StreamResponse) -> Hashable | None:
        """What the payload of ``event`` depends on besides the event itself.

        Streams with equal keys carry the very same payload bytes for the same event (the
        ``id:`` line and the JSON-RPC envelope around it are each stream's own): a v1.0
        JSON-RPC stream and a v1.0 REST stream share, a v0.3 one shares with the v0.3
        streams of its binding that agree on ``final``. ``None`` with a custom
        ``event_encoder``: its output is never shared.
        """
        if not self._trusted:
            return None
        payload = self._encode_payload
        if payload in _CARRY_FINAL:
            return payload, ends_stream(event, self.closing_states)
        return payload

    def encode_payload(self, event: StreamResponse) -> bytes:
        """The payload of ``event`` in this stream, alone (the stream does not change).

        The JSON that `encode` puts into the frame: ``result`` of the JSON-RPC envelope, or
        the whole ``data:`` of a REST frame. Share it with `encode_around` between streams
        whose `share_key` for the event is equal.
        """
        return self._encode_payload(event, ends_stream(event, self.closing_states))

    def encode_around(
        self, event: StreamResponse, event_id: int | None, payload: bytes
    ) -> tuple[bytes, bytes]:
        """The frame carrying ``event`` as ``(head, tail)``: ``head + payload + tail``.

        ``payload`` is `encode_payload` of ``event`` by this stream or by one with the same
        `share_key`; it is not copied (nor scanned: only our own encoders' payloads are
        shared). The stream finishes as `encode` would. A stream with a custom
        ``event_encoder`` raises `LocalProtocolError`.
        """
        self._check_open("an event")
        if not self._trusted:
            raise LocalProtocolError("a custom event encoder's payloads are not shared")
        last = ends_stream(event, self.closing_states)
        if self.binding == "grpc":
            self._finished = last
            return b"\x00" + len(payload).to_bytes(4, "big"), b""
        head = b"data: " if event_id is None else b"id: %d\ndata: " % event_id
        if self.binding == "jsonrpc":
            envelope = self._envelope
            if envelope is None:
                # msgspec writes "result" last: the envelope around a placeholder, cut.
                whole = encode_result(self.request_id, b"0")
                assert whole.endswith(b":0}")
                envelope = self._envelope = whole[:-2]
            head += envelope
            tail = b"}\n\n"
        else:
            tail = b"\n\n"
        self._finished = last
        return head, tail

    def encode_error(self, err: A2AError) -> bytes:
        """The one final frame that reports ``err`` mid-stream; the stream finishes.

        It has no ``id:`` line: the error is not an event of the task's log, and a client
        that reconnects must not take it as a position in that log.
        """
        self._check_open("an error")
        if self.binding == "grpc":
            self._finished = True
            return trailers_frame(status_of(err, self._status_table))
        if self.binding == "jsonrpc":
            payload = encode_error(self.request_id, err, self.dialect)
        else:
            payload = codec.encode(rest_error_body(err, self._status_table, self.dialect)[1])
        frame = data_frame(payload)
        self._finished = True
        return frame

    def keep_alive(self) -> bytes:
        """A ``: keep-alive`` comment frame, for an idle stream that has not finished."""
        self._check_open("a keep-alive")
        if self.binding == "grpc":
            return b""  # HTTP/2 PINGs keep a gRPC connection alive: nothing to write
        return comment_frame()

    def _check_open(self, what: str) -> None:
        if self._finished:
            raise LocalProtocolError(f"cannot send {what}: the event stream has finished")

    def __repr__(self) -> str:
        state = "finished" if self._finished else "open"
        return f"<EventStream {self.binding} {self.dialect} id={self.request_id!r} {state}>"


# ---------------------------------------------------------------------------------------
# Parsing (WHATWG HTML, "Interpreting an event stream")


@dataclass(frozen=True, slots=True)
class Frame:
    """One block of an event stream: the lines up to a blank line, as a client reads them.

    A block with ``data`` is an event a browser would dispatch; a block of only comments (a
    keep-alive) or only an ``id`` dispatches nothing, and its ``data`` is ``None``.
    """

    data: str | None = None
    """The ``data`` lines joined with ``\\n``; ``None`` when the block had no data line."""
    id: str | None = None
    """The block's ``id`` field (the last one, ignoring any with NUL), or ``None``."""
    event: str | None = None
    """The ``event`` field (the event type), or ``None``."""
    comment: str | None = None
    """The comment lines (text after ``:``, one leading space removed), joined with ``\\n``."""
    retry: int | None = None
    """The ``retry`` field when it is all ASCII digits, or ``None``."""


_LINE_END: Final = re.compile(r"\r\n|\r|\n")


class SseParser:
    """An incremental event-stream parser: feed bytes as they arrive, get complete frames.

    It follows the WHATWG algorithm: UTF-8 with replacement of invalid bytes, one leading
    BOM dropped, lines ending in CRLF, LF or CR (also when a CRLF is split across two
    chunks), ``field: value`` with one optional space, unknown fields ignored, and a block
    still open when the stream ends is discarded (call `close`).
    """

    __slots__ = (
        "_after_cr",
        "_comments",
        "_data",
        "_decoder",
        "_event",
        "_id",
        "_partial",
        "_retry",
        "_seen",
        "_started",
    )

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        # The pieces of a line not ended yet, joined once when it ends: each chunk is searched
        # for line ends once, so a line sent in many chunks costs its length, not its square.
        self._partial: list[str] = []
        # The last line ended with a CR: an LF that starts the next chunk is its CRLF's end.
        self._after_cr = False
        self._started = False
        self._reset()

    def _reset(self) -> None:
        self._data: list[str] = []
        self._comments: list[str] = []
        self._id: str | None = None
        self._event: str | None = None
        self._retry: int | None = None
        self._seen = False

    def feed(self, chunk: bytes) -> list[Frame]:
        """Parse the next ``chunk`` of the stream; return the frames it completed."""
        text = self._decoder.decode(chunk)
        if not self._started and text:
            self._started = True
            text = text.removeprefix("\ufeff")
        return self._lines(text)

    def close(self) -> list[Frame]:
        """End of stream: an unterminated line, and an unterminated block, are dropped."""
        frames = self._lines(self._decoder.decode(b"", final=True))
        self._partial.clear()
        self._reset()
        return frames

    def _lines(self, text: str) -> list[Frame]:
        frames: list[Frame] = []
        pos = 0
        if self._after_cr and text:
            self._after_cr = False
            if text[0] == "\n":
                pos = 1  # the LF of a CRLF split across chunks: that line has ended already
        for match in _LINE_END.finditer(text, pos):
            line = text[pos : match.start()]
            if self._partial:
                self._partial.append(line)
                line = "".join(self._partial)
                self._partial.clear()
            frame = self._line(line)
            if frame is not None:
                frames.append(frame)
            pos = match.end()
            self._after_cr = match.group() == "\r" and pos == len(text)
        if pos < len(text):
            self._partial.append(text[pos:])
        return frames

    def _line(self, line: str) -> Frame | None:
        if not line:
            return self._dispatch()
        self._seen = True
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if not name:
            self._comments.append(value)
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "event":
            self._event = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> Frame | None:
        if not self._seen:
            return None  # a blank line after a blank line: nothing to report
        frame = Frame(
            data="\n".join(self._data) if self._data else None,
            id=self._id,
            event=self._event,
            comment="\n".join(self._comments) if self._comments else None,
            retry=self._retry,
        )
        self._reset()
        return frame


def parse_frames(data: bytes) -> list[Frame]:
    """Parse a whole event stream (every frame that ends with a blank line)."""
    parser = SseParser()
    return parser.feed(data) + parser.close()
