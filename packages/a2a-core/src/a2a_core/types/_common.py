"""Field types shared by the v1.0 structs: constrained strings and integers, timestamps."""

from __future__ import annotations

import datetime as _dt
from typing import Annotated, Any

import msgspec

__all__ = [
    "HistoryLength",
    "Int32",
    "NonEmptyStr",
    "PageSize",
    "Struct",
    "to_utc",
]

#: A REQUIRED string: present and not empty (proto ``field_behavior = REQUIRED``).
NonEmptyStr = Annotated[str, msgspec.Meta(min_length=1)]
#: A proto ``int32``.
Int32 = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31 - 1)]
#: ``historyLength``: 0 means no history; negative values are invalid (spec-decisions F13).
HistoryLength = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
#: ``pageSize`` of ListTasks: 1..100 (spec-decisions F6).
PageSize = Annotated[int, msgspec.Meta(ge=1, le=100)]
#: A ``google.protobuf.Struct``: a JSON object with arbitrary keys, never renamed.
Struct = dict[str, Any]


def to_utc(value: _dt.datetime) -> _dt.datetime:
    """Normalise a timestamp to UTC; a naive one (v0.3 examples omit ``Z``) is taken as UTC.

    Raises ``ValueError`` (InvalidParams when decoding) for a time whose UTC form falls
    outside years 1..9999, such as ``0001-01-01T00:00:00+01:00``.
    """
    if value.tzinfo is None:
        return value.replace(tzinfo=_dt.UTC)
    if value.tzinfo is _dt.UTC:
        return value
    try:
        return value.astimezone(_dt.UTC)
    except OverflowError:
        raise ValueError("timestamp out of range once converted to UTC") from None
