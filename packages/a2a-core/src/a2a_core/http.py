"""The HTTP values that adapters exchange with the core: one request shape, two reply shapes.

The public face of ``a2a_core.http``: import these names from here.
"""

from a2a_core._protocol.http import (
    RETRY_AFTER_SECONDS,
    Headers,
    HttpRequest,
    HttpResponse,
    SseResponse,
    content_length_exceeds,
)

__all__ = [
    "RETRY_AFTER_SECONDS",
    "Headers",
    "HttpRequest",
    "HttpResponse",
    "SseResponse",
    "content_length_exceeds",
]
