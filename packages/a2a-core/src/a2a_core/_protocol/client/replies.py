"""Reading a reply: status, headers and body to the v1.0 result or an `AgentError` (L1, pure).

`read_reply` turns the reply to a one-shot call into its v1.0 result, whatever the binding
and dialect; `read_error` finds the A2A error in a reply that is not a result (a JSON-RPC
error object, an AIP-193 ``google.rpc.Status`` body, the v0.3 REST ``{code, message}``
body some servers send, or a2a-sdk 0.3's bare ``{message}`` on a v0.3 REST error status), for
the streams' refusals too. Nothing here raises anything but `AgentError` (the agent said no)
and `InvalidReplyError` (the reply is not A2A): a garbage reply is a clear error, never an
exception from deep inside a decoder.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from a2a_core._protocol import codec
from a2a_core._protocol.client.cards import Endpoint
from a2a_core._protocol.client.errors import AgentError, InvalidReplyError
from a2a_core._protocol.jsonrpc import JsonRpcId
from a2a_core._protocol.operations import OPERATIONS, Dialect, Operation

__all__ = ["read_error", "read_reply", "result_from_json"]

_ERROR_INFO: Final = "google.rpc.ErrorInfo"
_ANY: Final = msgspec.json.Decoder()
_NOTHING: Final = (type(None),)


class _ErrorObject(msgspec.Struct):
    code: int
    message: str = ""
    data: Any = None


class _Envelope(msgspec.Struct):
    jsonrpc: str = ""
    id: JsonRpcId = None
    result: msgspec.Raw = msgspec.Raw()
    error: _ErrorObject | None = None


_ENVELOPE: Final = msgspec.json.Decoder(_Envelope)


def _error_info(details: object) -> tuple[str | None, dict[str, str]]:
    """The reason and metadata of the first ErrorInfo among ProtoJSON ``Any`` details."""
    if isinstance(details, list):
        for detail in details:
            if isinstance(detail, dict) and str(detail.get("@type", "")).endswith(_ERROR_INFO):
                reason = detail.get("reason")
                raw = detail.get("metadata")
                metadata = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
                return (reason if isinstance(reason, str) and reason else None), metadata
    return None, {}


def _jsonrpc_error(error: _ErrorObject, http_status: int) -> AgentError:
    reason, metadata = _error_info(error.data)
    return AgentError(
        error.message,
        code=error.code,
        reason=reason,
        http_status=http_status,
        metadata=metadata,
        data=error.data,
    )


def _rest_error(fields: Mapping[str, Any], http_status: int) -> AgentError | None:
    """The error of an AIP-193 body, or of a ``{code, message}`` one; ``None`` for neither."""
    status = fields.get("error")
    code = fields.get("code")
    message = fields.get("message")
    if isinstance(status, Mapping):
        reason, metadata = _error_info(status.get("details"))
        inner_code = status.get("code")
        # AIP-193's `code` is the HTTP status; a negative one is a JSON-RPC code (the shape
        # a few servers send), and the v0.3 form repeats the JSON-RPC code at the top.
        if not isinstance(code, int) and isinstance(inner_code, int) and inner_code < 0:
            code = inner_code
        text = status.get("message", message)
        return AgentError(
            text if isinstance(text, str) else "",
            code=code if isinstance(code, int) and not isinstance(code, bool) else None,
            reason=reason,
            http_status=http_status,
            metadata=metadata,
            data=status.get("details"),
        )
    if isinstance(code, int) and not isinstance(code, bool) and isinstance(message, str):
        return AgentError(message, code=code, http_status=http_status, data=fields.get("data"))
    return None


def read_error(endpoint: Endpoint, status: int, body: bytes) -> AgentError | InvalidReplyError:
    """The error a reply that is not a result carries: an `AgentError` when the body is
    the binding's error shape, else an `InvalidReplyError` describing the reply."""
    body = codec.without_bom(body)
    if endpoint.binding == "jsonrpc":
        try:
            envelope = _ENVELOPE.decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            envelope = None
        if envelope is not None and envelope.error is not None:
            return _jsonrpc_error(envelope.error, status)
    try:
        fields = _ANY.decode(body)
    except (msgspec.DecodeError, RecursionError):
        fields = None
    if isinstance(fields, dict):
        error = _rest_error(fields, status)
        if error is not None:
            return error
        message = fields.get("message")
        if (
            endpoint.binding == "rest"
            and endpoint.dialect == "0.3"
            and status >= 400
            and isinstance(message, str)
        ):
            # v0.3 REST defined no error body; a2a-sdk 0.3 answers the HTTP status of the
            # error with ``{"message": ...}`` alone (404 "Task not found", 409 ...).
            return AgentError(message, http_status=status)
    return InvalidReplyError(
        f"the agent answered HTTP {status} without an A2A error", status=status, body=body
    )


