"""The JSON-RPC 2.0 envelope of the A2A JSON-RPC binding, for both wire dialects.

This module owns three things:

- the method tables (spec-decisions F1): v1.0 PascalCase names and v0.3 ``category/action`` names,
  which are disjoint, each mapped to a version-neutral `Operation` and whether it streams;
- `decode_request`: request bytes to a `JsonRpcRequest` or a ready `JsonRpcFailure`. It
  never raises on any input; it checks the envelope only (``jsonrpc``, ``method``, ``id``,
  ``params`` shape). Whether the method exists and whether the params are valid are later
  steps (spec-decisions R1: JSON parse -> envelope -> method -> params);
- the response encoders `encode_result` and `encode_error`.

Params are decoded as `msgspec.Raw`: the envelope decoder slices them out of the body
without building Python objects, and the method's own params decoder parses them once.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, Literal

import msgspec
from msgspec import UNSET, UnsetType

from a2a_core._protocol.codec import NESTING_LIMIT, json_depth_exceeds, without_bom
from a2a_core._protocol.errors import (
    A2AError,
    InvalidRequestError,
    JSONParseError,
    JsonRpcErrorObject,
    jsonrpc_error_object,
)
from a2a_core._protocol.operations import OPERATIONS, Dialect, Operation

__all__ = [
    "V0_3_METHODS",
    "V1_METHODS",
    "Dialect",
    "JsonRpcFailure",
    "JsonRpcId",
    "JsonRpcRequest",
    "MethodSpec",
    "NotificationPolicy",
    "Operation",
    "decode_request",
    "encode_error",
    "encode_result",
    "lookup_method",
    "request_id_of",
]

#: A JSON-RPC request id. ``None`` is a JSON ``null`` id (a reply to a request whose id could
#: not be read), or no id at all in a notification. A float is an integral number sent with a
#: fraction (``1.0``), echoed as sent.
JsonRpcId = str | int | float | None

#: What `decode_request` does with a well-formed notification (a request without ``id``):
#: ``"reject"`` answers -32600 with ``id: null`` (the default: A2A defines no notification
#: methods, spec-decisions F2); ``"ignore"`` returns a failure whose ``reply`` is false, so the
#: caller sends no JSON-RPC body (JSON-RPC 2.0 §4.1); ``"accept"`` returns the request with
#: ``is_notification`` set, for a caller that executes it and sends no reply.
NotificationPolicy = Literal["reject", "ignore", "accept"]


class MethodSpec(msgspec.Struct, frozen=True):
    """One JSON-RPC method name and what it means."""

    name: str
    """The wire name, e.g. ``message/send``."""
    operation: Operation
    """The version-neutral operation it invokes."""
    dialect: Dialect
    """The dialect the name belongs to; the reply is encoded in it."""
    streaming: bool
    """Whether the result is an SSE stream rather than one response (the operation's)."""


#: v1.0 method names (equal to the gRPC RPC names), from the operations table.
V1_METHODS: Final[Mapping[str, MethodSpec]] = MappingProxyType(
    {
        spec.operation.value: MethodSpec(
            spec.operation.value, spec.operation, "1.0", spec.streaming
        )
        for spec in OPERATIONS.values()
    }
)

#: v0.3 method names, from the operations table. v0.3 has no list-tasks method (spec-decisions A4).
V0_3_METHODS: Final[Mapping[str, MethodSpec]] = MappingProxyType(
    {
        spec.v0_3_method: MethodSpec(spec.v0_3_method, spec.operation, "0.3", spec.streaming)
        for spec in OPERATIONS.values()
        if spec.v0_3_method is not None
    }
)

_ALL_METHODS: Final[dict[str, MethodSpec]] = {**V1_METHODS, **V0_3_METHODS}


def lookup_method(name: str) -> MethodSpec | None:
    """The spec of a method name in either dialect, or ``None`` (answer -32601)."""
    return _ALL_METHODS.get(name)


# ---------------------------------------------------------------------------------------
# Decoding


class JsonRpcRequest(msgspec.Struct, frozen=True):
    """A request whose envelope is valid. The method may still be unknown."""

    id: JsonRpcId
    """The id to echo in the reply (``None`` for ``"id": null`` or a notification)."""
    method: str
    """The method name as sent; resolve it with `lookup_method`."""
    params: msgspec.Raw
    """The raw bytes of the params object. Absent or ``null`` params are ``{}``, so every
    method's params decoder sees an object and reports missing fields as -32602."""
    is_notification: bool = False
    """The request had no ``id`` (only with ``notifications="accept"``): send no reply."""


class JsonRpcFailure(msgspec.Struct, frozen=True):
    """A request that cannot be executed, with everything needed to answer it."""

    error: A2AError
    """-32700 or -32600, with a message that says what is wrong (never echoing input)."""
    id: JsonRpcId
    """The id to answer with: the request's id when it was a valid id, else ``None``."""
    dialect: Dialect | None = None
    """The dialect of the method when its name was recognised, to encode the reply in."""
    reply: bool = True
    """Whether to send a reply at all; false only for a notification under ``"ignore"``."""

    def encode(self, default_dialect: Dialect = "1.0") -> bytes:
        """The error reply, in the method's dialect when known, else ``default_dialect``.

        The method name says which dialect the client speaks more reliably than the
        ``A2A-Version`` header (clients send v1.0 methods without it, spec-decisions A1), so
        pass the negotiated version as ``default_dialect``.
        """
        return encode_error(self.id, self.error, self.dialect or default_dialect)


class _Envelope(msgspec.Struct):
    # UNSET tells "absent" from "null". The types reject a bool id, a non-string method and
    # a non-string jsonrpc; such a document goes to the slow path to be classified. A float
    # or null id decodes, and `_id_refused` says whether it may stay.
    jsonrpc: str | UnsetType = UNSET
    method: str | UnsetType = UNSET
    id: str | int | float | UnsetType | None = UNSET
    # An absent member leaves the default, an empty Raw.
    params: msgspec.Raw = msgspec.Raw()


_ENVELOPE_DECODER: Final = msgspec.json.Decoder(_Envelope)
_ANY_DECODER: Final = msgspec.json.Decoder()
_EMPTY_PARAMS: Final = msgspec.Raw(b"{}")
_NULL: Final = msgspec.Raw(b"null")
_OPEN_BRACE: Final = ord("{")

_PREFIX: Final = InvalidRequestError.default_message + ": "
_MSG_NOT_OBJECT: Final = _PREFIX + "the request must be a JSON object"
_MSG_BATCH: Final = _PREFIX + "batch requests are not supported"
_MSG_JSONRPC: Final = _PREFIX + "'jsonrpc' must be exactly \"2.0\""
_MSG_METHOD: Final = _PREFIX + "'method' must be a string"
_MSG_ID: Final = _PREFIX + "'id' must be a string or an integer"
_MSG_PARAMS: Final = _PREFIX + "'params' must be an object"
_MSG_NOTIFICATION: Final = _PREFIX + "notifications (requests without 'id') are not supported"
_MSG_UTF8: Final = JSONParseError.default_message + ": not valid UTF-8"
_MSG_TOO_DEEP: Final = JSONParseError.default_message + ": nesting too deep"


def _parse_failure(message: str | None = None) -> JsonRpcFailure:
    return JsonRpcFailure(JSONParseError(message), None)


def _dialect_of(method: object) -> Dialect | None:
    spec = _ALL_METHODS.get(method) if isinstance(method, str) else None
    return spec.dialect if spec is not None else None


def decode_request(
    body: bytes | bytearray | memoryview,
    *,
    notifications: NotificationPolicy = "reject",
    depth_checked: bool = False,
) -> JsonRpcRequest | JsonRpcFailure:
    """Decode one JSON-RPC request; never raises on any body.

    ``depth_checked``: the caller has already refused bodies nested deeper than
    `a2a_core.codec.NESTING_LIMIT` (as `ServerProtocol` does with its ``max_json_depth``), so
    the body is not measured again.

    Failures, in the order they are checked:

    - not UTF-8, not JSON, or nested deeper than `a2a_core.codec.NESTING_LIMIT` (on every
      interpreter, whatever its recursion limit): -32700, ``id: null``;
    - a top-level array (A2A defines no batches) or any other non-object: -32600, ``id: null``;
    - an ``id`` that is null, or not a string or an integer (a bool is not one here; an
      integral float such as ``1.0`` is, and is echoed as sent): -32600, ``id: null``;
    - ``jsonrpc`` not exactly ``"2.0"``, ``method`` missing or not a string, ``params``
      present and neither an object nor null: -32600, echoing the id;
    - no ``id`` at all (a notification): see `NotificationPolicy`.

    The body size is limited by the caller before this is reached.
    """
    if not isinstance(body, bytes):
        # Own the bytes: the returned Raw params point into this buffer.
        body = bytes(body)
    body = without_bom(body)  # RFC 8259 §8.1 lets a parser ignore one (spec-decisions A29)
    # msgspec only validates UTF-8 in strings it materialises, not inside params (a Raw) or
    # skipped members, so check the whole body; ASCII bodies (most) skip the decode.
    if not body.isascii():
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return _parse_failure(_MSG_UTF8)
    # msgspec stops only at the interpreter's recursion guard (near 10000 levels on 3.13):
    # measure first. No nesting is deeper than the byte count, so most bodies skip even that.
    if not depth_checked and len(body) > NESTING_LIMIT and json_depth_exceeds(body, NESTING_LIMIT):
        return _parse_failure(_MSG_TOO_DEEP)
    try:
        env = _ENVELOPE_DECODER.decode(body)
    except msgspec.ValidationError:
        # Valid JSON so far, but not the envelope's shape: find out why (or that it is not
        # valid JSON after all) with a generic decode. This path is for bad requests only.
        return _classify(body)
    except msgspec.DecodeError:
        return _parse_failure()
    except RecursionError:  # a recursion limit lowered below NESTING_LIMIT (3.11 shares it)
        return _parse_failure(_MSG_TOO_DEEP)

    id_ = env.id
    if id_ is not UNSET and _id_refused(id_):
        return JsonRpcFailure(InvalidRequestError(_MSG_ID), None, _dialect_of(env.method))
    echo: JsonRpcId = None if id_ is UNSET else id_
    method = env.method
    # The failures below name the method's dialect (`_dialect_of`); a valid request does not
    # need it, so it is looked up only there.
    if env.jsonrpc != "2.0":
        return JsonRpcFailure(InvalidRequestError(_MSG_JSONRPC), echo, _dialect_of(method))
    if method is UNSET:
        return JsonRpcFailure(InvalidRequestError(_MSG_METHOD), echo)
    params = env.params
    raw = memoryview(params)  # a Raw holds exactly the value's bytes, no whitespace
    if not raw or params == _NULL:
        params = _EMPTY_PARAMS
    elif raw[0] != _OPEN_BRACE:
        return JsonRpcFailure(InvalidRequestError(_MSG_PARAMS), echo, _dialect_of(method))
    if id_ is UNSET:
        if notifications == "accept":
            return JsonRpcRequest(None, method, params, is_notification=True)
        return JsonRpcFailure(
            InvalidRequestError(_MSG_NOTIFICATION),
            None,
            _dialect_of(method),
            reply=notifications != "ignore",
        )
    return JsonRpcRequest(echo, method, params)


def _valid_id(value: object) -> bool:
    # type() rather than isinstance(): bool is a subclass of int but not a JSON-RPC id.
    return (
        type(value) is str
        or type(value) is int
        or (type(value) is float and not _id_refused(value))
    )


def _id_refused(value: str | int | float | None) -> bool:
    """A null id (a reply could not be told from one to an unreadable id; the v0.3 request
    types and both official servers refuse it), or a number with a fraction: refused. An
    integral float (``1.0``: an integer to JSON Schema) is kept (spec-decisions A27)."""
    if value is None:
        return True
    return type(value) is float and not value.is_integer()  # nan and inf are not integers


def request_id_of(body: bytes) -> JsonRpcId:
    """The id of a request refused before its envelope was read (its version, content type
    or credentials), when ``body`` is a JSON object with a valid one; else ``None``. JSON-RPC
    2.0 §5: the reply's id is the request's unless it could not be detected. The caller
    keeps the bodies it never parses (too large, too deep) away from here."""
    try:
        env = _ENVELOPE_DECODER.decode(without_bom(body))
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        return None
    id_ = env.id
    return None if id_ is UNSET or _id_refused(id_) else id_


def _classify(body: bytes) -> JsonRpcFailure:
    """Say why a JSON document failed the envelope decoder (slow path, errors only)."""
    try:
        doc = _ANY_DECODER.decode(body)
    except msgspec.DecodeError:
        return _parse_failure()
    except RecursionError:
        return _parse_failure(_MSG_TOO_DEEP)
    if isinstance(doc, list):
        return JsonRpcFailure(InvalidRequestError(_MSG_BATCH), None)
    if not isinstance(doc, dict):
        return JsonRpcFailure(InvalidRequestError(_MSG_NOT_OBJECT), None)
    id_ = doc.get("id")
    if "id" in doc and not _valid_id(id_):  # absent: a notification, judged below
        return JsonRpcFailure(InvalidRequestError(_MSG_ID), None, _dialect_of(doc.get("method")))
    method = doc.get("method")
    dialect = _dialect_of(method)
    if doc.get("jsonrpc") != "2.0":
        return JsonRpcFailure(InvalidRequestError(_MSG_JSONRPC), id_, dialect)
    if not isinstance(method, str):
        return JsonRpcFailure(InvalidRequestError(_MSG_METHOD), id_)
    # Reached when a member was repeated and an earlier copy had the wrong type (the dict
    # keeps the last copy): still not a valid request.
    return JsonRpcFailure(InvalidRequestError(), id_, dialect)


# ---------------------------------------------------------------------------------------
# Encoding


class _ResultResponse(msgspec.Struct):
    jsonrpc: str
    id: JsonRpcId
    result: Any


class _ErrorResponse(msgspec.Struct):
    jsonrpc: str
    id: JsonRpcId
    error: JsonRpcErrorObject


_ENCODER: Final = msgspec.json.Encoder()
# A tuple, not `bytes | bytearray | memoryview`: that union would be built on every call.
_BUFFERS: Final = (bytes, bytearray, memoryview)


def encode_result(id: JsonRpcId, result: object) -> bytes:
    """Encode a success response ``{"jsonrpc":"2.0","id":…,"result":…}``.

    ``result`` is anything msgspec encodes (a Struct, a dict, ``None`` for ``null``), or an
    already-encoded JSON value as `msgspec.Raw` or ``bytes``, which is embedded as is.
    Top-level ``bytes`` are taken as encoded JSON because no A2A result is a byte string.
    """
    if isinstance(result, _BUFFERS):
        result = msgspec.Raw(result)
    return _ENCODER.encode(_ResultResponse("2.0", id, result))


def encode_error(id: JsonRpcId, err: A2AError, dialect: Dialect = "1.0") -> bytes:
    """Encode an error response ``{"jsonrpc":"2.0","id":…,"error":{…}}`` in ``dialect``.

    An error reply must always go out: if the error's free-form ``data`` cannot be encoded
    (a developer put a non-JSON object in it), the reply is sent without ``data``.
    """
    obj = jsonrpc_error_object(err, dialect)
    try:
        return _ENCODER.encode(_ErrorResponse("2.0", id, obj))
    except Exception:  # any encoding failure of developer-supplied data
        bare = JsonRpcErrorObject(obj.code, obj.message)
        return _ENCODER.encode(_ErrorResponse("2.0", id, bare))
