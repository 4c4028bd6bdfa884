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

Nesting deeper than `NESTING_LIMIT` is refused before any decode (`json_depth_exceeds`), so
the answer does not depend on the interpreter: msgspec's decoder has no depth limit of its
own and stops only at the interpreter's recursion guard, which 3.11 and 3.12 meet near 1000
levels but 3.13 only near 10000.
"""

from __future__ import annotations

import enum
import re
from array import array
from collections.abc import Callable
from itertools import accumulate
from typing import Any, Final, TypeAlias, TypeVar, overload

import msgspec
from msgspec import inspect as mi

__all__ = [
    "NESTING_LIMIT",
    "UTF8_BOM",
    "DecodeError",
    "convert",
    "decode",
    "encode",
    "json_depth_exceeds",
    "without_bom",
]

#: A UTF-8 byte order mark. RFC 8259 §8.1: a parser may ignore one at the start of a JSON
#: text, and both official servers do; we do wherever JSON comes in (spec-decisions A29).
UTF8_BOM: Final = b"\xef\xbb\xbf"

#: Deepest JSON nesting `decode` (and `a2a_core.jsonrpc.decode_request`) accepts, on every
#: interpreter: four times `ServerProtocol`'s default ``max_json_depth``, a quarter of the
#: recursion limit that 3.11 shares between msgspec's decoder and the caller's frames.
NESTING_LIMIT: Final = 256

T = TypeVar("T")
#: What `decode` reads: JSON text as bytes (or any buffer), a str, or a msgspec.Raw slice.
_Data: TypeAlias = bytes | bytearray | memoryview | str | msgspec.Raw

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


# --- nesting depth ---------------------------------------------------------------------------
#
# Brackets become the bytes 0x01 (an opener) and 0xff (a closer, -1 as a signed byte); quotes
# are kept to find strings, everything else is dropped. Only C-level bytes operations touch
# the whole body; the Python loops run once per peeled level or per chunk.

_MARKS: Final = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_MARKS: Final = bytes(b for b in range(256) if b not in b'"[]{}')
_PAIR: Final = b"\x01\xff"
_PEELED_LEVELS: Final = 8
_CHUNK: Final = 1 << 15


def json_depth_exceeds(body: bytes, limit: int) -> bool:
    """True when ``body`` nests arrays/objects deeper than ``limit`` (any bytes accepted).

    Exact for valid JSON, brackets inside strings (escapes included) not counted. For
    malformed input it may answer either way, but never false for a body whose brackets,
    read as a JSON decoder reads them until it fails, go deeper than ``limit``. Costs two
    ``bytes.count`` passes when the body has at most ``limit`` openers (any request that
    small), a few C-level passes otherwise.
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False  # cannot be deeper than the number of openers
    if b"\\" in body:
        # Inside a string a backslash starts a two-byte escape; leftmost pairs of backslashes
        # are exactly the escaped backslashes, after which every `\"` is an escaped quote.
        body = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    marks = body.translate(_MARKS, _NOT_MARKS)
    if b'"' in marks:
        # Every remaining quote opens or closes a string. Adjacent quotes go first (a string
        # without brackets, or two strings merging into one); then the brackets left between
        # an odd and an even quote are inside a string.
        marks = marks.replace(b'""', b"")
        if b'"' in marks:
            marks = b"".join(marks.split(b'"')[::2])
    # Peel: each pass removes the innermost pairs, one level of every branch at once, which
    # ends a typical document in a few passes. Long chains shrink slowly: after a few levels,
    # or at the first slow pass, the rest is measured by a running sum.
    peeled = 0
    shrinking = True
    while shrinking and peeled < _PEELED_LEVELS:
        if peeled + marks.count(1) <= limit:
            return False
        shorter = marks.replace(_PAIR, b"")
        removed = len(marks) - len(shorter)
        if not removed:
            break
        peeled += 1
        if peeled > limit:
            return True
        marks = shorter
        shrinking = removed * 16 >= len(marks)
    if peeled + marks.count(1) <= limit:
        return False
    depth = peeled
    for start in range(0, len(marks), _CHUNK):
        chunk = marks[start : start + _CHUNK]
        if max(accumulate(array("b", chunk), initial=depth)) > limit:
            return True
        depth += chunk.count(1) - chunk.count(0xFF)
    return False


def encode(value: Any) -> bytes:
    """Encode a wire value (struct, list, dict, scalar) to compact ProtoJSON bytes."""
    return _encoder.encode(value)