def result_from_json(operation: Operation, dialect: Dialect, binding: str, raw: bytes) -> Any:
    """The v1.0 result of ``operation`` from the JSON of its result in ``dialect``.

    ``binding`` picks the v0.3 shape (JSON-RPC's results or REST's v0.3 proto bodies); v1.0
    is the same in both. An empty result (a delete) is ``None``.
    """
    spec = OPERATIONS[operation]
    try:
        if spec.results == _NOTHING:
            return None
        if dialect == "1.0":
            return codec.decode(raw, spec.results[0])
        if binding == "rest":
            result_type, to_v1 = spec.v0_3_rest_result_type, spec.v0_3_rest_result_to_v1
        else:
            result_type, to_v1 = spec.v0_3_result_type, spec.v0_3_result_to_v1
        if result_type is None or to_v1 is None:
            raise InvalidReplyError(f"{operation.value} has no v0.3 result")
        return to_v1(codec.decode(raw, result_type))
    except codec.DecodeError as exc:
        raise InvalidReplyError(
            f"the {operation.value} result is not valid: {exc.message}", body=raw
        ) from None
    except (ValueError, TypeError, OverflowError) as exc:  # a conversion refusing a value
        raise InvalidReplyError(f"the {operation.value} result is not valid: {exc}") from None


def read_reply(
    operation: Operation,
    endpoint: Endpoint,
    status: int,
    body: bytes,
    *,
    request_id: JsonRpcId = None,
) -> Any:
    """The v1.0 result of a one-shot call, from the reply's status and body.

    The result is the operation's v1.0 result type (`OperationSpec.results`):
    `SendMessageResponse`, `Task`, `ListTasksResponse`, `TaskPushNotificationConfig`,
    `ListTaskPushNotificationConfigsResponse`, `AgentCard`, or ``None`` for a delete.
    Raises `AgentError` when the agent answered with an A2A error (on any binding, whatever
    the HTTP status), `InvalidReplyError` when the reply is not A2A (and, for JSON-RPC, when
    it answers another ``request_id`` than the one given).
    """
    body = codec.without_bom(body)
    if endpoint.binding == "jsonrpc":
        try:
            envelope = _ENVELOPE.decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            raise read_error(endpoint, status, body) from None
        if envelope.error is not None:
            raise _jsonrpc_error(envelope.error, status)
        if status != 200 or not len(envelope.result):
            raise InvalidReplyError(
                f"the agent answered HTTP {status} without a JSON-RPC result or error",
                status=status,
                body=body,
            )
        if request_id is not None and envelope.id != request_id:
            raise InvalidReplyError(
                f"the reply answers JSON-RPC id {envelope.id!r}, not {request_id!r}"
            )
        return result_from_json(operation, endpoint.dialect, "jsonrpc", bytes(envelope.result))
    if not 200 <= status < 300:
        raise read_error(endpoint, status, body)
    return result_from_json(operation, endpoint.dialect, "rest", body or b"{}")
