"""The REST binding (a2a_core.rest): routes, query and body decoding, encodings, content types.

Golden tables feed request lines and bodies and check the v1.0 request (or the error) that
comes out, and feed v1.0 results and check the bytes; the spec's REST examples are among the
cases. The v0.3 (``/v1/...``) payloads have their own file, test_v0_3_rest.py; here the v0.3
routes appear only in the route table. A hypothesis property feeds garbage everywhere.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import enum
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import msgspec
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from a2a_core import codec, rest
from a2a_core import types as t
from a2a_core.errors import (
    ContentTypeNotSupportedError,
    InvalidParamsError,
    JSONParseError,
    LocalProtocolError,
    TaskNotFoundError,
)
from a2a_core.jsonrpc import Operation
from a2a_core.testing import json_values, strategy_for
from helpers.schema_v1 import validator_for

EXAMPLES = json.loads((Path(__file__).parent / "data" / "v1_0_spec_examples.json").read_text())

MESSAGE = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
SEND_BODY = json.dumps({"message": MESSAGE}).encode()


def _match(method: str, path: str) -> rest.RouteMatch:
    match = rest.match_route(method, path)
    assert isinstance(match, rest.RouteMatch), match
    return match


def _decode(method: str, path: str, query: str = "", body: bytes = b"") -> Any:
    return rest.decode_rest_request(
        _match(method, path), parse_qsl(query, keep_blank_values=True), body
    )


# --- the route table -------------------------------------------------------------------------

# (method, path, operation, streaming, path parameters) of every v1.0 route, without tenant.
V1_ROUTES: list[tuple[str, str, Operation, bool, dict[str, str]]] = [
    ("POST", "/message:send", Operation.SEND_MESSAGE, False, {}),
    ("POST", "/message:stream", Operation.SEND_STREAMING_MESSAGE, True, {}),
    ("GET", "/tasks/t-1", Operation.GET_TASK, False, {"id": "t-1"}),
    ("GET", "/tasks", Operation.LIST_TASKS, False, {}),
    ("POST", "/tasks/t-1:cancel", Operation.CANCEL_TASK, False, {"id": "t-1"}),
    ("GET", "/tasks/t-1:subscribe", Operation.SUBSCRIBE_TO_TASK, True, {"id": "t-1"}),
    ("POST", "/tasks/t-1:subscribe", Operation.SUBSCRIBE_TO_TASK, True, {"id": "t-1"}),
    (
        "POST",
        "/tasks/t-1/pushNotificationConfigs",
        Operation.CREATE_PUSH_CONFIG,
        False,
        {"task_id": "t-1"},
    ),
    (
        "GET",
        "/tasks/t-1/pushNotificationConfigs/c-1",
        Operation.GET_PUSH_CONFIG,
        False,
        {"task_id": "t-1", "id": "c-1"},
    ),
    (
        "GET",
        "/tasks/t-1/pushNotificationConfigs",
        Operation.LIST_PUSH_CONFIGS,
        False,
        {"task_id": "t-1"},
    ),
    (
        "DELETE",
        "/tasks/t-1/pushNotificationConfigs/c-1",
        Operation.DELETE_PUSH_CONFIG,
        False,
        {"task_id": "t-1", "id": "c-1"},
    ),
    ("GET", "/extendedAgentCard", Operation.GET_EXTENDED_CARD, False, {}),
]

V0_3_ROUTES: list[tuple[str, str, Operation, bool, dict[str, str]]] = [
    ("POST", "/v1/message:send", Operation.SEND_MESSAGE, False, {}),
    ("POST", "/v1/message:stream", Operation.SEND_STREAMING_MESSAGE, True, {}),
    ("GET", "/v1/tasks/t-1", Operation.GET_TASK, False, {"id": "t-1"}),
    ("POST", "/v1/tasks/t-1:cancel", Operation.CANCEL_TASK, False, {"id": "t-1"}),
    ("GET", "/v1/tasks/t-1:subscribe", Operation.SUBSCRIBE_TO_TASK, True, {"id": "t-1"}),
    ("POST", "/v1/tasks/t-1:subscribe", Operation.SUBSCRIBE_TO_TASK, True, {"id": "t-1"}),
    (
        "POST",
        "/v1/tasks/t-1/pushNotificationConfigs",
        Operation.CREATE_PUSH_CONFIG,
        False,
        {"task_id": "t-1"},
    ),
    (
        "GET",
        "/v1/tasks/t-1/pushNotificationConfigs/c-1",
        Operation.GET_PUSH_CONFIG,
        False,
        {"task_id": "t-1", "id": "c-1"},
    ),
    (
        "GET",
        "/v1/tasks/t-1/pushNotificationConfigs",
        Operation.LIST_PUSH_CONFIGS,
        False,
        {"task_id": "t-1"},
    ),
    (
        "DELETE",
        "/v1/tasks/t-1/pushNotificationConfigs/c-1",
        Operation.DELETE_PUSH_CONFIG,
        False,
        {"task_id": "t-1", "id": "c-1"},
    ),
    ("GET", "/v1/card", Operation.GET_EXTENDED_CARD, False, {}),
]

ROUTE_CASES = (
    [(m, p, op, "1.0", s, params) for m, p, op, s, params in V1_ROUTES]
    + [(m, "/acme" + p, op, "1.0", s, {"tenant": "acme", **ps}) for m, p, op, s, ps in V1_ROUTES]
    + [(m, p, op, "0.3", s, params) for m, p, op, s, params in V0_3_ROUTES]
)


@pytest.mark.parametrize(
    ("method", "path", "operation", "dialect", "streaming", "params"),
    ROUTE_CASES,
    ids=[f"{c[0]} {c[1]}" for c in ROUTE_CASES],
)
def test_every_route_matches(
    method: str,
    path: str,
    operation: Operation,
    dialect: str,
    streaming: bool,
    params: dict[str, str],
) -> None:
    match = _match(method, path)
    assert match.operation is operation
    assert match.dialect == dialect
    assert match.streaming is streaming
    assert match.params == params
    assert match.tenant == params.get("tenant", "")


def test_route_table_is_exactly_the_spec_table() -> None:
    served = {(r.method, r.template, r.dialect) for r in rest.ROUTES}
    assert len(rest.ROUTES) == len(served) == 12 + 12 + 11
    assert {r.operation for r in rest.ROUTES if r.dialect == "0.3"} == set(Operation) - {
        Operation.LIST_TASKS
    }
    # every route is reached by one of the cases above
    reached = {
        (_match(m, p).route.method, _match(m, p).route.template, d)
        for m, p, _, d, _, _ in ROUTE_CASES
    }
    assert reached == served


@pytest.mark.parametrize(
    ("path", "operation", "params"),
    [
        # percent-decoded after splitting: any character but "/" in an id
        ("/tasks/a%20b%2Bc%25", Operation.GET_TASK, {"id": "a b+c%"}),
        ("/tasks/%C3%A9t%C3%A9", Operation.GET_TASK, {"id": "été"}),
        ("/tasks/a+b", Operation.GET_TASK, {"id": "a+b"}),
        ("/te%20nant/tasks/x", Operation.GET_TASK, {"tenant": "te nant", "id": "x"}),
        ("/%61cme/extendedAgentCard", Operation.GET_EXTENDED_CARD, {"tenant": "acme"}),
        # literals compare decoded
        ("/t%61sks/x", Operation.GET_TASK, {"id": "x"}),
        # colons: an unknown verb is part of the id; an escaped colon hides a known verb
        ("/tasks/a:b", Operation.GET_TASK, {"id": "a:b"}),
        ("/tasks/x%3Acancel", Operation.GET_TASK, {"id": "x:cancel"}),
        (
            "/tasks/t/pushNotificationConfigs/c:cancel",
            Operation.GET_PUSH_CONFIG,
            {"task_id": "t", "id": "c:cancel"},
        ),
        ("/v1/tasks/%E2%9C%93", Operation.GET_TASK, {"id": "✓"}),
    ],
)
def test_path_parameters_are_percent_decoded(
    path: str, operation: Operation, params: dict[str, str]
) -> None:
    match = _match("GET", path)
    assert match.operation is operation
    assert match.params == params


@pytest.mark.parametrize(
    ("method", "path", "operation", "params"),
    [
        # the verb is split off the raw last segment at its last colon
        ("POST", "/tasks/a:b:cancel", Operation.CANCEL_TASK, {"id": "a:b"}),
        ("POST", "/tasks/x%3Acancel:cancel", Operation.CANCEL_TASK, {"id": "x:cancel"}),
        ("POST", "/v1/tasks/a:b:subscribe", Operation.SUBSCRIBE_TO_TASK, {"id": "a:b"}),
        # a verb in a tenant is just a character
        ("GET", "/x:cancel/tasks", Operation.LIST_TASKS, {"tenant": "x:cancel"}),
        # methods are compared upper-cased
        ("get", "/tasks/x", Operation.GET_TASK, {"id": "x"}),
    ],
)
def test_custom_verbs_and_method_case(
    method: str, path: str, operation: Operation, params: dict[str, str]
) -> None:
    match = _match(method, path)
    assert (match.operation, match.params) == (operation, params)


@pytest.mark.parametrize(
    ("path", "operation", "dialect", "params"),
    [
        # /v1/ is v0.3, never tenant "v1" of a v1.0 route
        ("/v1/tasks/x", Operation.GET_TASK, "0.3", {"id": "x"}),
        (
            "/v1/tasks/x/pushNotificationConfigs",
            Operation.LIST_PUSH_CONFIGS,
            "0.3",
            {"task_id": "x"},
        ),
        ("/v1/card", Operation.GET_EXTENDED_CARD, "0.3", {}),
        # the prefix compares decoded, and case-sensitively
        ("/%76%31/tasks/x", Operation.GET_TASK, "0.3", {"id": "x"}),
        ("/V1/tasks/x", Operation.GET_TASK, "1.0", {"tenant": "V1", "id": "x"}),
        ("/v2/tasks/x", Operation.GET_TASK, "1.0", {"tenant": "v2", "id": "x"}),
        # routes without a tenant win over tenant-prefixed ones
        ("/tasks/tasks", Operation.GET_TASK, "1.0", {"id": "tasks"}),
        (
            "/tasks/tasks/pushNotificationConfigs",
            Operation.LIST_PUSH_CONFIGS,
            "1.0",
            {"task_id": "tasks"},
        ),
        ("/extendedAgentCard/tasks", Operation.LIST_TASKS, "1.0", {"tenant": "extendedAgentCard"}),
    ],
)
def test_precedence(path: str, operation: Operation, dialect: str, params: dict[str, str]) -> None:
    match = _match("GET", path)
    assert (match.operation, match.dialect, match.params) == (operation, dialect, params)


def test_v1_prefix_is_a_tenant_when_v0_3_is_not_served() -> None:
    served = rest.match_route("GET", "/v1/tasks")
    assert served == rest.RouteMiss(404)  # v0.3 has no list route, and v1 is not a tenant
    unserved = rest.match_route("GET", "/v1/tasks", v0_3=False)
    assert isinstance(unserved, rest.RouteMatch)
    assert (unserved.operation, unserved.dialect, unserved.tenant) == (
        Operation.LIST_TASKS,
        "1.0",
        "v1",
    )
    get = rest.match_route("GET", "/v1/tasks/x", v0_3=False)
    assert isinstance(get, rest.RouteMatch)
    assert (get.dialect, get.params) == ("1.0", {"tenant": "v1", "id": "x"})
    assert rest.match_route("GET", "/v1/card", v0_3=False) == rest.RouteMiss(404)


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("GET", "/nope", rest.RouteMiss(404)),
        ("GET", "/", rest.RouteMiss(404)),
        ("GET", "", rest.RouteMiss(404)),
        ("GET", "tasks", rest.RouteMiss(404)),
        ("GET", "/tasks/", rest.RouteMiss(404)),  # no trailing-slash folding; no empty id
        ("GET", "//tasks", rest.RouteMiss(404)),
        ("GET", "/tasks/a%2Fb", rest.RouteMiss(404)),  # "/" is the one character ids lack
        ("GET", "/tasks/%FF", rest.RouteMiss(404)),  # not UTF-8
        # no id before the verb: not a cancel, so ":cancel" is the id of a GetTask
        ("POST", "/tasks/:cancel", rest.RouteMiss(405, ("GET",))),
        ("GET", "/TASKS/x", rest.RouteMiss(404)),
        ("GET", "/a/b/tasks", rest.RouteMiss(404)),
        ("GET", "/v1/tasks", rest.RouteMiss(404)),
        ("GET", "/v1/extendedAgentCard", rest.RouteMiss(404)),
        ("GET", "/v1/acme/tasks/x", rest.RouteMiss(404)),  # v0.3 has no tenants
        ("GET", "/acme/card", rest.RouteMiss(404)),
        ("PUT", "/tasks/x", rest.RouteMiss(405, ("GET",))),
        ("HEAD", "/tasks", rest.RouteMiss(405, ("GET",))),
        ("GET", "/message:send", rest.RouteMiss(405, ("POST",))),
        ("GET", "/acme/message:stream", rest.RouteMiss(405, ("POST",))),
        ("DELETE", "/tasks/x:subscribe", rest.RouteMiss(405, ("GET", "POST"))),
        ("GET", "/tasks/x:cancel", rest.RouteMiss(405, ("POST",))),  # the verb route wins
        ("PATCH", "/tasks/x/pushNotificationConfigs", rest.RouteMiss(405, ("GET", "POST"))),
        ("POST", "/tasks/x/pushNotificationConfigs/c", rest.RouteMiss(405, ("GET", "DELETE"))),
        ("POST", "/acme/extendedAgentCard", rest.RouteMiss(405, ("GET",))),
        ("POST", "/v1/card", rest.RouteMiss(405, ("GET",))),
        ("DELETE", "/v1/tasks/x:cancel", rest.RouteMiss(405, ("POST",))),
        # /tasks/tasks is GetTask and ListTasks-of-tenant-"tasks" at once: both allow GET
        ("POST", "/tasks/tasks", rest.RouteMiss(405, ("GET",))),
    ],
)
def test_misses_say_404_or_405_with_allow(method: str, path: str, expected: rest.RouteMiss) -> None:
    assert rest.match_route(method, path) == expected


def test_route_miss_responses() -> None:
    not_found = rest.rest_route_miss_response(rest.RouteMiss(404))
    assert not_found.status == 404
    assert not_found.header("content-type") == "application/json"
    assert not_found.header("allow") is None
    error = json.loads(not_found.body)["error"]
    assert (error["code"], error["status"]) == (404, "NOT_FOUND")
    assert error["details"][0]["reason"] == "METHOD_NOT_FOUND"

    not_allowed = rest.rest_route_miss_response(
        rest.RouteMiss(405, ("GET", "POST")), rest.A2A_JSON_CONTENT_TYPE
    )
    assert not_allowed.status == 405
    assert not_allowed.header("allow") == "GET, POST"
    assert not_allowed.header("content-type") == "application/a2a+json"
    error = json.loads(not_allowed.body)["error"]
    assert (error["code"], error["status"]) == (405, "UNIMPLEMENTED")
    assert "GET, POST" in error["message"]


# --- query parameters ------------------------------------------------------------------------


class Color(enum.Enum):
    UNSPECIFIED = "COLOR_UNSPECIFIED"
    RED = "COLOR_RED"
    GREEN = "COLOR_GREEN"


FIELDS = [
    rest.QueryField("label", rest.QueryKind.STRING),
    rest.QueryField("pageSize", rest.QueryKind.INT),
    rest.QueryField("includeArtifacts", rest.QueryKind.BOOL),
    rest.QueryField("color", rest.QueryKind.ENUM, enum=Color),
    rest.QueryField("after", rest.QueryKind.TIMESTAMP),
    rest.QueryField("tags", rest.QueryKind.STRING, repeated=True),
    rest.QueryField("sizes", rest.QueryKind.INT, repeated=True),
]
UTC = dt.UTC


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("label=a%20b%2Cc", {"label": "a b,c"}),  # a scalar string keeps its commas
        ("pageSize=10", {"pageSize": 10}),
        ("page_size=-3", {"pageSize": -3}),  # snake_case; ranges are the model's business
        ("pageSize=%2B7", {"pageSize": 7}),
        ("includeArtifacts=true", {"includeArtifacts": True}),
        ("include_artifacts=FALSE", {"includeArtifacts": False}),
        ("color=COLOR_RED", {"color": "COLOR_RED"}),
        ("color=color_green", {"color": "COLOR_GREEN"}),
        ("color=1", {"color": "COLOR_RED"}),
        ("color=0", {"color": "COLOR_UNSPECIFIED"}),
        ("after=2025-01-02T03:04:05Z", {"after": dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)}),
        (
            "after=2025-01-02T03:04:05%2B02:00",
            {"after": dt.datetime(2025, 1, 2, 1, 4, 5, tzinfo=UTC)},
        ),
        # an unencoded "+" arrives as a space: the offset is restored
        (
            "after=2025-01-02T03:04:05+02:00",
            {"after": dt.datetime(2025, 1, 2, 1, 4, 5, tzinfo=UTC)},
        ),
        (
            "after=2025-01-02T03:04:05.5-05:30",
            {"after": dt.datetime(2025, 1, 2, 8, 34, 5, 500000, tzinfo=UTC)},
        ),
        (
            "after=2025-01-02T03:04:05.123456789Z",
            {"after": dt.datetime(2025, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)},
        ),
        ("after=2025-01-02T03:04:05", {"after": dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)}),
        # repeated fields: repeated parameters and comma lists, concatenated in order
        ("tags=a,b&tags=c", {"tags": ["a", "b", "c"]}),
        ("tags=a,,b,", {"tags": ["a", "b"]}),
        ("sizes=1,2&sizes=3", {"sizes": [1, 2, 3]}),
        # empty values are "not given"; unknown names are ignored
        ("pageSize=&label=&tags=", {}),
        ("A2A-Version=1.0&other=1&configuration.x=1", {}),
        ("", {}),
    ],
)
def test_query_values(query: str, expected: dict[str, Any]) -> None:
    assert rest.parse_query(parse_qsl(query, keep_blank_values=True), FIELDS) == expected


@pytest.mark.parametrize(
    ("query", "name", "why"),
    [
        ("pageSize=ten", "pageSize", "must be an integer"),
        ("pageSize=1.5", "pageSize", "must be an integer"),
        ("pageSize=1_000", "pageSize", "must be an integer"),
        ("pageSize=%201", "pageSize", "must be an integer"),
        ("page_size=99999999999999999999999", "page_size", "must be an integer"),
        ("sizes=1,x", "sizes", "must be an integer"),
        ("includeArtifacts=yes", "includeArtifacts", "must be true or false"),
        ("includeArtifacts=1", "includeArtifacts", "must be true or false"),
        ("color=PURPLE", "color", "is not a known enum value"),
        ("color=3", "color", "is not a known enum value"),
        ("color=-1", "color", "is not a known enum value"),
        ("after=yesterday", "after", "must be an ISO 8601 timestamp"),
        ("after=2025-13-01T00:00:00Z", "after", "must be an ISO 8601 timestamp"),
        # out of datetime's range once moved to UTC
        ("after=0001-01-01T00:00:00%2B01:00", "after", "must be an ISO 8601 timestamp"),
        ("pageSize=1&pageSize=2", "pageSize", "is given more than once"),
        ("pageSize=1&page_size=1", "page_size", "is given more than once"),
        ("color.name=x", "color.name", "is nested: query parameters cannot set objects"),
        ("tags[0]=x", "tags[0]", "is nested: query parameters cannot set objects"),
    ],
)
def test_bad_query_values_name_the_parameter(query: str, name: str, why: str) -> None:
    with pytest.raises(InvalidParamsError) as info:
        rest.parse_query(parse_qsl(query, keep_blank_values=True), FIELDS)
    assert info.value.message == f"Invalid parameters: query parameter '{name}' {why}"
    assert info.value.field_violations[0].field == name


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", t.ListTasksRequest()),
        (
            "contextId=c1&status=TASK_STATE_WORKING&pageSize=10&pageToken=tok&historyLength=0"
            "&statusTimestampAfter=2025-01-01T00:00:00Z&includeArtifacts=true",
            t.ListTasksRequest(
                context_id="c1",
                status=t.TaskState.WORKING,
                page_size=10,
                page_token="tok",
                history_length=0,
                status_timestamp_after=dt.datetime(2025, 1, 1, tzinfo=UTC),
                include_artifacts=True,
            ),
        ),
        (
            "context_id=c1&status=5&page_size=1&history_length=3&include_artifacts=false",
            t.ListTasksRequest(
                context_id="c1",
                status=t.TaskState.CANCELED,
                page_size=1,
                history_length=3,
                include_artifacts=False,
            ),
        ),
        (
            "statusTimestampAfter=2025-06-01T12:00:00+02:00",
            t.ListTasksRequest(status_timestamp_after=dt.datetime(2025, 6, 1, 10, tzinfo=UTC)),
        ),
    ],
)
def test_list_tasks_query(query: str, expected: t.ListTasksRequest) -> None:
    assert _decode("GET", "/tasks", query) == expected
    tenant = _decode("GET", "/acme/tasks", query)
    assert tenant == msgspec.structs.replace(expected, tenant="acme")


@pytest.mark.parametrize(
    ("query", "param", "message"),
    [
        ("pageSize=0", "pageSize", "Expected `int` >= 1 - at `$.pageSize`"),
        ("pageSize=101", "pageSize", "Expected `int` <= 100 - at `$.pageSize`"),
        ("historyLength=-1", "historyLength", "Expected `int` >= 0 - at `$.historyLength`"),
        (
            "history_length=2147483648",
            "historyLength",
            "Expected `int` <= 2147483647 - at `$.historyLength`",
        ),
        (
            "status=TASK_STATE_CANCELLED",
            "status",
            "query parameter 'status' is not a known enum value",
        ),
        (
            "includeArtifacts=0",
            "includeArtifacts",
            "query parameter 'includeArtifacts' must be true or false",
        ),
        (
            "statusTimestampAfter=now",
            "statusTimestampAfter",
            "query parameter 'statusTimestampAfter' must be an ISO 8601 timestamp",
        ),
    ],
)
def test_list_tasks_bad_query(query: str, param: str, message: str) -> None:
    with pytest.raises(InvalidParamsError) as info:
        _decode("GET", "/tasks", query)
    assert info.value.message == "Invalid parameters: " + message
    assert [v.field for v in info.value.field_violations] == [param]


# The spec's REST query examples (v1.0 §3.1.4, §6.5, §11.3), with what they decode to.
SPEC_QUERIES: list[tuple[str, Any]] = [
    (
        "/tasks?contextId=c295ea44-7543-4f78-b524-7a38915ad6e4&pageSize=10&historyLength=3",
        t.ListTasksRequest(
            context_id="c295ea44-7543-4f78-b524-7a38915ad6e4", page_size=10, history_length=3
        ),
    ),
    (
        "/tasks?status=TASK_STATE_WORKING&pageSize=20",
        t.ListTasksRequest(status=t.TaskState.WORKING, page_size=20),
    ),
    (
        "/tasks?contextId=c295ea44-7543-4f78-b524-7a38915ad6e4&pageSize=10&pageToken=base64-encoded-cursor-token",
        t.ListTasksRequest(
            context_id="c295ea44-7543-4f78-b524-7a38915ad6e4",
            page_size=10,
            page_token="base64-encoded-cursor-token",
        ),
    ),
    (
        "/tasks?contextId=uuid&status=TASK_STATE_WORKING&pageSize=50&pageToken=cursor",
        t.ListTasksRequest(
            context_id="uuid", status=t.TaskState.WORKING, page_size=50, page_token="cursor"
        ),
    ),
    # the spec's own error example: every value is out of range or unknown
    ("/tasks?pageSize=150&historyLength=-5&status=TASK_STATE_RUNNING", InvalidParamsError),
    ("/tasks/task-123?A2A-Version=1.0", t.GetTaskRequest(id="task-123")),
    ("/tasks/task-123?historyLength=10", t.GetTaskRequest(id="task-123", history_length=10)),
]


@pytest.mark.parametrize(("target", "expected"), SPEC_QUERIES, ids=[q for q, _ in SPEC_QUERIES])
def test_spec_query_examples(target: str, expected: Any) -> None:
    url = urlsplit(target)
    if expected is InvalidParamsError:
        with pytest.raises(InvalidParamsError):
            _decode("GET", url.path, url.query)
        return
    assert _decode("GET", url.path, url.query) == expected


def test_get_task_query() -> None:
    assert _decode("GET", "/tasks/t1") == t.GetTaskRequest(id="t1")
    assert _decode("GET", "/acme/tasks/t1", "history_length=0") == t.GetTaskRequest(
        tenant="acme", id="t1", history_length=0
    )
    # only historyLength is read: ListTasks parameters on GetTask are ignored
    assert _decode("GET", "/tasks/t1", "pageSize=abc") == t.GetTaskRequest(id="t1")
    with pytest.raises(InvalidParamsError, match="historyLength"):
        _decode("GET", "/tasks/t1", "historyLength=-2")


def test_list_push_configs_query() -> None:
    assert _decode("GET", "/tasks/t1/pushNotificationConfigs") == (
        t.ListTaskPushNotificationConfigsRequest(task_id="t1")
    )
    assert _decode(
        "GET", "/acme/tasks/t1/pushNotificationConfigs", "pageSize=5&page_token=p"
    ) == t.ListTaskPushNotificationConfigsRequest(
        tenant="acme", task_id="t1", page_size=5, page_token="p"
    )
    with pytest.raises(InvalidParamsError, match="'pageSize' must be an integer"):
        _decode("GET", "/tasks/t1/pushNotificationConfigs", "pageSize=many")


# --- bodies ----------------------------------------------------------------------------------

SEND_EXAMPLES = [e for e in EXAMPLES if e["type"] == "SendMessageRequest" and e.get("http")]


def test_spec_send_examples_are_found() -> None:
    assert len(SEND_EXAMPLES) >= 9
    assert {e["http"].split(" ")[1] for e in SEND_EXAMPLES} == {"/message:send", "/message:stream"}


@pytest.mark.parametrize("example", SEND_EXAMPLES, ids=lambda e: e["source"][22:60])
def test_spec_send_examples_decode(example: dict[str, Any]) -> None:
    method, path = example["http"].split(" ")[:2]
    body = json.dumps(example["json"]).encode()
    try:
        expected = codec.decode(body, t.SendMessageRequest)
    except codec.DecodeError as exc:  # the spec's examples that omit a REQUIRED field
        message = "Invalid parameters: " + exc.message
        with pytest.raises(InvalidParamsError, match=re.escape(message)):
            _decode(method, path, body=body)
        return
    assert _decode(method, path, body=body) == expected
    # the tenant-prefixed route gives the same request, with the tenant
    tenant = _decode(method, "/acme" + path, body=body)
    assert tenant == msgspec.structs.replace(expected, tenant="acme")


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    [
        # SendMessage: the tenant of the path, repeated in the body or not
        (
            "POST",
            "/acme/message:send",
            {"tenant": "acme", "message": MESSAGE},
            t.SendMessageRequest(tenant="acme", message=codec.convert(MESSAGE, t.Message)),
        ),
        # a route without a tenant takes the body's
        (
            "POST",
            "/message:stream",
            {"tenant": "other", "message": MESSAGE},
            t.SendMessageRequest(tenant="other", message=codec.convert(MESSAGE, t.Message)),
        ),
        # snake_case and integer enums, as ProtoJSON parsers accept
        (
            "POST",
            "/message:send",
            {
                "message": {"message_id": "m1", "role": 1, "parts": [{"text": "hi"}]},
                "configuration": {"return_immediately": True, "history_length": 2},
            },
            t.SendMessageRequest(
                message=codec.convert(MESSAGE, t.Message),
                configuration=t.SendMessageConfiguration(return_immediately=True, history_length=2),
            ),
        ),
        # CancelTask: the body may be empty, `{}`, carry metadata, or repeat the id
        ("POST", "/tasks/t1:cancel", None, t.CancelTaskRequest(id="t1")),
        ("POST", "/tasks/t1:cancel", {}, t.CancelTaskRequest(id="t1")),
        (
            "POST",
            "/acme/tasks/t1:cancel",
            {"id": "t1", "tenant": "acme", "metadata": {"why": "done"}},
            t.CancelTaskRequest(tenant="acme", id="t1", metadata={"why": "done"}),
        ),
        # SubscribeToTask: POST with an empty or repeating body; GET ignores any body
        ("POST", "/tasks/t1:subscribe", None, t.SubscribeToTaskRequest(id="t1")),
        (
            "POST",
            "/acme/tasks/t1:subscribe",
            {"id": "t1"},
            t.SubscribeToTaskRequest(tenant="acme", id="t1"),
        ),
        ("GET", "/tasks/t1:subscribe", b"not json", t.SubscribeToTaskRequest(id="t1")),
        # CreateTaskPushNotificationConfig: the flat config, task id from the path
        (
            "POST",
            "/tasks/t1/pushNotificationConfigs",
            {
                "url": "https://hook",
                "token": "tok",
                "authentication": {"scheme": "Bearer", "credentials": "x"},
            },
            t.TaskPushNotificationConfig(
                task_id="t1",
                url="https://hook",
                token="tok",
                authentication=t.AuthenticationInfo(scheme="Bearer", credentials="x"),
            ),
        ),
        (
            "POST",
            "/acme/tasks/t1/pushNotificationConfigs",
            {"id": "c1", "task_id": "t1", "url": "https://hook"},
            t.TaskPushNotificationConfig(tenant="acme", id="c1", task_id="t1", url="https://hook"),
        ),
        # the rest take no body: anything sent is ignored
        ("GET", "/tasks/t1", b"{", t.GetTaskRequest(id="t1")),
        (
            "GET",
            "/acme/tasks/t1/pushNotificationConfigs/c1",
            None,
            t.GetTaskPushNotificationConfigRequest(tenant="acme", task_id="t1", id="c1"),
        ),
        (
            "DELETE",
            "/tasks/t1/pushNotificationConfigs/c1",
            b"[]",
            t.DeleteTaskPushNotificationConfigRequest(task_id="t1", id="c1"),
        ),
        ("GET", "/extendedAgentCard", None, t.GetExtendedAgentCardRequest()),
        ("GET", "/acme/extendedAgentCard", None, t.GetExtendedAgentCardRequest(tenant="acme")),
    ],
)
def test_bodies(method: str, path: str, body: Any, expected: Any) -> None:
    raw = body if isinstance(body, bytes) else b"" if body is None else json.dumps(body).encode()
    assert _decode(method, path, body=raw) == expected


@pytest.mark.parametrize(
    ("method", "path", "body", "error", "message", "field"),
    [
        (
            "POST",
            "/message:send",
            b"{",
            JSONParseError,
            "Invalid JSON payload: Input data was truncated",
            None,
        ),
        (
            "POST",
            "/message:send",
            b"\xff",
            JSONParseError,
            "Invalid JSON payload: JSON is malformed: invalid character (byte 0)",
            None,
        ),
        (
            "POST",
            "/tasks/t1:subscribe",
            b"nope",
            JSONParseError,
            "Invalid JSON payload: JSON is malformed: invalid character (byte 4)",
            None,
        ),
        (
            "POST",
            "/message:send",
            b"",
            InvalidParamsError,
            "Invalid parameters: Object missing required field `message`",
            None,
        ),
        (
            "POST",
            "/message:send",
            b"[]",
            InvalidParamsError,
            "Invalid parameters: Expected `object`, got `array`",
            None,
        ),
        (
            "POST",
            "/message:send",
            b'{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}',
            InvalidParamsError,
            "Invalid parameters: Expected `array` of length >= 1 - at `$.message.parts`",
            "message.parts",
        ),
        (
            "POST",
            "/acme/message:send",
            json.dumps({"tenant": "evil", "message": MESSAGE}).encode(),
            InvalidParamsError,
            "Invalid parameters: tenant in the body does not match the path",
            "tenant",
        ),
        (
            "POST",
            "/tasks/t1:cancel",
            b'{"id":"t2"}',
            InvalidParamsError,
            "Invalid parameters: id in the body does not match the path",
            "id",
        ),
        (
            "POST",
            "/tasks/t1:cancel",
            b'{"metadata":[1]}',
            InvalidParamsError,
            "Invalid parameters: Expected `object`, got `array` - at `$.metadata`",
            "metadata",
        ),
        (
            "POST",
            "/acme/tasks/t1:subscribe",
            b'{"tenant":"x"}',
            InvalidParamsError,
            "Invalid parameters: tenant in the body does not match the path",
            "tenant",
        ),
        (
            "POST",
            "/tasks/t1:subscribe",
            b'{"id":"t2"}',
            InvalidParamsError,
            "Invalid parameters: id in the body does not match the path",
            "id",
        ),
        (
            "POST",
            "/tasks/t1/pushNotificationConfigs",
            b'{"taskId":"t2","url":"https://hook"}',
            InvalidParamsError,
            "Invalid parameters: taskId in the body does not match the path",
            "taskId",
        ),
        (
            "POST",
            "/tasks/t1/pushNotificationConfigs",
            b"{}",
            InvalidParamsError,
            "Invalid parameters: Object missing required field `url`",
            None,
        ),
        (
            "POST",
            "/tasks/t1/pushNotificationConfigs",
            b'{"url":"https://hook","authentication":{"credentials":"x"}}',
            InvalidParamsError,
            "Invalid parameters: Object missing required field `scheme` - at `$.authentication`",
            "authentication",
        ),
    ],
)
def test_bad_bodies(
    method: str, path: str, body: bytes, error: type[Exception], message: str, field: str | None
) -> None:
    with pytest.raises(error) as info:
        _decode(method, path, body=body)
    assert str(info.value) == message
    if isinstance(info.value, InvalidParamsError):
        assert [v.field for v in info.value.field_violations] == ([field] if field else [])


# --- results ---------------------------------------------------------------------------------

TASK = t.Task(id="t1", context_id="c1", status=t.TaskStatus(state=t.TaskState.COMPLETED))
CONFIG = t.TaskPushNotificationConfig(id="c1", task_id="t1", url="https://hook")
CARD = t.AgentCard(
    name="Agent",
    description="Does things",
    supported_interfaces=[
        t.AgentInterface(url="https://a/rest", protocol_binding="HTTP+JSON", protocol_version="1.0")
    ],
    version="1",
    capabilities=t.AgentCapabilities(streaming=False),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[],
)

RESULTS: list[tuple[Operation, Any, bytes]] = [
    (
        Operation.SEND_MESSAGE,
        t.SendMessageResponse(task=TASK),
        b'{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}',
    ),
    (
        Operation.SEND_MESSAGE,
        t.SendMessageResponse(message=codec.convert(MESSAGE, t.Message)),
        b'{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}',
    ),
    (
        Operation.GET_TASK,
        TASK,
        b'{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}',
    ),
    (
        Operation.CANCEL_TASK,
        TASK,
        b'{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}',
    ),
    # all four members of ListTasksResponse, even when empty
    (
        Operation.LIST_TASKS,
        t.ListTasksResponse(tasks=[], next_page_token="", page_size=0, total_size=0),
        b'{"tasks":[],"nextPageToken":"","pageSize":0,"totalSize":0}',
    ),
    (Operation.CREATE_PUSH_CONFIG, CONFIG, b'{"id":"c1","taskId":"t1","url":"https://hook"}'),
    (Operation.GET_PUSH_CONFIG, CONFIG, b'{"id":"c1","taskId":"t1","url":"https://hook"}'),
    (
        Operation.LIST_PUSH_CONFIGS,
        t.ListTaskPushNotificationConfigsResponse(configs=[CONFIG], next_page_token="n"),
        b'{"configs":[{"id":"c1","taskId":"t1","url":"https://hook"}],"nextPageToken":"n"}',
    ),
    (Operation.DELETE_PUSH_CONFIG, None, b"{}"),
    (
        Operation.GET_EXTENDED_CARD,
        CARD,
        b'{"name":"Agent","description":"Does things","supportedInterfaces":[{"url":"https://a/rest",'
        b'"protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],"version":"1","capabilities":'
        b'{"streaming":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],'
        b'"skills":[]}',
    ),
]

_RESULT_SCHEMA = {
    Operation.SEND_MESSAGE: "SendMessageResponse",
    Operation.GET_TASK: "Task",
    Operation.CANCEL_TASK: "Task",
    Operation.LIST_TASKS: "ListTasksResponse",
    Operation.CREATE_PUSH_CONFIG: "TaskPushNotificationConfig",
    Operation.GET_PUSH_CONFIG: "TaskPushNotificationConfig",
    Operation.LIST_PUSH_CONFIGS: "ListTaskPushNotificationConfigsResponse",
    Operation.GET_EXTENDED_CARD: "AgentCard",
}


@pytest.mark.parametrize(
    ("operation", "value", "expected"),
    RESULTS,
    ids=[f"{r[0].value}-{i}" for i, r in enumerate(RESULTS)],
)
def test_v1_result_encodings(operation: Operation, value: Any, expected: bytes) -> None:
    body = rest.encode_rest_result(operation, "1.0", value)
    assert body == expected
    if operation in _RESULT_SCHEMA:
        assert not list(validator_for(_RESULT_SCHEMA[operation]).iter_errors(json.loads(body)))


@pytest.mark.parametrize(
    "example",
    [
        e
        for e in EXAMPLES
        if e["type"] in {"SendMessageResponse", "ListTasksResponse"}
        and "line 1406 " not in e["source"]
    ],
    ids=lambda e: e["source"][22:60],
)
def test_spec_result_examples_encode_as_shown(example: dict[str, Any]) -> None:
    operation = (
        Operation.SEND_MESSAGE if example["type"] == "SendMessageResponse" else Operation.LIST_TASKS
    )
    value = codec.decode(json.dumps(example["json"]).encode(), getattr(t, example["type"]))
    assert json.loads(rest.encode_rest_result(operation, "1.0", value)) == example["json"]


def test_spec_stream_example_encodes_bare() -> None:
    example = next(e for e in EXAMPLES if e["type"] == "StreamResponse")
    event = codec.decode(json.dumps(example["json"]).encode(), t.StreamResponse)
    assert json.loads(rest.encode_rest_stream_event("1.0", event)) == example["json"]


def test_v1_stream_event_has_no_kind_and_no_final() -> None:
    event = t.StreamResponse(
        status_update=t.TaskStatusUpdateEvent(
            task_id="t1", context_id="c1", status=t.TaskStatus(state=t.TaskState.COMPLETED)
        )
    )
    assert rest.encode_rest_stream_event("1.0", event) == (
        b'{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}'
    )
    # `final` is a v0.3 notion: ignored for v1.0
    assert rest.encode_rest_stream_event("1.0", event, final=True) == rest.encode_rest_stream_event(
        "1.0", event
    )


@pytest.mark.parametrize(
    ("operation", "dialect", "value", "message"),
    [
        (Operation.GET_TASK, "1.0", CONFIG, "GetTask returns Task, not TaskPushNotificationConfig"),
        (Operation.SEND_MESSAGE, "1.0", TASK, "SendMessage returns SendMessageResponse, not Task"),
        (
            Operation.DELETE_PUSH_CONFIG,
            "1.0",
            {},
            "DeleteTaskPushNotificationConfig returns nothing, not <class 'dict'>",
        ),
        (
            Operation.SEND_STREAMING_MESSAGE,
            "1.0",
            TASK,
            "SendStreamingMessage streams: encode its events with encode_rest_stream_event",
        ),
        (
            Operation.SUBSCRIBE_TO_TASK,
            "0.3",
            TASK,
            "SubscribeToTask streams: encode its events with encode_rest_stream_event",
        ),
        (
            Operation.LIST_TASKS,
            "0.3",
            t.ListTasksResponse(tasks=[], next_page_token="", page_size=0, total_size=0),
            "ListTasks has no v0.3 REST route",
        ),
    ],
)
def test_misuse_is_a_local_protocol_error(
    operation: Operation, dialect: Any, value: Any, message: str
) -> None:
    with pytest.raises(LocalProtocolError) as info:
        rest.encode_rest_result(operation, dialect, value)
    assert str(info.value) == message


# --- content types and error responses ---------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "application/json",
        "application/json; charset=utf-8",
        "APPLICATION/JSON;CHARSET=UTF-8",
        " application/json ",
        "application/a2a+json",
        "application/a2a+json; charset=utf-8",
        "Application/A2A+JSON",
        "application/problem+json",
        "application/vnd.example+json;v=2",
        None,  # lenient: read a body without a Content-Type as JSON
        "",
    ],
)
def test_accepted_content_types(value: str | None) -> None:
    rest.check_request_content_type(value)


@pytest.mark.parametrize(
    "value",
    [
        "text/plain",
        "text/json",
        "application/xml",
        "application/jsonx",
        "application/json-seq",
        "application/+json",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application",
        "json",
        "*/*",
        "application/ json",
    ],
)
def test_refused_content_types(value: str) -> None:
    with pytest.raises(ContentTypeNotSupportedError) as info:
        rest.check_request_content_type(value)
    assert info.value.code == -32005
    assert "application/json" in info.value.message
    response = rest.rest_error_response(info.value)
    assert response.status == 415
    assert (
        json.loads(response.body)["error"]["details"][0]["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"
    )
    assert rest.rest_error_response(info.value, "v1.0.1").status == 400


def test_content_type_constants() -> None:
    assert rest.DEFAULT_CONTENT_TYPE == rest.JSON_CONTENT_TYPE == "application/json"
    assert rest.A2A_JSON_CONTENT_TYPE == "application/a2a+json"
    assert rest.is_json_media_type(rest.A2A_JSON_CONTENT_TYPE)


def test_error_response_body_and_headers() -> None:
    response = rest.rest_error_response(
        TaskNotFoundError("Task t1 not found", metadata={"taskId": "t1"})
    )
    assert response.status == 404
    assert response.headers == (("content-type", "application/json"),)
    assert json.loads(response.body) == {
        "error": {
            "code": 404,
            "status": "NOT_FOUND",
            "message": "Task t1 not found",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "TASK_NOT_FOUND",
                    "domain": "a2a-protocol.org",
                    "metadata": {"taskId": "t1"},
                }
            ],
        }
    }
    a2a = rest.rest_error_response(TaskNotFoundError(), content_type=rest.A2A_JSON_CONTENT_TYPE)
    assert a2a.header("content-type") == "application/a2a+json"


def test_error_response_for_invalid_params_has_bad_request() -> None:
    with pytest.raises(InvalidParamsError) as info:
        _decode("GET", "/tasks", "pageSize=0")
    details = json.loads(rest.rest_error_response(info.value).body)["error"]["details"]
    assert details[1] == {
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        "fieldViolations": [
            {"field": "pageSize", "description": "Expected `int` >= 1 - at `$.pageSize`"}
        ],
    }


def test_error_response_survives_bad_metadata() -> None:
    err = TaskNotFoundError(metadata={"k": object()})  # type: ignore[dict-item]
    response = rest.rest_error_response(err)
    assert response.status == 404
    assert "metadata" not in json.loads(response.body)["error"]["details"][0]


# --- garbage in: documented errors out -------------------------------------------------------

SEGMENTS = st.sampled_from(
    [
        "",
        "v1",
        "tasks",
        "t1",
        "acme",
        "message:send",
        "message:stream",
        "pushNotificationConfigs",
        "extendedAgentCard",
        "card",
        "x:cancel",
        "x:subscribe",
        ":cancel",
        "%2F",
        "%FF",
        "%3A",
        "%",
        "a%20b",
    ]
) | st.text(max_size=6)
PARAM_NAMES = st.sampled_from(
    [
        "contextId",
        "context_id",
        "status",
        "pageSize",
        "page_size",
        "pageToken",
        "historyLength",
        "history_length",
        "statusTimestampAfter",
        "includeArtifacts",
        "status.x",
        "pageSize[0]",
        "A2A-Version",
    ]
) | st.text(max_size=8)
PARAM_VALUES = st.sampled_from(
    [
        "",
        "0",
        "1",
        "-1",
        "101",
        "true",
        "FALSE",
        "TASK_STATE_WORKING",
        "9",
        "2025-01-01T00:00:00Z",
        "0001-01-01T00:00:00 01:00",
        "x,y",
    ]
) | st.text(max_size=10)
BODIES = (
    st.binary(max_size=40)
    | json_values().map(lambda v: json.dumps(v).encode())
    | st.sampled_from(
        [
            b"",
            b"{}",
            SEND_BODY,
            b'{"id":"t1"}',
            b'{"url":"https://h","taskId":"t1"}',
            b'{"tenant":"acme"}',
            b'{"message":{"messageId":"m","role":0,"parts":[{"text":"a","raw":"AA=="}]}}',
            b'{"config":{"pushNotificationConfig":{"url":"u"}},"parent":"tasks/t1"}',
            b'{"name":"tasks/t1/pushNotificationConfigs/c","pushNotificationConfig":{"url":"u","id":"d"}}',
            b'{"message":{"message_id":"m","role":"ROLE_USER","content":[{"file":{"file_with_uri":"u"}}]}}',
        ]
    )
)
_IDS = st.text(min_size=1, max_size=8).map(lambda s: quote(s, safe="")) | st.text(max_size=4)


def _fill(template: str, data: st.DataObject) -> str:
    for name in ("{tenant}", "{task_id}", "{id}"):
        while name in template:
            template = template.replace(name, data.draw(_IDS), 1)
    return template


METHODS = st.sampled_from(["GET", "POST", "DELETE", "PUT", "get", "HEAD"]) | st.text(max_size=5)
# Requests aimed at a real route (usually with its method, ids drawn at random)...
ROUTED = st.builds(
    lambda route, method, data: (method or route.method, _fill(route.template, data)),
    st.sampled_from(rest.ROUTES),
    st.none() | st.none() | st.none() | METHODS,
    st.data(),
)
# ...and requests made of route-like and random segments.
UNROUTED = st.tuples(
    METHODS,
    st.builds(
        lambda lead, segs: ("/" if lead else "") + "/".join(segs),
        st.booleans(),
        st.lists(SEGMENTS, min_size=0, max_size=6),
    ),
)
RESULT_TYPES = [
    (Operation.SEND_MESSAGE, t.SendMessageResponse),
    (Operation.GET_TASK, t.Task),
    (Operation.LIST_TASKS, t.ListTasksResponse),
    (Operation.CREATE_PUSH_CONFIG, t.TaskPushNotificationConfig),
    (Operation.LIST_PUSH_CONFIGS, t.ListTaskPushNotificationConfigsResponse),
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    request_line=ROUTED | UNROUTED,
    query=st.lists(st.tuples(PARAM_NAMES, PARAM_VALUES), max_size=5),
    body=BODIES,
    content_type=st.none()
    | st.sampled_from(["application/json", "text/plain", "application/a2a+json;x=y"])
    | st.text(max_size=12),
    v0_3=st.booleans(),
)
def test_garbage_gives_documented_errors_only(
    request_line: tuple[str, str],
    query: list[tuple[str, str]],
    body: bytes,
    content_type: str | None,
    v0_3: bool,
) -> None:
    method, path = request_line
    match = rest.match_route(method, path, v0_3=v0_3)
    if isinstance(match, rest.RouteMiss):
        event(f"miss {match.status}")
        assert (match.status == 405) == bool(match.allow)
        assert rest.rest_route_miss_response(match).status == match.status
        return
    with contextlib.suppress(ContentTypeNotSupportedError):
        rest.check_request_content_type(content_type)
    refused: InvalidParamsError | JSONParseError | None = None
    try:
        request = rest.decode_rest_request(match, query, body)
    except (InvalidParamsError, JSONParseError) as exc:
        refused = exc
    if refused is not None:
        event(f"refused {type(refused).__name__}")
        assert rest.rest_error_response(refused).status == 400
        return
    event(f"decoded {match.dialect}")
    assert isinstance(request, rest.RestRequest)
    # whatever decoded is a valid v1.0 request: it survives its own codec
    assert codec.decode(codec.encode(request), type(request)) == request
    if (
        "id" in match.params
        and hasattr(request, "id")
        and match.operation is not Operation.CREATE_PUSH_CONFIG
    ):
        assert request.id == match.params["id"]
    if match.dialect == "1.0" and match.tenant:
        assert request.tenant == match.tenant


@pytest.mark.parametrize(
    ("operation", "type_"), RESULT_TYPES, ids=lambda x: getattr(x, "value", "")
)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_v1_results_round_trip(operation: Operation, type_: type[Any], data: st.DataObject) -> None:
    value = data.draw(strategy_for(type_))
    assert codec.decode(rest.encode_rest_result(operation, "1.0", value), type_) == value
