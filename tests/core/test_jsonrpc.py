"""The JSON-RPC envelope: request bytes in, request or reply bytes out, never an exception."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core import errors, jsonrpc
from a2a_core.errors import (
    InvalidParamsError,
    MethodNotFoundError,
    TaskNotFoundError,
    error_class_for_code,
)
from a2a_core.jsonrpc import (
    V0_3_METHODS,
    V1_METHODS,
    Dialect,
    JsonRpcFailure,
    JsonRpcRequest,
    MethodSpec,
    NotificationPolicy,
    Operation,
    decode_request,
    encode_error,
    encode_result,
    lookup_method,
)

# ---------------------------------------------------------------------------------------
# Method tables

V1_NAMES = {
    "SendMessage": (Operation.SEND_MESSAGE, False),
    "SendStreamingMessage": (Operation.SEND_STREAMING_MESSAGE, True),
    "GetTask": (Operation.GET_TASK, False),
    "ListTasks": (Operation.LIST_TASKS, False),
    "CancelTask": (Operation.CANCEL_TASK, False),
    "SubscribeToTask": (Operation.SUBSCRIBE_TO_TASK, True),
    "CreateTaskPushNotificationConfig": (Operation.CREATE_PUSH_CONFIG, False),
    "GetTaskPushNotificationConfig": (Operation.GET_PUSH_CONFIG, False),
    "ListTaskPushNotificationConfigs": (Operation.LIST_PUSH_CONFIGS, False),
    "DeleteTaskPushNotificationConfig": (Operation.DELETE_PUSH_CONFIG, False),
    "GetExtendedAgentCard": (Operation.GET_EXTENDED_CARD, False),
}
V0_3_NAMES = {
    "message/send": (Operation.SEND_MESSAGE, False),
    "message/stream": (Operation.SEND_STREAMING_MESSAGE, True),
    "tasks/get": (Operation.GET_TASK, False),
    "tasks/cancel": (Operation.CANCEL_TASK, False),
    "tasks/resubscribe": (Operation.SUBSCRIBE_TO_TASK, True),
    "tasks/pushNotificationConfig/set": (Operation.CREATE_PUSH_CONFIG, False),
    "tasks/pushNotificationConfig/get": (Operation.GET_PUSH_CONFIG, False),
    "tasks/pushNotificationConfig/list": (Operation.LIST_PUSH_CONFIGS, False),
    "tasks/pushNotificationConfig/delete": (Operation.DELETE_PUSH_CONFIG, False),
    "agent/getAuthenticatedExtendedCard": (Operation.GET_EXTENDED_CARD, False),
}


@pytest.mark.parametrize(
    ("table", "expected", "dialect"),
    [(V1_METHODS, V1_NAMES, "1.0"), (V0_3_METHODS, V0_3_NAMES, "0.3")],
)
def test_method_tables(
    table: dict[str, MethodSpec], expected: dict[str, tuple[Operation, bool]], dialect: str
) -> None:
    assert {name: (s.operation, s.streaming) for name, s in table.items()} == expected
    for name, spec in table.items():
        assert spec.name == name
        assert spec.dialect == dialect
        assert lookup_method(name) is spec


def test_method_tables_are_disjoint_and_cover_every_operation() -> None:
    assert not set(V1_METHODS) & set(V0_3_METHODS)
    assert {s.operation for s in V1_METHODS.values()} == set(Operation)
    # v0.3 has no list-tasks method (spec-decisions A4)
    assert {s.operation for s in V0_3_METHODS.values()} == set(Operation) - {Operation.LIST_TASKS}
    # the operation's value is its canonical (v1.0) name
    assert all(V1_METHODS[op.value].operation is op for op in Operation)


@pytest.mark.parametrize("name", ["tasks/list", "sendMessage", "", "message/send ", "GetAgentCard"])
def test_unknown_methods(name: str) -> None:
    assert lookup_method(name) is None


def test_tables_and_specs_are_immutable() -> None:
    with pytest.raises(TypeError):
        V1_METHODS["X"] = V1_METHODS["GetTask"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        V1_METHODS["GetTask"].streaming = True  # type: ignore[misc]


# ---------------------------------------------------------------------------------------
# Golden cases: request bytes -> reply bytes (failures) or decoded request (successes)

INFO = (
    '{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"$R","domain":"a2a-protocol.org"}'
)
BAD = "Request payload validation error: "


def v1_error(id_: str, code: int, reason: str, message: str) -> bytes:
    """The expected v1.0 error reply; ``id_`` is the JSON text of the id."""
    error = f'{{"code":{code},"message":"{message}","data":[{INFO.replace("$R", reason)}]}}'
    return f'{{"jsonrpc":"2.0","id":{id_},"error":{error}}}'.encode()


def v0_3_error(id_: str, code: int, message: str) -> bytes:
    """The expected v0.3 error reply (no ``data``)."""
    return (
        f'{{"jsonrpc":"2.0","id":{id_},"error":{{"code":{code},"message":"{message}"}}}}'.encode()
    )


def parse(message: str = "Invalid JSON payload") -> bytes:
    return v1_error("null", -32700, "JSON_PARSE", message)


def invalid(id_: str, detail: str) -> bytes:
    return v1_error(id_, -32600, "INVALID_REQUEST", BAD + detail)


def invalid_v0_3(id_: str, detail: str) -> bytes:
    return v0_3_error(id_, -32600, BAD + detail)


JSONRPC = "'jsonrpc' must be exactly \\\"2.0\\\""
METHOD = "'method' must be a string"
ID = "'id' must be a string or an integer"
PARAMS = "'params' must be an object"
NOTIFICATION = "notifications (requests without 'id') are not supported"
BATCH = "batch requests are not supported"
NOT_OBJECT = "the request must be a JSON object"
UTF8 = "Invalid JSON payload: not valid UTF-8"
DEEP = "Invalid JSON payload: nesting too deep"

HEAD = b'{"jsonrpc":"2.0","method":"GetTask","id":1'  # an envelope, still open for members
DEEP_ARRAY = b"[" * 100_000

FAILURES = [
    # -32700: not JSON, not UTF-8, too deep
    pytest.param(b"", parse(), id="empty"),
    pytest.param(HEAD, parse(), id="truncated"),
    pytest.param(b"hello", parse(), id="garbage"),
    pytest.param(HEAD + b"}}", parse(), id="trailing"),
    pytest.param(b'{"id":true,"x":[1,}', parse(), id="bad-after-bad-member"),
    pytest.param(b"{'jsonrpc':'2.0'}", parse(), id="single-quotes"),
    pytest.param(b"\xef\xbb\xbf\xef\xbb\xbf" + HEAD + b"}", parse(), id="two-boms"),
    pytest.param(b'{"jsonrpc":"2.0","method":"\xff","id":1}', parse(UTF8), id="utf8-method"),
    pytest.param(HEAD + b',"params":{"id":"\xc3"}}', parse(UTF8), id="utf8-params"),
    pytest.param(HEAD + b',"x":"\xed\xa0\x80"}', parse(UTF8), id="utf8-surrogate"),
    pytest.param(DEEP_ARRAY, parse(DEEP), id="deep-array"),
    pytest.param(b'{"a":' * 100_000, parse(DEEP), id="deep-object"),
    pytest.param(HEAD + b',"params":' + DEEP_ARRAY, parse(DEEP), id="deep-params"),
    pytest.param(
        HEAD + b',"params":{"a":' + b"[" * 50_000 + b"]" * 50_000 + b"}}",
        parse(DEEP),
        id="deep-balanced",
    ),
    # -32600: batches and non-objects, id null
    pytest.param(b"[]", invalid("null", BATCH), id="batch-empty"),
    pytest.param(b"[" + HEAD + b"}]", invalid("null", BATCH), id="batch"),
    pytest.param(b"1", invalid("null", NOT_OBJECT), id="number"),
    pytest.param(b'"GetTask"', invalid("null", NOT_OBJECT), id="string"),
    pytest.param(b"null", invalid("null", NOT_OBJECT), id="null"),
    pytest.param(b" true ", invalid("null", NOT_OBJECT), id="true"),
    # -32600: envelope members, echoing a valid id
    pytest.param(b"{}", invalid("null", JSONRPC), id="empty-object"),
    pytest.param(b'{"foo":"bar","id":3}', invalid("3", JSONRPC), id="unknown-structure"),
    pytest.param(b'{"method":"GetTask","id":1}', invalid("1", JSONRPC), id="jsonrpc-missing"),
    pytest.param(
        b'{"jsonrpc":"1.0","method":"GetTask","id":"a"}', invalid('"a"', JSONRPC), id="jsonrpc-1.0"
    ),
    pytest.param(
        b'{"jsonrpc":2.0,"method":"GetTask","id":1}', invalid("1", JSONRPC), id="jsonrpc-number"
    ),
    pytest.param(
        b'{"jsonrpc":null,"method":"GetTask","id":1}', invalid("1", JSONRPC), id="jsonrpc-null"
    ),
    pytest.param(b'{"jsonrpc":"2.0","id":1}', invalid("1", METHOD), id="method-missing"),
    pytest.param(b'{"jsonrpc":"2.0","method":1,"id":1}', invalid("1", METHOD), id="method-number"),
    pytest.param(
        b'{"jsonrpc":"2.0","method":null,"id":"x"}', invalid('"x"', METHOD), id="method-null"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","method":["GetTask"],"id":1}', invalid("1", METHOD), id="method-array"
    ),
    # -32600: bad ids are not echoed (bool is not an integer here)
    pytest.param(
        b'{"jsonrpc":"2.0","method":"GetTask","id":true}', invalid("null", ID), id="id-true"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","method":"GetTask","id":false}', invalid("null", ID), id="id-false"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","method":"GetTask","id":1.5}', invalid("null", ID), id="id-float"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","method":"GetTask","id":null}', invalid("null", ID), id="id-null"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","method":"GetTask","id":-0.5}', invalid("null", ID), id="id-fraction"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","method":"GetTask","id":{}}', invalid("null", ID), id="id-object"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","method":"GetTask","id":[1]}', invalid("null", ID), id="id-array"
    ),
    pytest.param(
        b'{"jsonrpc":"1","method":"GetTask","id":[1]}', invalid("null", ID), id="id-first"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","method":"tasks/get","id":true}', invalid_v0_3("null", ID), id="id-v0.3"
    ),
    # -32600: params must be an object
    pytest.param(HEAD + b',"params":[1]}', invalid("1", PARAMS), id="params-array"),
    pytest.param(HEAD + b',"params":[]}', invalid("1", PARAMS), id="params-empty-array"),
    pytest.param(HEAD + b',"params":"{}"}', invalid("1", PARAMS), id="params-string"),
    pytest.param(HEAD + b',"params":0}', invalid("1", PARAMS), id="params-number"),
    pytest.param(HEAD + b',"params":false}', invalid("1", PARAMS), id="params-bool"),
    pytest.param(
        b'{"jsonrpc":"2.0","method":"GetTask","id":"z","params":[]}',
        invalid('"z"', PARAMS),
        id="params-array-str-id",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","method":"tasks/get","id":7,"params":[]}',
        invalid_v0_3("7", PARAMS),
        id="params-v0.3",
    ),
    pytest.param(
        b'{"jsonrpc":"3.0","method":"message/send","id":"q"}',
        invalid_v0_3('"q"', JSONRPC),
        id="jsonrpc-v0.3",
    ),
    # notifications are answered with -32600 and id null by default (spec-decisions F2)
    pytest.param(
        b'{"jsonrpc":"2.0","method":"GetTask","params":{"id":"t"}}',
        invalid("null", NOTIFICATION),
        id="notification",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","method":"tasks/get"}',
        invalid_v0_3("null", NOTIFICATION),
        id="notification-v0.3",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","method":"notify"}',
        invalid("null", NOTIFICATION),
        id="notification-unknown-method",
    ),
    # an invalid notification is still answered (the JSON-RPC 2.0 spec's own example)
    pytest.param(
        b'{"jsonrpc":"2.0","method":1,"params":"bar"}',
        invalid("null", METHOD),
        id="notification-bad-method",
    ),
]


@pytest.mark.parametrize(("body", "expected"), FAILURES)
def test_failures(body: bytes, expected: bytes) -> None:
    result = decode_request(body)
    assert isinstance(result, JsonRpcFailure)
    assert result.reply is True
    reply = result.encode()
    assert reply == expected
    # the reply is exactly what encode_error makes of the failure's parts
    assert reply == encode_error(result.id, result.error, result.dialect or "1.0")


def test_failure_default_dialect_applies_when_method_unknown() -> None:
    result = decode_request(b'{"jsonrpc":"2.0","method":"Nope","id":1,"params":[]}')
    assert isinstance(result, JsonRpcFailure)
    assert result.dialect is None
    assert result.encode("0.3") == invalid_v0_3("1", PARAMS)
    # a known method's dialect beats the default
    known = decode_request(HEAD + b',"params":[]}')
    assert isinstance(known, JsonRpcFailure)
    assert known.encode("0.3") == invalid("1", PARAMS)


SEND_V1 = b'{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}'
HUGE = 123456789012345678901234567890

SUCCESSES = [
    # body, id, method, params bytes
    pytest.param(
        b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t-1"}}',
        1,
        "GetTask",
        b'{"id":"t-1"}',
        id="v1-int-id",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":"req-1","method":"SendMessage","params":' + SEND_V1 + b"}",
        "req-1",
        "SendMessage",
        SEND_V1,
        id="v1-str-id",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":42,"method":"tasks/get","params":{"id":"t-1","historyLength":2}}',
        42,
        "tasks/get",
        b'{"id":"t-1","historyLength":2}',
        id="v0.3-int-id",
    ),
    pytest.param(
        b'{"method":"message/send","params":{"message":{"kind":"message"}},'
        b'"id":"abc","jsonrpc":"2.0"}',
        "abc",
        "message/send",
        b'{"message":{"kind":"message"}}',
        id="v0.3-str-id",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}',
        1,
        "GetExtendedAgentCard",
        b"{}",
        id="params-absent",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":1,"method":"agent/getAuthenticatedExtendedCard","params":null}',
        1,
        "agent/getAuthenticatedExtendedCard",
        b"{}",
        id="params-null",
    ),
    pytest.param(HEAD + b',"params":{}}', 1, "GetTask", b"{}", id="params-empty"),
    # RFC 8259 §8.1: one byte order mark may be ignored (spec-decisions A29).
    pytest.param(b"\xef\xbb\xbf" + HEAD + b"}", 1, "GetTask", b"{}", id="bom"),
    # An integral number with a fraction is an integer to JSON Schema (spec-decisions A27).
    pytest.param(
        b'{"jsonrpc":"2.0","id":1.0,"method":"GetTask"}', 1.0, "GetTask", b"{}", id="id-1.0"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":1e3,"method":"GetTask"}', 1e3, "GetTask", b"{}", id="id-1e3"
    ),
    pytest.param(b'{"jsonrpc":"2.0","id":0,"method":"GetTask"}', 0, "GetTask", b"{}", id="id-0"),
    pytest.param(
        b'{"jsonrpc":"2.0","id":-5,"method":"GetTask"}', -5, "GetTask", b"{}", id="id-neg"
    ),
    pytest.param(b'{"jsonrpc":"2.0","id":"","method":"GetTask"}', "", "GetTask", b"{}", id="id-''"),
    pytest.param(
        b'{"jsonrpc":"2.0","id":%d,"method":"GetTask"}' % HUGE, HUGE, "GetTask", b"{}", id="id-huge"
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":"ü-✓","method":"GetTask"}'.encode(),
        "ü-✓",
        "GetTask",
        b"{}",
        id="id-unicode",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{}}',
        1,
        "tasks/list",
        b"{}",
        id="unknown-method-is-a-later-step",
    ),
    pytest.param(HEAD + b',"extra":[1,{"a":2}]}', 1, "GetTask", b"{}", id="extra-members"),
    pytest.param(
        b' \n{ "jsonrpc" : "2.0" , "id" : 1 , "method" : "GetTask" ,'
        b' "params" : { "id" : "t" } }\r\n',
        1,
        "GetTask",
        b'{ "id" : "t" }',
        id="whitespace",
    ),
    pytest.param(
        HEAD + ',"params":{"id":"日本"}}'.encode(),
        1,
        "GetTask",
        '{"id":"日本"}'.encode(),
        id="non-ascii-params",
    ),
]


@pytest.mark.parametrize(("body", "id_", "method", "params"), SUCCESSES)
def test_successes(body: bytes, id_: Any, method: str, params: bytes) -> None:
    result = decode_request(body)
    assert isinstance(result, JsonRpcRequest)
    assert result.id == id_
    assert type(result.id) is type(id_)
    assert result.method == method
    assert bytes(result.params) == params
    assert result.is_notification is False
    # and the same id goes back out
    reply = json.loads(encode_result(result.id, None))
    assert reply == {"jsonrpc": "2.0", "id": id_, "result": None}


def test_buffer_inputs_are_accepted() -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}'
    for buf in (bytearray(body), memoryview(body)):
        result = decode_request(buf)
        assert isinstance(result, JsonRpcRequest)
        assert bytes(result.params) == b'{"id":"t"}'


def test_bytearray_mutation_does_not_change_params() -> None:
    buf = bytearray(b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}')
    result = decode_request(buf)
    buf[:] = b" " * len(buf)
    assert isinstance(result, JsonRpcRequest)
    assert bytes(result.params) == b'{"id":"t"}'


NOTIFICATION_BODY = b'{"jsonrpc":"2.0","method":"SendMessage","params":{"message":{}}}'


def test_notification_policy_ignore() -> None:
    result = decode_request(NOTIFICATION_BODY, notifications="ignore")
    assert isinstance(result, JsonRpcFailure)
    assert result.reply is False
    assert result.error.code == -32600
    assert result.id is None


def test_notification_policy_accept() -> None:
    result = decode_request(NOTIFICATION_BODY, notifications="accept")
    assert isinstance(result, JsonRpcRequest)
    assert result.is_notification is True
    assert result.id is None
    assert bytes(result.params) == b'{"message":{}}'


@pytest.mark.parametrize("policy", ["ignore", "accept"])
def test_invalid_notification_is_answered_under_every_policy(policy: NotificationPolicy) -> None:
    result = decode_request(
        b'{"jsonrpc":"2.0","method":"GetTask","params":[]}', notifications=policy
    )
    assert isinstance(result, JsonRpcFailure)
    assert result.reply is True
    assert result.error.code == -32600


def test_request_with_id_is_unaffected_by_policy() -> None:
    body = b'{"jsonrpc":"2.0","id":9,"method":"GetTask"}'
    policies: tuple[NotificationPolicy, ...] = ("reject", "ignore", "accept")
    for policy in policies:
        result = decode_request(body, notifications=policy)
        assert isinstance(result, JsonRpcRequest)
        assert (result.id, result.is_notification) == (9, False)


# ---------------------------------------------------------------------------------------
# Encoders


class _Result(msgspec.Struct, omit_defaults=True, rename="camel"):
    task_id: str
    note: str = ""


@pytest.mark.parametrize(
    ("id_", "result", "expected"),
    [
        (
            1,
            msgspec.Raw(b'{"task":{"id":"t"}}'),
            b'{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t"}}}',
        ),
        ("a", b'[{"id":"c"}]', b'{"jsonrpc":"2.0","id":"a","result":[{"id":"c"}]}'),
        (None, None, b'{"jsonrpc":"2.0","id":null,"result":null}'),
        (2, {}, b'{"jsonrpc":"2.0","id":2,"result":{}}'),
        (3, _Result("t-1"), b'{"jsonrpc":"2.0","id":3,"result":{"taskId":"t-1"}}'),
        (4, memoryview(b'"x"'), b'{"jsonrpc":"2.0","id":4,"result":"x"}'),
        (-7, [1, "two"], b'{"jsonrpc":"2.0","id":-7,"result":[1,"two"]}'),
    ],
)
def test_encode_result(id_: Any, result: object, expected: bytes) -> None:
    assert encode_result(id_, result) == expected


def test_encode_error_dialects() -> None:
    err = TaskNotFoundError(data={"taskId": "t"}, metadata={"taskId": "t"})
    assert encode_error("r", err, "0.3") == (
        b'{"jsonrpc":"2.0","id":"r","error":{"code":-32001,"message":"Task not found",'
        b'"data":{"taskId":"t"}}}'
    )
    assert encode_error("r", err, "1.0") == (
        b'{"jsonrpc":"2.0","id":"r","error":{"code":-32001,"message":"Task not found",'
        b'"data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND",'
        b'"domain":"a2a-protocol.org","metadata":{"taskId":"t"}}]}}'
    )
    assert encode_error(None, MethodNotFoundError(), "0.3") == (
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found"}}'
    )


def test_encode_error_drops_unencodable_data() -> None:
    err = InvalidParamsError(data={"bad": object()})
    assert encode_error(1, err, "0.3") == (
        b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid parameters"}}'
    )


# ---------------------------------------------------------------------------------------
# Properties: garbage in gives a well-formed reply, never an exception

ENVELOPE_CODES = {-32700, -32600}


def _check(result: JsonRpcRequest | JsonRpcFailure) -> None:
    if isinstance(result, JsonRpcRequest):
        assert isinstance(result.method, str)
        assert bytes(result.params)[:1] == b"{"
        assert result.id is None or type(result.id) in (str, int)
        return
    assert isinstance(result, JsonRpcFailure)
    dialects: tuple[Dialect, ...] = ("1.0", "0.3")
    for dialect in dialects:
        reply = json.loads(result.encode(dialect))
        assert set(reply) == {"jsonrpc", "id", "error"}
        assert reply["jsonrpc"] == "2.0"
        assert reply["id"] == result.id
        code = reply["error"]["code"]
        assert code in ENVELOPE_CODES
        assert error_class_for_code(code) is type(result.error)
        assert isinstance(reply["error"]["message"], str)


@given(st.binary())
def test_any_bytes(body: bytes) -> None:
    _check(decode_request(body))


_text = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=8)
_scalars = st.none() | st.booleans() | st.integers() | _text
json_values = st.recursive(
    _scalars | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_text, children, max_size=4),
    max_leaves=20,
)


@given(json_values, st.booleans())
def test_any_json(value: object, ascii_only: bool) -> None:
    _check(decode_request(json.dumps(value, ensure_ascii=ascii_only).encode()))


_MISSING = object()
envelopes = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", "2", 2.0, None]) | json_values,
        "method": st.sampled_from([*V1_METHODS, *V0_3_METHODS, "x"]) | json_values,
        "id": st.integers() | _text | st.none() | json_values,
        "params": st.dictionaries(_text, json_values, max_size=3) | json_values,
    },
)


def _oracle(doc: dict[str, Any]) -> tuple[str, object]:
    """What decode_request must say about ``doc``: ("request", id) or (code, reply id)."""
    id_ = doc.get("id", _MISSING)
    # null is refused; a float is an id when it is integral (1.0: an integer to JSON Schema).
    valid_id = (
        id_ is _MISSING or type(id_) in (str, int) or (type(id_) is float and id_.is_integer())
    )
    echo = id_ if valid_id and id_ is not _MISSING else None
    if not valid_id:
        return ("-32600", None)
    if doc.get("jsonrpc") != "2.0" or type(doc.get("jsonrpc")) is not str:
        return ("-32600", echo)
    if not isinstance(doc.get("method"), str):
        return ("-32600", echo)
    if doc.get("params") is not None and not isinstance(doc["params"], dict):
        return ("-32600", echo)
    if id_ is _MISSING:
        return ("-32600", None)
    return ("request", id_)


@given(envelopes)
def test_envelopes_match_the_rules(doc: dict[str, Any]) -> None:
    result = decode_request(json.dumps(doc).encode())
    _check(result)
    kind, id_ = _oracle(doc)
    if kind == "request":
        assert isinstance(result, JsonRpcRequest)
        assert result.id == id_
        assert result.method == doc["method"]
        assert json.loads(bytes(result.params)) == (doc.get("params") or {})
    else:
        assert isinstance(result, JsonRpcFailure)
        assert str(result.error.code) == kind
        assert result.id == id_


# ---------------------------------------------------------------------------------------
# Purity: L1 modules import no I/O, async or logging machinery

ALLOWED_IMPORTS = {"__future__", "collections", "enum", "types", "typing", "msgspec", "a2a_core"}


@pytest.mark.parametrize("module", [errors, jsonrpc])
def test_l1_purity(module: Any) -> None:
    tree = ast.parse(Path(module.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported, "the module imports something"
    assert imported <= ALLOWED_IMPORTS