@overload
def decode(data: _Data, type_: type[T]) -> T: ...
@overload
def decode(data: _Data, type_: Any) -> Any: ...
def decode(data: _Data, type_: Any) -> Any:
    """Decode JSON into ``type_`` with ProtoJSON's input rules; raise :class:`DecodeError`.

    Text or bytes nested deeper than `NESTING_LIMIT` are malformed JSON ("JSON nesting too
    deep"). A ``msgspec.Raw`` is taken as a slice of a document already measured, as
    `a2a_core.jsonrpc.decode_request` measures the body whose params it slices out.
    """
    if isinstance(data, str):
        try:
            data = data.encode()
        except UnicodeEncodeError:  # a lone surrogate: no UTF-8 text, hence no JSON
            raise DecodeError("JSON is malformed: invalid UTF-8", malformed_json=True) from None
    if type(data) is bytes and data[:3] == UTF8_BOM:
        data = data[3:]
    # No nesting is deeper than the byte count: small documents skip even the counting. A
    # Raw is a slice of a document already measured (`decode_request`'s params).
    if (
        len(data) > NESTING_LIMIT
        and not isinstance(data, msgspec.Raw)
        and json_depth_exceeds(data if isinstance(data, bytes) else bytes(data), NESTING_LIMIT)
    ):
        raise DecodeError("JSON nesting too deep", malformed_json=True)
    if not _SNAKE_KEY.search(data):
        decoder = _typed_decoders.get(type_) or _typed_decoder(type_)
        try:
            return decoder.decode(data)
        except msgspec.ValidationError:
            pass  # maybe only lenient-path input (integer enums, nulls...): try that
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            raise DecodeError(_json_error_message(exc), malformed_json=True) from None
        except RecursionError:  # a recursion limit lowered below ours, or a Raw that deep
            raise DecodeError("JSON nesting too deep", malformed_json=True) from None
    try:
        generic = _generic_decoder.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise DecodeError(_json_error_message(exc), malformed_json=True) from None
    except RecursionError:
        raise DecodeError("JSON nesting too deep", malformed_json=True) from None
    return convert(generic, type_)


@overload
def convert(obj: Any, type_: type[T]) -> T: ...
@overload
def convert(obj: Any, type_: Any) -> Any: ...
def convert(obj: Any, type_: Any) -> Any:
    """Convert already-parsed JSON (dicts, lists, scalars) into ``type_``, leniently."""
    try:
        return msgspec.convert(_node_for(type_)(obj), type_)
    except msgspec.ValidationError as exc:
        raise DecodeError(str(exc), malformed_json=False) from None
    except RecursionError:
        raise DecodeError("JSON nesting too deep", malformed_json=False) from None


def without_bom(data: bytes) -> bytes:
    """``data`` without one UTF-8 byte order mark at its start (`UTF8_BOM`)."""
    return data[3:] if data[:3] == UTF8_BOM else data


def _typed_decoder(type_: Any) -> msgspec.json.Decoder[Any]:
    decoder = _typed_decoders.get(type_)
    if decoder is None:
        decoder = _typed_decoders[type_] = msgspec.json.Decoder(type_)
    return decoder


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
        # `X | None` (`X | UNSET` is already elided by introspection), or a tagged union of
        # structs (the v0.3 `kind` unions), whose member is picked by its tag value.
        others = [t for t in info.types if not isinstance(t, mi.NoneType)]
        if len(others) == 1:
            return _build(others[0])
        tagged = [t for t in others if isinstance(t, mi.StructType) and t.tag_field]
        if tagged and len(tagged) == len(others):
            return _tagged_union_node(tagged)
        return _identity
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

    tag_field = info.tag_field

    def node(value: Any) -> Any:
        if not isinstance(value, dict):
            return value  # convert() reports the type error with its path
        out: dict[str, Any] = {}
        if tag_field is not None and tag_field in value:
            out[tag_field] = value[tag_field]  # kept so that convert() checks it
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


def _tagged_union_node(members: list[mi.StructType]) -> _Node:
    by_tag: dict[Any, _Node] = {}
    tag_fields = {m.tag_field for m in members}
    for member in members:
        by_tag[member.tag] = _node_for(member.cls)
    by_content = _content_members(members)

    def node(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        for tag_field in tag_fields:
            tag = value.get(tag_field)
            # Tags are strings or integers; a list or object in the tag's place is unhashable.
            member = by_tag.get(tag) if isinstance(tag, str | int) else None
            if member is not None:
                return member(value)
        if by_content and not any(tag_field in value for tag_field in tag_fields):
            # No tag at all (a v0.3 part sent as {"text": ...}): the kind of its one
            # content member, as the official servers read it (spec-decisions A26).
            present = [found for key, found in by_content.items() if key in value]
            # A `type` in the tag's place is taken as the tag when it names the same kind;
            # naming another ("unsupported_type"), the part stays refused, as the v0.3
            # compatibility kit expects of an unsupported part.
            if len(present) == 1 and value.get("type", present[0][1]) == present[0][1]:
                tag_field, tag = present[0]
                return by_tag[tag]({**value, tag_field: tag})
        return value  # unknown or missing tag: convert() says which

    return node


def _content_members(members: list[mi.StructType]) -> dict[str, tuple[str, Any]]:
    """For a union whose members each have exactly one required field besides the tag (the
    v0.3 parts: ``text``, ``file``, ``data``), that field's name -> (tag field, tag); else
    empty: only such a union has a kind that its content says without doubt."""
    found: dict[str, tuple[str, Any]] = {}
    for member in members:
        required = [f.encode_name for f in member.fields if f.required]
        if len(required) != 1 or required[0] in found or member.tag_field is None:
            return {}
        found[required[0]] = (member.tag_field, member.tag)
    return found


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
    if not all(isinstance(m.value, str) and m.value.isupper() for m in members):
        return _identity  # not a proto enum (the v0.3 lowercase ones): no integer form

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
