"""The protobuf binary codec of the v1.0 model (L1, pure: no protobuf runtime).

It works from the schema table generated from ``a2a.proto`` (`_schema`) and meets our
Structs where the JSON codec does, at the **ProtoJSON tree** (dicts keyed by JSON names,
enum names, datetimes, bytes, JSON values for ``Struct`` and ``Value``):

- ``encode(value)``: ``msgspec.to_builtins`` gives the tree (defaults already omitted, in C),
  and one walk of it writes the wire bytes;
- ``decode(data, type_)``: one walk of the wire bytes builds the tree, and
  ``msgspec.convert`` builds the Struct from it, in C, with **the same validation as JSON**
  (required fields, non-empty parts, oneofs, ranges, timestamps in UTC), so a request is
  refused for the same reasons, in the same words, on every binding.

Why not the protobuf runtime (upb) and a conversion: ``docs/grpc.md`` has the measurements
(``bench/grpc_codec.py``). Proto3's rules are kept: fields in any order, unknown fields
skipped, implicit-presence fields absent when at their default (a required one reads as its
default, then fails validation as ``""`` or ``ROLE_UNSPECIFIED`` would in JSON), numbers of
``google.protobuf.Value`` as doubles (an integral one within 2^53 reads back as an int, as
protojson prints it). What is refused, as `DecodeError`: truncated or overlong varints and
lengths, a known field with the wrong wire type, groups, invalid UTF-8 in a string, an
unknown enum number, a timestamp out of range, nesting deeper than ``max_depth``.
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
import struct as _struct
from collections.abc import Callable
from typing import Any, Final, TypeVar, overload

import msgspec

from a2a_core._protocol.codec import DecodeError
from a2a_core._protocol.grpc._schema import ENUMS, MESSAGES
from a2a_core.types import ALL_STRUCTS

__all__ = ["DEFAULT_MAX_DEPTH", "DecodeError", "decode", "decode_tree", "encode", "encode_tree"]

T = TypeVar("T")

#: Deepest nesting of messages (``Struct`` and ``Value`` levels included) `decode` accepts.
DEFAULT_MAX_DEPTH: Final = 64

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
_WIRE_TYPES: Final = {
    "string": _LEN,
    "bytes": _LEN,
    "bool": _VARINT,
    "int32": _VARINT,
    "int64": _VARINT,
    "double": _I64,
    "enum": _VARINT,
    "message": _LEN,
    "struct": _LEN,
    "value": _LEN,
    "timestamp": _LEN,
}
_SCALAR_DEFAULTS: Final[dict[str, Any]] = {
    "string": "",
    "bytes": b"",
    "bool": False,
    "int32": 0,
    "int64": 0,
    "double": 0.0,
}
_EPOCH: Final = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MIN_SECONDS: Final = -62135596800  # 0001-01-01T00:00:00Z
_MAX_SECONDS: Final = 253402300799  # 9999-12-31T23:59:59Z
_DOUBLE: Final = _struct.Struct("<d")
_INT_DOUBLE_LIMIT: Final = 2**53
_BUILTIN_TYPES: Final = (bytes, bytearray, _dt.datetime)

#: The enum numbers by name, and names by number.
_ENUM_NUMBERS: Final[dict[str, dict[str, int]]] = {
    name: {value: number for number, value in enumerate(values)} for name, values in ENUMS.items()
}


def _varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64  # int32 and int64 negatives: ten bytes, two's complement
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL_VARINTS: Final = tuple(_varint(n) for n in range(0x4000))


def _length(size: int) -> bytes:
    return _SMALL_VARINTS[size] if size < 0x4000 else _varint(size)


# --- encoding --------------------------------------------------------------------------------

#: An encoder of one field's value, appending to the output list.
_FieldEncoder = Callable[[list[bytes], Any], None]


def _compile_encoders() -> dict[str, dict[str, _FieldEncoder]]:
    encoders: dict[str, dict[str, _FieldEncoder]] = {}
    for name, fields in MESSAGES.items():
        encoders[name] = {
            json: _field_encoder(num, kind, label, ref)
            for num, json, kind, label, ref, *_ in fields
        }
    return encoders


def _field_encoder(number: int, kind: str, label: int, ref: str) -> _FieldEncoder:
    tag = _varint(number << 3 | _WIRE_TYPES[kind])
    one = _value_encoder(tag, kind, ref)
    if label == 2:

        def repeated(out: list[bytes], values: Any) -> None:
            for value in values:
                one(out, value)

        return repeated
    if label == 3:
        key_tag = _varint(1 << 3 | _LEN)
        value_one = _value_encoder(_varint(2 << 3 | _WIRE_TYPES[kind]), kind, ref)
        entry_tag = _varint(number << 3 | _LEN)

        def mapping(out: list[bytes], values: Any) -> None:
            for key, value in values.items():
                entry: list[bytes] = []
                raw = key.encode()
                entry += (key_tag, _length(len(raw)), raw)
                value_one(entry, value)
                body = b"".join(entry)
                out += (entry_tag, _length(len(body)), body)

        return mapping
    if label == 0 and kind in _SCALAR_DEFAULTS:
        default = _SCALAR_DEFAULTS[kind]

        def implicit(out: list[bytes], value: Any) -> None:
            # Implicit presence: a field at its default is not written (proto3).
            if value != default or type(value) is not type(default):
                one(out, value)

        return implicit
    if label == 0 and kind == "enum":
        zero = ENUMS[ref][0]

        def implicit_enum(out: list[bytes], value: Any) -> None:
            if value != zero and value != 0:
                one(out, value)

        return implicit_enum
    return one


def _value_encoder(tag: bytes, kind: str, ref: str) -> _FieldEncoder:
    if kind == "string":

        def string(out: list[bytes], value: Any) -> None:
            raw = value.encode()
            out += (tag, _length(len(raw)), raw)

        return string
    if kind == "bytes":

        def raw_bytes(out: list[bytes], value: Any) -> None:
            out += (tag, _length(len(value)), bytes(value))

        return raw_bytes
    if kind == "bool":
        true, false = tag + b"\x01", tag + b"\x00"

        def boolean(out: list[bytes], value: Any) -> None:
            out.append(true if value else false)

        return boolean
    if kind in ("int32", "int64"):

        def integer(out: list[bytes], value: Any) -> None:
            out += (tag, _varint(value))

        return integer
    if kind == "double":

        def double(out: list[bytes], value: Any) -> None:
            out += (tag, _DOUBLE.pack(value))

        return double
    if kind == "enum":
        numbers = _ENUM_NUMBERS[ref]

        def enumeration(out: list[bytes], value: Any) -> None:
            out += (tag, _varint(value if type(value) is int else numbers[value]))

        return enumeration
    if kind == "message":

        def message(out: list[bytes], value: Any) -> None:
            body = _encode_message(value, ref)
            out += (tag, _length(len(body)), body)

        return message
    if kind == "struct":

        def struct(out: list[bytes], value: Any) -> None:
            body = _encode_message({"fields": value}, "Struct")
            out += (tag, _length(len(body)), body)

        return struct
    if kind == "value":

        def json_value(out: list[bytes], value: Any) -> None:
            body = _encode_json_value(value)
            out += (tag, _length(len(body)), body)

        return json_value
    if kind == "timestamp":

        def timestamp(out: list[bytes], value: Any) -> None:
            body = _encode_message(_timestamp_tree(value), "Timestamp")
            out += (tag, _length(len(body)), body)

        return timestamp
    raise AssertionError(f"unknown kind {kind}")  # pragma: no cover - the schema's kinds


def _timestamp_tree(value: _dt.datetime) -> dict[str, int]:
    delta = value - _EPOCH
    return {"seconds": delta.days * 86400 + delta.seconds, "nanos": delta.microseconds * 1000}


def _encode_json_value(value: Any) -> bytes:
    """A JSON value as a ``google.protobuf.Value``."""
    if value is None:
        return b"\x08\x00"
    if value is True or value is False:
        return b"\x20\x01" if value else b"\x20\x00"
    if isinstance(value, (int, float)):
        return b"\x11" + _DOUBLE.pack(float(value))
    if isinstance(value, str):
        raw = value.encode()
        return b"\x1a" + _length(len(raw)) + raw
    if isinstance(value, dict):
        body = _encode_message({"fields": value}, "Struct")
        return b"\x2a" + _length(len(body)) + body
    if isinstance(value, (list, tuple)):
        body = _encode_message({"values": value}, "ListValue")
        return b"\x32" + _length(len(body)) + body
    raise TypeError(f"not a JSON value: {type(value).__name__}")


_ENCODERS: Final = _compile_encoders()
# Struct.fields and ListValue.values hold Values: JSON values, not trees of a message.
_ENCODERS["Struct"]["fields"] = _field_encoder(1, "value", 3, "")
_ENCODERS["ListValue"]["values"] = _field_encoder(1, "value", 2, "")


def _encode_message(tree: dict[str, Any], message: str) -> bytes:
    encoders = _ENCODERS[message]
    out: list[bytes] = []
    for key, value in tree.items():
        encoders[key](out, value)
    return b"".join(out)


def encode_tree(tree: dict[str, Any], message: str) -> bytes:
    """The wire bytes of ``message`` (a name in the schema) from its ProtoJSON tree."""
    return _encode_message(tree, message)


def encode(value: Any, message: str | None = None) -> bytes:
    """The wire bytes of a v1.0 Struct (``None``: ``google.protobuf.Empty``, no bytes).

    ``message`` is its proto message name, by default its class name (they are the same for
    every v1.0 type).
    """
    if value is None:
        return b""
    tree = msgspec.to_builtins(value, builtin_types=_BUILTIN_TYPES)
    return _encode_message(tree, message or type(value).__name__)


# --- decoding --------------------------------------------------------------------------------


class _MalformedError(Exception):
    """Bytes that are not a valid encoding (caught at the top, answered as DecodeError)."""


#: Reads one field's value: ``(data, pos, end, depth) -> (value, pos after it)``.
_Reader = Callable[[bytes, int, int, int], tuple[Any, int]]
#: One field as the decoder sees it, found by its whole tag (number and wire type): its JSON
#: name, label, reader, and kind and ref (for map entries).
_DecField = tuple[str, int, _Reader, str, str]


def _read_varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    if pos >= end:
        raise _MalformedError("truncated varint")
    byte = data[pos]
    if byte < 0x80:
        return byte, pos + 1
    result = byte & 0x7F
    shift = 7
    pos += 1
    while True:
        if pos >= end or shift > 63:
            raise _MalformedError("truncated or overlong varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _skip(data: bytes, pos: int, end: int, wire: int) -> int:
    if wire == _VARINT:
        return _read_varint(data, pos, end)[1]
    if wire == _I64:
        pos += 8
    elif wire == _I32:
        pos += 4
    elif wire == _LEN:
        size, pos = _read_varint(data, pos, end)
        pos += size
    else:
        raise _MalformedError(f"unsupported wire type {wire}")
    if pos > end:
        raise _MalformedError("truncated field")
    return pos


def _signed(value: int, bits: int) -> int:
    value &= (1 << 64) - 1
    if value >= 1 << 63:
        value -= 1 << 64
    if bits == 32:
        # int32 takes the low 32 bits, as protobuf parsers do.
        value &= 0xFFFFFFFF
        if value >= 1 << 31:
            value -= 1 << 32
    return value


def _decode_message(data: bytes, pos: int, end: int, message: str, depth: int) -> dict[str, Any]:
    if depth <= 0:
        raise _MalformedError("nesting too deep")
    fields = _BY_TAG[message]
    tree: dict[str, Any] = {}
    while pos < end:
        key = data[pos]
        if key < 0x80:  # nearly every tag: one byte
            pos += 1
        else:
            key, pos = _read_varint(data, pos, end)
        field = fields.get(key)
        if field is None:
            number = key >> 3
            if number == 0:
                raise _MalformedError("field number 0")
            known = _NUMBERS[message].get(number)
            if known is not None:
                raise _MalformedError(f"field {known[0]}: wire type {key & 7}, expected {known[1]}")
            pos = _skip(data, pos, end, key & 7)
            continue
        json_name, label, read, kind, ref = field
        if label == 3:
            size, pos = _read_varint(data, pos, end)
            stop = pos + size
            if stop > end:
                raise _MalformedError(f"field {json_name}: truncated")
            map_key, map_value = _decode_entry(data, pos, stop, kind, ref, depth - 1)
            pos = stop
            tree.setdefault(json_name, {})[map_key] = map_value
            continue
        value, pos = read(data, pos, end, depth)
        if label == 2:
            found = tree.get(json_name)
            if found is None:
                tree[json_name] = [value]
            else:
                found.append(value)
        else:
            tree[json_name] = value
    if pos != end:
        raise _MalformedError(f"{message}: truncated")
    fill = _FILL.get(message)
    if fill is not None:
        for name, default in fill:
            if name not in tree:
                tree[name] = default() if default is list or default is dict else default
    return tree


def _length_at(data: bytes, pos: int, end: int, name: str) -> tuple[int, int]:
    """``(start, stop)`` of the length-delimited value at ``pos``."""
    if pos < end and data[pos] < 0x80:
        size = data[pos]
        pos += 1
    else:
        size, pos = _read_varint(data, pos, end)
    stop = pos + size
    if stop > end:
        raise _MalformedError(f"field {name}: truncated")
    return pos, stop


@functools.cache  # one per field of the schema, and per kind of map value
def _reader(kind: str, ref: str, name: str) -> _Reader:
    """The reader of one field: the common kinds compiled, the rest `_decode_value`."""
    if kind == "string":

        def string(data: bytes, pos: int, end: int, depth: int) -> tuple[Any, int]:
            start, stop = _length_at(data, pos, end, name)
            try:
                return str(data[start:stop], "utf-8"), stop
            except UnicodeDecodeError:
                raise _MalformedError(f"field {name}: invalid UTF-8") from None

        return string
    if kind == "message":

        def message(data: bytes, pos: int, end: int, depth: int) -> tuple[Any, int]:
            start, stop = _length_at(data, pos, end, name)
            return _decode_message(data, start, stop, ref, depth - 1), stop

        return message
    if kind == "enum":
        names = ENUMS[ref]

        def enumeration(data: bytes, pos: int, end: int, depth: int) -> tuple[Any, int]:
            if pos < end and data[pos] < len(names):  # a known value, one byte
                return names[data[pos]], pos + 1
            value, pos = _read_varint(data, pos, end)
            number = _signed(value, 32)
            if 0 <= number < len(names):  # a known value, written in more bytes
                return names[number], pos
            raise _MalformedError(f"field {name}: unknown {ref} value {number}")

        return enumeration
    if kind == "timestamp":

        def timestamp(data: bytes, pos: int, end: int, depth: int) -> tuple[Any, int]:
            start, stop = _length_at(data, pos, end, name)
            seconds = nanos = 0
            at = start
            while at < stop:
                tag, at = _read_varint(data, at, stop)
                if tag == 0x08:
                    value, at = _read_varint(data, at, stop)
                    seconds = _signed(value, 64)
                elif tag == 0x10:
                    value, at = _read_varint(data, at, stop)
                    nanos = _signed(value, 32)
                elif tag >> 3 in (1, 2) or tag >> 3 == 0:
                    raise _MalformedError(f"field {name}: not a Timestamp")
                else:
                    at = _skip(data, at, stop, tag & 7)
            if not (_MIN_SECONDS <= seconds <= _MAX_SECONDS and 0 <= nanos < 1_000_000_000):
                raise _MalformedError(f"field {name}: timestamp out of range")
            return _EPOCH + _dt.timedelta(seconds=seconds, microseconds=nanos // 1000), stop

        return timestamp

    def generic(data: bytes, pos: int, end: int, depth: int) -> tuple[Any, int]:
        return _decode_value(data, pos, end, kind, ref, depth, name)

    return generic


_BY_TAG: Final[dict[str, dict[int, _DecField]]] = {
    name: {
        num << 3 | _WIRE_TYPES[kind]: (json, label, _reader(kind, ref, json), kind, ref)
        for num, json, kind, label, ref, *_ in fields
    }
    for name, fields in MESSAGES.items()
}
#: Per message, its field numbers: (JSON name, expected wire type), for the error of a
#: known field sent with another wire type.
_NUMBERS: Final[dict[str, dict[int, tuple[str, int]]]] = {
    name: {num: (json, _WIRE_TYPES[kind]) for num, json, kind, *_ in fields}
    for name, fields in MESSAGES.items()
}


def _decode_entry(
    data: bytes, pos: int, end: int, kind: str, ref: str, depth: int
) -> tuple[str, Any]:
    key: str = ""
    value: Any = _default_of(kind, ref)
    while pos < end:
        tag, pos = _read_varint(data, pos, end)
        number, wire = tag >> 3, tag & 7
        if number == 1 and wire == _LEN:
            key, pos = _decode_value(data, pos, end, "string", "", depth, "key")
        elif number == 2 and wire == _WIRE_TYPES[kind]:
            value, pos = _reader(kind, ref, "value")(data, pos, end, depth)
        else:
            pos = _skip(data, pos, end, wire)
    return key, value


def _default_of(kind: str, ref: str) -> Any:
    if kind in _SCALAR_DEFAULTS:
        return _SCALAR_DEFAULTS[kind]
    if kind == "enum":
        return ENUMS[ref][0]
    if kind == "value":
        return None
    return {}


def _decode_value(
    data: bytes, pos: int, end: int, kind: str, ref: str, depth: int, name: str
) -> tuple[Any, int]:
    if kind == "string" or kind == "bytes":
        size, pos = _read_varint(data, pos, end)
        stop = pos + size
        if stop > end:
            raise _MalformedError(f"field {name}: truncated")
        raw = data[pos:stop]
        if kind == "bytes":
            return bytes(raw), stop
        try:
            return str(raw, "utf-8"), stop
        except UnicodeDecodeError:
            raise _MalformedError(f"field {name}: invalid UTF-8") from None
    if kind == "bool":
        value, pos = _read_varint(data, pos, end)
        return value != 0, pos
    if kind == "int32" or kind == "int64":
        value, pos = _read_varint(data, pos, end)
        return _signed(value, 32 if kind == "int32" else 64), pos
    if kind == "double":
        stop = pos + 8
        if stop > end:
            raise _MalformedError(f"field {name}: truncated")
        return _DOUBLE.unpack_from(data, pos)[0], stop
    # Length-delimited messages.
    size, pos = _read_varint(data, pos, end)
    stop = pos + size
    if stop > end:
        raise _MalformedError(f"field {name}: truncated")
    if kind == "message":
        return _decode_message(data, pos, stop, ref, depth - 1), stop
    if kind == "struct":
        return _decode_struct(data, pos, stop, depth - 1), stop
    if kind == "value":
        return _decode_json_value(data, pos, stop, depth - 1), stop
    # Enums and timestamps have compiled readers only (`_reader`).
    raise AssertionError(f"no generic reader for {kind}")  # pragma: no cover


def _decode_struct(data: bytes, pos: int, end: int, depth: int) -> dict[str, Any]:
    if depth <= 0:
        raise _MalformedError("nesting too deep")
    result: dict[str, Any] = {}
    while pos < end:
        tag, pos = _read_varint(data, pos, end)
        if tag != (1 << 3 | _LEN):
            pos = _skip(data, pos, end, tag & 7)
            continue
        size, pos = _read_varint(data, pos, end)
        stop = pos + size
        if stop > end:
            raise _MalformedError("Struct: truncated")
        key, value = _decode_entry(data, pos, stop, "value", "", depth - 1)
        result[key] = value
        pos = stop
    return result


def _decode_json_value(data: bytes, pos: int, end: int, depth: int) -> Any:
    """A ``google.protobuf.Value`` as the JSON value it holds (the last member set wins)."""
    if depth <= 0:
        raise _MalformedError("nesting too deep")
    value: Any = None
    while pos < end:
        tag, pos = _read_varint(data, pos, end)
        number, wire = tag >> 3, tag & 7
        if number == 1 and wire == _VARINT:
            _, pos = _read_varint(data, pos, end)
            value = None
        elif number == 2 and wire == _I64:
            if pos + 8 > end:
                raise _MalformedError("Value: truncated")
            number_value = _DOUBLE.unpack_from(data, pos)[0]
            pos += 8
            if (
                number_value.is_integer()
                and abs(number_value) < _INT_DOUBLE_LIMIT
                and (number_value or math.copysign(1.0, number_value) > 0)
            ):
                # An integral number reads as an int; -0.0 stays a float (an int has no sign).
                value = int(number_value)
            else:
                value = number_value
        elif number == 3 and wire == _LEN:
            value, pos = _decode_value(data, pos, end, "string", "", depth, "stringValue")
        elif number == 4 and wire == _VARINT:
            flag, pos = _read_varint(data, pos, end)
            value = flag != 0
        elif number in (5, 6) and wire == _LEN:
            size, pos = _read_varint(data, pos, end)
            stop = pos + size
            if stop > end:
                raise _MalformedError("Value: truncated")
            if number == 5:
                value = _decode_struct(data, pos, stop, depth - 1)
            else:
                value = _decode_list(data, pos, stop, depth - 1)
            pos = stop
        elif number in (1, 2, 3, 4, 5, 6):
            raise _MalformedError(f"Value: wire type {wire} for field {number}")
        else:
            pos = _skip(data, pos, end, wire)
    return value


def _decode_list(data: bytes, pos: int, end: int, depth: int) -> list[Any]:
    if depth <= 0:
        raise _MalformedError("nesting too deep")
    values: list[Any] = []
    while pos < end:
        tag, pos = _read_varint(data, pos, end)
        if tag != (1 << 3 | _LEN):
            pos = _skip(data, pos, end, tag & 7)
            continue
        size, pos = _read_varint(data, pos, end)
        stop = pos + size
        if stop > end:
            raise _MalformedError("ListValue: truncated")
        values.append(_decode_json_value(data, pos, stop, depth - 1))
        pos = stop
    return values


def decode_tree(
    data: bytes | bytearray | memoryview, message: str, *, max_depth: int = DEFAULT_MAX_DEPTH
) -> dict[str, Any]:
    """The ProtoJSON tree of ``message`` read from wire bytes. Raises `DecodeError`."""
    raw = bytes(data) if not isinstance(data, bytes) else data
    try:
        return _decode_message(raw, 0, len(raw), message, max_depth)
    except _MalformedError as exc:
        raise DecodeError(f"Invalid protobuf message: {exc}", malformed_json=True) from None
    except RecursionError:  # pragma: no cover - max_depth stops long before
        raise DecodeError(
            "Invalid protobuf message: nesting too deep", malformed_json=True
        ) from None


def _required_defaults(type_: type) -> tuple[tuple[str, Any], ...]:
    """The required fields of ``type_`` that proto3 leaves out at their default, with that
    default: filled in before validation, so that ``""`` fails as it does in JSON, and an
    empty required list is read as empty, not missing."""
    kinds = {f[1]: (f[2], f[3], f[4]) for f in MESSAGES[type_.__name__]}
    pairs: list[tuple[str, Any]] = []
    for field in msgspec.structs.fields(type_):
        if field.required and field.encode_name in kinds:
            kind, label, ref = kinds[field.encode_name]
            if label == 0 and (kind in _SCALAR_DEFAULTS or kind == "enum"):
                pairs.append((field.encode_name, _default_of(kind, ref)))
            elif label in (2, 3):  # an empty list or map is no bytes at all
                pairs.append((field.encode_name, list if label == 2 else dict))
    return tuple(pairs)


#: What each message's tree gets when proto3 left it out (`_required_defaults`); a ``list``
#: or ``dict`` default is called for a fresh one.
_FILL: Final[dict[str, tuple[tuple[str, Any], ...]]] = {
    cls.__name__: found for cls in ALL_STRUCTS if (found := _required_defaults(cls))
}


@overload
def decode(data: bytes | bytearray | memoryview, type_: type[T], *, max_depth: int = ...) -> T: ...
@overload
def decode(data: bytes | bytearray | memoryview, type_: Any, *, max_depth: int = ...) -> Any: ...
def decode(
    data: bytes | bytearray | memoryview, type_: Any, *, max_depth: int = DEFAULT_MAX_DEPTH
) -> Any:
    """A v1.0 Struct (named as its proto message) from wire bytes; ``None`` for ``Empty``.

    Raises `DecodeError` with a message safe to show the client: ``malformed_json`` is true
    for bytes that are no valid encoding, false for a valid encoding of an invalid value.
    """
    if type_ is None or type_ is type(None):
        decode_tree(data, "Empty", max_depth=max_depth)
        return None
    tree = decode_tree(data, type_.__name__, max_depth=max_depth)
    try:
        return msgspec.convert(tree, type_)
    except msgspec.ValidationError as exc:
        raise DecodeError(str(exc), malformed_json=False) from None
