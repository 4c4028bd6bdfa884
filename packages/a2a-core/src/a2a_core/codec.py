"""ProtoJSON decoding and encoding of wire structs (L1, pure).

Output is what ProtoJSON prints: camelCase names, enum names, base64 bytes, RFC 3339
timestamps with ``Z``, defaults omitted. Input is what ProtoJSON parsers accept, which is
more than msgspec accepts natively:

- original snake_case field names as well as camelCase (``task_id`` for ``taskId``);
- enum values as integers (``"state": 3``) as well as names;
- ``null`` for any field, meaning "not set";
- int32/int64 values as decimal strings, and URL-safe or unpadded base64 for bytes.

Most requests use none of those, so decoding takes a **fast path** first: one typed msgspec
decode with a decoder built once per type. Only when that fails, or when the body shows a
snake_case key, does it take the **lenient path**: a generic decode, a schema-aware rewrite
of the keys and values above (it walks only the declared structure, so the keys of
``metadata`` and other free-form maps are never touched), then ``msgspec.convert``. Either
way a bad document raises :class:`DecodeError` with a message safe to show to the client.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from typing import Any, Final, TypeVar, cast

import msgspec
from msgspec import inspect as mi

__all__ = ["DecodeError", "convert", "decode", "encode"]

T = TypeVar("T")

_encoder: Final = msgspec.json.Encoder()
_generic_decoder: Final = msgspec.json.Decoder()
_typed_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}
# A snake_case object key: `"word_word":`. Its presence sends the body down the lenient path,
# since msgspec would otherwise silently ignore the key as an unknown field.
_SNAKE_KEY: Final = re.compile(rb'"[a-z][a-z0-9]*_[a-z0-9_]*"\s*:')
_INT_STRING: Final = re.compile(r"-?[0-9]+")


class DecodeError(ValueError):
    """A document that is not valid JSON, or not a valid value of the expected type.

    ``message`` is safe to send to the client (msgspec's description with a JSON path, such
    as ``Object missing required field `messageId` - at `$.message```); ``malformed_json``
    tells a syntax error (JSON-RPC -32700) from a schema error (-32602).
    """

    def __init__(self, message: str, *, malformed_json: bool) -> None:
        super().__init__(message)
        self.message = message
        self.malformed_json = malformed_json


def encode(value: Any) -> bytes:
    """Encode a wire value (struct, list, dict, scalar) to compact ProtoJSON bytes."""
    return _encoder.encode(value)


def decode(data: bytes | bytearray | memoryview | str | msgspec.Raw, type_: type[T]) -> T:
    """Decode JSON into ``type_`` with ProtoJSON's input rules; raise :class:`DecodeError`."""
    if isinstance(data, str):
        data = data.encode()
    if not _SNAKE_KEY.search(data):
        try:
            return _typed_decoder(type_).decode(data)
        except msgspec.ValidationError:
            pass  # maybe only lenient-path input (integer enums, nulls...): try that
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            raise DecodeError(_json_error_message(exc), malformed_json=True) from None
        except RecursionError:
            raise DecodeError("JSON nesting too deep", malformed_json=True) from None
    try:
        generic = _generic_decoder.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise DecodeError(_json_error_message(exc), malformed_json=True) from None
    except RecursionError:
        raise DecodeError("JSON nesting too deep", malformed_json=True) from None
    return convert(generic, type_)


def convert(obj: Any, type_: type[T]) -> T:
    """Convert already-parsed JSON (dicts, lists, scalars) into ``type_``, leniently."""
    try:
        return msgspec.convert(_node_for(type_)(obj), type_)
    except msgspec.ValidationError as exc:
        raise DecodeError(str(exc), malformed_json=False) from None
    except RecursionError:
        raise DecodeError("JSON nesting too deep", malformed_json=False) from None


def _typed_decoder(type_: type[T]) -> msgspec.json.Decoder[T]:
    decoder = _typed_decoders.get(type_)
    if decoder is None:
        decoder = _typed_decoders[type_] = msgspec.json.Decoder(type_)
    return cast("msgspec.json.Decoder[T]", decoder)


