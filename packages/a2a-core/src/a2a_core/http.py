"""The HTTP values that adapters exchange with the core: one request shape, two reply shapes.

The public face of ``a2a_core.http``: import these names from here.
"""

from a2a_core._protocol.http import (
    Headers,
    HttpRequest,
    HttpResponse,
    SseResponse,
    content_length_exceeds,
)

__all__ = [
    "Headers",
    "HttpRequest",
    "HttpResponse",
    "SseResponse",
    "content_length_exceeds",
]
