"""ListTasks order and page tokens (L2): what every task store shares.

Stores order ListTasks by status time, then task id, and hand out an opaque cursor after
the last task of a page. The cursor travels signed (HMAC-SHA256, truncated) and bound to
the query's filters, so a token a store did not issue, or one issued for other filters, is
refused as InvalidParams rather than silently read as some position. Each store chooses
what the cursor holds (the in-memory store a key tuple, Redis an index member); the
envelope, the signature and the checks live here once.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import hmac
import re
from typing import Final

import msgspec

from a2a_core.server._store import InvalidPageTokenError, TaskQuery

__all__ = ["NO_TIMESTAMP", "make_token", "query_scope", "read_token", "status_micros"]

_EPOCH: Final = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MICROSECOND: Final = _dt.timedelta(microseconds=1)
#: The time of a task without a status timestamp: before any real one, so it sorts last.
NO_TIMESTAMP: Final = -(1 << 62)

_VERSION: Final = 1
_MAC_SIZE: Final = 8
_MAX_LENGTH: Final = 1024
_ALPHABET: Final = re.compile(r"[A-Za-z0-9_-]+")
_encoder: Final = msgspec.msgpack.Encoder()


def status_micros(timestamp: _dt.datetime | None) -> int:
    """A status timestamp as microseconds since the epoch (``NO_TIMESTAMP`` for none)."""
    if timestamp is None:
        return NO_TIMESTAMP
    if timestamp.tzinfo is None:  # TaskStatus normalises to UTC; be safe with raw values
        timestamp = timestamp.replace(tzinfo=_dt.UTC)
    return (timestamp - _EPOCH) // _MICROSECOND


def query_scope(query: TaskQuery) -> bytes:
    """What a token is bound to: the filters (not the page size, which may change)."""
    after = query.status_timestamp_after
    return _encoder.encode(
        (
            query.tenant,
            query.owner,
            query.context_id,
            query.state.value,
            None if after is None else status_micros(after),
        )
    )


def _sign(secret: bytes, body: bytes, scope: bytes) -> bytes:
    return hmac.digest(secret, scope + body, "sha256")[:_MAC_SIZE]


def make_token(secret: bytes, scope: bytes, cursor: bytes) -> str:
    """A page token carrying ``cursor``, signed with ``secret`` for the filters ``scope``."""
    body = bytes([_VERSION]) + cursor
    raw = body[:1] + _sign(secret, body, scope) + body[1:]
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def read_token(secret: bytes, scope: bytes, token: str) -> bytes:
    """The cursor of a token :func:`make_token` made with the same secret and filters;
    :class:`InvalidPageTokenError` for anything else (the message says no more)."""
    invalid = InvalidPageTokenError("invalid page token")
    if len(token) > _MAX_LENGTH or not _ALPHABET.fullmatch(token):
        raise invalid
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        raise invalid from None
    if len(raw) <= 1 + _MAC_SIZE or raw[0] != _VERSION:
        raise invalid
    mac, cursor = raw[1 : 1 + _MAC_SIZE], raw[1 + _MAC_SIZE :]
    if not hmac.compare_digest(mac, _sign(secret, raw[:1] + cursor, scope)):
        raise invalid
    return cursor
