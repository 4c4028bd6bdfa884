"""Hypothesis strategies for every wire struct, derived from the structs themselves.

:func:`strategy_for` reads a struct's fields through msgspec's introspection, so it follows
the model as it changes: required members are always drawn, optional ones sometimes, the
constraints of the field types (non-empty ids and parts, ``pageSize`` 1..100...) are
respected, and for a oneof exactly one member is drawn. Every value it draws encodes and
decodes back to itself, which is what the round-trip properties check.
"""

from __future__ import annotations

import datetime as _dt
import enum
from typing import Any, TypeVar

import msgspec
from hypothesis import strategies as st
from msgspec import inspect as mi

from a2a_core.types import Message, Part, Role, Task

__all__ = ["json_values", "messages", "parts", "strategy_for", "tasks"]

T = TypeVar("T")

_INT64 = (-(2**63), 2**63 - 1)
_MAX_ITEMS = 3

#: Field-level overrides where a type alone admits values the model rejects.
_FIELD_OVERRIDES: dict[tuple[type, str], st.SearchStrategy[Any]] = {
    (Message, "role"): st.sampled_from([Role.USER, Role.AGENT]),
}


def json_values(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Any JSON value that survives a JSON round trip unchanged (finite floats, int64)."""
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(*_INT64)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=12)
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=_MAX_ITEMS)
            | st.dictionaries(st.text(max_size=8), inner, max_size=_MAX_ITEMS)
        ),
        max_leaves=max_leaves,
    )


_cache: dict[Any, st.SearchStrategy[Any]] = {}


def strategy_for(type_: type[T]) -> st.SearchStrategy[T]:
    """A strategy that draws valid values of a wire struct (or any supported field type)."""
    cached = _cache.get(type_)
    if cached is None:
        cached = _cache[type_] = st.deferred(lambda: _from_info(mi.type_info(type_)))
    return cached


def parts() -> st.SearchStrategy[Part]:
    """Valid v1.0 parts: text, raw bytes, URL or any JSON data."""
    return strategy_for(Part)


def messages() -> st.SearchStrategy[Message]:
    """Valid v1.0 messages."""
    return strategy_for(Message)


def tasks() -> st.SearchStrategy[Task]:
    """Valid v1.0 tasks."""
    return strategy_for(Task)


def _from_info(info: mi.Type) -> st.SearchStrategy[Any]:
    if isinstance(info, mi.Metadata):
        return _from_info(info.type)
    if isinstance(info, mi.StructType):
        return _struct(info)
    if isinstance(info, mi.ListType):
        low = info.min_length or 0
        return st.lists(_from_info(info.item_type), min_size=low, max_size=max(low, _MAX_ITEMS))
    if isinstance(info, mi.DictType):
        return st.dictionaries(
            _from_info(info.key_type), _from_info(info.value_type), max_size=_MAX_ITEMS
        )
    if isinstance(info, mi.StrType):
        low = info.min_length or 0
        return st.text(min_size=low, max_size=max(low, 12))
    if isinstance(info, mi.IntType):
        low = info.ge if info.ge is not None else _INT64[0]
        high = info.le if info.le is not None else _INT64[1]
        return st.integers(low, high)
    if isinstance(info, mi.BoolType):
        return st.booleans()
    if isinstance(info, mi.FloatType):
        return st.floats(allow_nan=False, allow_infinity=False)
    if isinstance(info, mi.BytesType):
        return st.binary(max_size=16)
    if isinstance(info, mi.DateTimeType):
        return st.datetimes(timezones=st.just(_dt.UTC))
    if isinstance(info, mi.EnumType):
        cls: type[enum.Enum] = info.cls
        return st.sampled_from(list(cls))
    if isinstance(info, mi.UnionType):
        others = [t for t in info.types if not isinstance(t, mi.NoneType)]
        return st.one_of([_from_info(t) for t in others])
    if isinstance(info, mi.AnyType):
        return json_values()
    raise TypeError(f"no strategy for {info!r}")


def _field_strategy(cls: type, f: mi.Field) -> st.SearchStrategy[Any]:
    override = _FIELD_OVERRIDES.get((cls, f.name))
    return override if override is not None else _from_info(f.type)


def _struct(info: mi.StructType) -> st.SearchStrategy[Any]:
    cls = info.cls
    oneof: tuple[str, ...] = getattr(cls, "__oneof__", ())
    required = {f.name: _field_strategy(cls, f) for f in info.fields if f.required}
    optional = {
        f.name: _field_strategy(cls, f)
        for f in info.fields
        if not f.required and f.name not in oneof
    }
    kwargs = st.fixed_dictionaries(required, optional=optional)
    if oneof:
        members = {f.name: _field_strategy(cls, f) for f in info.fields if f.name in oneof}
        chosen = st.sampled_from(sorted(members)).flatmap(
            lambda name: members[name].map(lambda value: {name: value})
        )
        kwargs = st.tuples(kwargs, chosen).map(lambda pair: {**pair[0], **pair[1]})
    return kwargs.map(lambda kw: cls(**kw))


def round_trips(value: msgspec.Struct) -> bool:
    """True when ``value`` encodes and decodes back to an equal value (for quick checks)."""
    from a2a_core._protocol.codec import decode, encode

    return bool(decode(encode(value), type(value)) == value)
