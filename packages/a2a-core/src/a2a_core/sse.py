"""Server-Sent Events: the framing of A2A streams and the encoding of each event in them.

The public face of ``a2a_core.sse``: import these names from here.
"""

from a2a_core._protocol.sse import (
    CLOSING_STATES,
    STREAM_HEADERS,
    SUBSCRIPTION_CLOSING_STATES,
    Binding,
    EventEncoder,
    EventStream,
    Frame,
    SseParser,
    comment_frame,
    data_frame,
    ends_stream,
    parse_frames,
    stream_headers,
)

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