def _json_error_message(exc: Exception) -> str:
    # msgspec's messages ("JSON is malformed: invalid character (byte 3)") name positions,
    # never content, so they are safe to return; a UTF-8 error's text quotes bytes: not shown.
    if isinstance(exc, UnicodeDecodeError):
        return "JSON is malformed: invalid UTF-8"
    return str(exc) or "JSON is malformed"


# --- the lenient path ----------------------------------------------------------------------
#
# A "node" is a function that rewrites one parsed JSON value for one declared type. Nodes are
# built once per type from msgspec's type introspection and cached; a struct's node is
# registered before its fields are built so that recursive types terminate.

_Node = Callable[[Any], Any]
_nodes: dict[Any, _Node] = {}


def _identity(value: Any) -> Any:
    return value


def _node_for(type_: Any) -> _Node:
    node = _nodes.get(type_)
    if node is None:
        node = _build(mi.type_info(type_))
        _nodes[type_] = node
    return node


def _build(info: mi.Type) -> _Node:
    if isinstance(info, mi.Metadata):
        return _build(info.type)
    if isinstance(info, mi.StructType):
        return _struct_node(info)
    if isinstance(info, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        return _list_node(_build(info.item_type))
    if isinstance(info, mi.DictType):
        return _dict_node(_build(info.value_type))
    if isinstance(info, mi.EnumType):
        return _enum_node(info.cls)
    if isinstance(info, mi.BytesType):
        return _bytes_value
    if isinstance(info, mi.IntType):
        return _int_value
    if isinstance(info, mi.UnionType):
        # Our unions are `X | None` (and `X | UNSET`, which introspection already elides).
        others = [t for t in info.types if not isinstance(t, mi.NoneType)]
        return _build(others[0]) if len(others) == 1 else _identity
    return _identity


def _is_nullable(info: mi.Type) -> bool:
    if isinstance(info, mi.Metadata):
        return _is_nullable(info.type)
    if isinstance(info, mi.AnyType | mi.NoneType):
        return True
    if isinstance(info, mi.UnionType):
        return any(_is_nullable(t) for t in info.types)
    return False


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _struct_node(info: mi.StructType) -> _Node:
    cls = info.cls
    placeholder: dict[str, tuple[str, _Node, bool]] = {}

    def node(value: Any) -> Any:
        if not isinstance(value, dict):
            return value  # convert() reports the type error with its path
        out: dict[str, Any] = {}
        for key, item in value.items():
            target = placeholder.get(key)
            if target is None:
                continue  # unknown field: ignored, as the spec asks
            encode_name, child, nullable = target
            if item is None and not nullable:
                continue  # ProtoJSON: null means "not set"
            out[encode_name] = child(item)
        return out

    _nodes[cls] = node  # before building fields: types may refer to themselves
    for f in info.fields:
        entry = (f.encode_name, _build(f.type), _is_nullable(f.type))
        for alias in {f.encode_name, f.name, _snake(f.encode_name)}:
            placeholder[alias] = entry
    return node


def _list_node(item: _Node) -> _Node:
    if item is _identity:
        return _identity

    def node(value: Any) -> Any:
        return [item(v) for v in value] if isinstance(value, list) else value

    return node


def _dict_node(item: _Node) -> _Node:
    if item is _identity:
        return _identity

    def node(value: Any) -> Any:
        return {k: item(v) for k, v in value.items()} if isinstance(value, dict) else value

    return node


def _enum_node(cls: type[enum.Enum]) -> _Node:
    members = list(cls)  # declared in proto-number order

    def node(value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(members):
            return members[value].value
        return value

    return node


def _bytes_value(value: Any) -> Any:
    if isinstance(value, str):
        value = value.replace("-", "+").replace("_", "/")
        return value + "=" * (-len(value) % 4)
    return value


def _int_value(value: Any) -> Any:
    if isinstance(value, str) and _INT_STRING.fullmatch(value):
        return int(value)
    return value
