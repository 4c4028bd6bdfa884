"""REST query parameters: typed fields, decoded by the rules of the HTTP+JSON binding (L1)."""

from __future__ import annotations

import datetime as _dt
import enum
import re
from collections.abc import Sequence
from typing import Any, Final

import msgspec

from a2a_core._protocol.errors import (
    InvalidParamsError,
)

# ---------------------------------------------------------------------------------------
# Query parameters


class QueryKind(enum.Enum):
    """How a query parameter's text becomes a value (gRPC transcoding, spec-decisions F11)."""

    STRING = "string"
    INT = "int"
    BOOL = "bool"
    ENUM = "enum"
    TIMESTAMP = "timestamp"


class QueryField(msgspec.Struct, frozen=True):
    """A request field that may be given as a query parameter."""

    name: str
    """The camelCase (ProtoJSON) name; the snake_case spelling is accepted too."""
    kind: QueryKind
    """How its text is parsed."""
    repeated: bool = False
    """A repeated field: repeated parameters and comma lists are concatenated."""
    enum: type[enum.Enum] | None = None
    """For `QueryKind.ENUM`: the enum, declared in proto-number order."""


_INT_TEXT: Final = re.compile(r"[+-]?[0-9]{1,19}")
# `+hh:mm` turned into ` hh:mm` by form decoding of an unencoded `+`.
_SPACE_OFFSET: Final = re.compile(r"(T[0-9:.]+) ([0-9]{2}(?::?[0-9]{2})?)$")
# Python reads at most 6 fractional digits; ProtoJSON writes up to 9.
_FRACTION: Final = re.compile(r"(\.[0-9]{6})[0-9]+")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _bad_param(name: str, why: str) -> InvalidParamsError:
    return InvalidParamsError(
        f"{InvalidParamsError.default_message}: query parameter '{name}' {why}",
        field_violations=[(name, why)],
    )


def _parse_scalar(spec: QueryField, name: str, text: str) -> Any:
    kind = spec.kind
    if kind is QueryKind.STRING:
        return text
    if kind is QueryKind.INT:
        if not _INT_TEXT.fullmatch(text):
            raise _bad_param(name, "must be an integer")
        return int(text)
    if kind is QueryKind.BOOL:
        lowered = text.lower()
        if lowered not in ("true", "false"):
            raise _bad_param(name, "must be true or false")
        return lowered == "true"
    if kind is QueryKind.ENUM:
        members = list(spec.enum or ())
        if _INT_TEXT.fullmatch(text):
            number = int(text)
            if 0 <= number < len(members):
                return members[number].value
        else:
            upper = text.upper()
            for member in members:
                if str(member.value) == upper:
                    return member.value
        raise _bad_param(name, "is not a known enum value")
    return _parse_timestamp(name, text)


def _parse_timestamp(name: str, text: str) -> _dt.datetime:
    text = _FRACTION.sub(r"\1", _SPACE_OFFSET.sub(r"\1+\2", text.strip()))
    try:
        value = _dt.datetime.fromisoformat(text)
        if value.tzinfo is None:
            return value.replace(tzinfo=_dt.UTC)
        return value.astimezone(_dt.UTC)
    except (ValueError, OverflowError):
        raise _bad_param(name, "must be an ISO 8601 timestamp") from None


def parse_query(query: Sequence[tuple[str, str]], fields: Sequence[QueryField]) -> dict[str, Any]:
    """Parse decoded query pairs into ``{camelCase name: value}`` for ``fields`` only.

    Values are JSON-ready for :func:`a2a_core.codec.convert` (enum names, ints, bools,
    strings, lists) except timestamps, which are UTC datetimes. Unknown names are ignored;
    see the module docstring for every rule. Raises `InvalidParamsError` naming the
    parameter.
    """
    by_alias: dict[str, QueryField] = {}
    for field_spec in fields:
        by_alias[field_spec.name] = by_alias[_snake(field_spec.name)] = field_spec
    out: dict[str, Any] = {}
    for name, text in query:
        spec = by_alias.get(name)
        if spec is None:
            root = re.split(r"[.\[]", name, maxsplit=1)[0]
            if root != name and root in by_alias:
                raise _bad_param(name, "is nested: query parameters cannot set objects")
            continue
        if not text:
            continue  # an empty value means "not given"
        if spec.repeated:
            items = [_parse_scalar(spec, name, t) for t in text.split(",") if t]
            out.setdefault(spec.name, []).extend(items)
            continue
        if spec.name in out:
            raise _bad_param(name, "is given more than once")
        out[spec.name] = _parse_scalar(spec, name, text)
    return out
