"""The server's settings are values checked when built, and the operations one table.

A mistake fails where the server is configured, with the option's name; and every operation
of the operations table has its handler, so that ``A2AServer.handle`` needs no ladder.
"""

from __future__ import annotations

import ast
import datetime as dt
import inspect
import math
from pathlib import Path
from typing import Any

import pytest

import a2a_core
from a2a_core.operations import OPERATIONS, Operation
from a2a_core.protocol import ProtocolOptions
from a2a_core.server import A2AServer, ExecutionGuards, PushOptions, StreamOptions
from a2a_core.server._handlers import HANDLERS
from helpers.a2a_client import make_card


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: ProtocolOptions(max_body_size=-5), "max_body_size"),
        (lambda: ProtocolOptions(max_body_size=0), "max_body_size"),
        (lambda: ProtocolOptions(max_body_size=True), "max_body_size"),
        (lambda: ProtocolOptions(max_json_depth=0), "max_json_depth"),
        (lambda: ProtocolOptions(versions=["2.0"]), "versions"),
        (lambda: ProtocolOptions(versions=[]), "versions"),
        (lambda: ProtocolOptions(versions="1.0"), "versions"),
        (lambda: ProtocolOptions(error_table="v9"), "error_table"),  # type: ignore[arg-type]
        (lambda: ProtocolOptions(notifications="drop"), "notifications"),  # type: ignore[arg-type]
        (lambda: ProtocolOptions(jsonrpc_path=5), "jsonrpc_path"),  # type: ignore[arg-type]
        (lambda: ProtocolOptions(rest_content_type=""), "rest_content_type"),
        (lambda: ProtocolOptions(last_modified=dt.datetime(2025, 1, 1)), "last_modified"),
        (lambda: StreamOptions(keep_alive_interval=-1), "keep_alive_interval"),
        (lambda: StreamOptions(keep_alive_interval=0), "keep_alive_interval"),
        (lambda: StreamOptions(keep_alive_interval=math.inf), "keep_alive_interval"),
        (lambda: StreamOptions(idle_timeout=-0.5), "idle_timeout"),
        (lambda: StreamOptions(idle_timeout="60"), "idle_timeout"),  # type: ignore[arg-type]
        (lambda: StreamOptions(backlog_limit=0), "backlog_limit"),
        (lambda: PushOptions(allow_hosts="localhost"), "allow_hosts"),
        (lambda: PushOptions(allow_hosts=[""]), "allow_hosts"),
        (lambda: PushOptions(allow_private="yes"), "allow_private"),  # type: ignore[arg-type]
        (lambda: ExecutionGuards(shutdown_grace=-1), "shutdown_grace"),
        (lambda: ExecutionGuards(shutdown_grace=math.nan), "shutdown_grace"),
    ],
)
def test_a_bad_setting_fails_when_built_naming_its_option(make: Any, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        make()


def test_good_settings_are_kept_as_given() -> None:
    stamp = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    protocol = ProtocolOptions(versions=["1.0"], max_body_size=1, last_modified=stamp)
    assert (protocol.versions, protocol.max_body_size, protocol.last_modified) == (
        ["1.0"],
        1,
        stamp,
    )
    streams = StreamOptions(keep_alive_interval=0.5, idle_timeout=2, backlog_limit=None)
    assert (streams.keep_alive_interval, streams.idle_timeout, streams.backlog_limit) == (
        0.5,
        2,
        None,
    )
    assert PushOptions(allow_hosts=["a", "b"]).allow_hosts == ("a", "b")
    assert ExecutionGuards(shutdown_grace=0).shutdown_grace == 0


def test_the_server_takes_at_most_sixteen_options() -> None:
    # Fourteen until the developer console, which is one option (on, or its path); fifteen
    # until the recovery policy, one value (what becomes of lost work and of a message
    # sent again).
    parameters = inspect.signature(A2AServer).parameters
    options = [name for name in parameters if name != "agent"]
    assert len(options) <= 16, options
    server = A2AServer(lambda ctx: "hi", card=make_card(), streams=StreamOptions(idle_timeout=9))
    assert server.stream_options.idle_timeout == 9


def test_every_operation_has_its_handler() -> None:
    assert set(HANDLERS) == set(OPERATIONS) == set(Operation)
    for operation, handler in HANDLERS.items():
        assert inspect.iscoroutinefunction(handler), operation


RUNTIME = Path(a2a_core.__file__).parent


def _operation_ladders(path: Path) -> list[int]:
    """Lines that compare something with an `Operation` member by identity or equality
    (``op is Operation.GET_TASK``): a ladder the tables were made to replace."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                if (
                    isinstance(operand, ast.Attribute)
                    and isinstance(operand.value, ast.Name)
                    and operand.value.id == "Operation"
                    and any(isinstance(op, ast.Is | ast.Eq | ast.IsNot) for op in node.ops)
                ):
                    found.append(node.lineno)
    return found


@pytest.mark.parametrize(
    "path",
    sorted([*(RUNTIME / "server").glob("*.py"), *(RUNTIME / "_protocol").rglob("*.py")]),
    ids=lambda p: str(p.relative_to(RUNTIME)),
)
def test_no_operation_ladder_decides_what_a_table_can(path: Path) -> None:
    # One comparison is a decision of its own (a subscription's closing states), not a
    # ladder: at most one per module.
    assert len(_operation_ladders(path)) <= 1, f"{path.name}: {_operation_ladders(path)}"


def test_every_backend_names_the_task_ttl_alike() -> None:
    """``task_ttl`` on the in-memory, Redis and SQL backends; the old in-memory name still
    works, with a warning."""
    from a2a_core.server.backends import InMemoryBackend

    names = {"memory": set(inspect.signature(InMemoryBackend).parameters)}
    for name, module, cls in (
        ("redis", "a2aserve_redis", "RedisBackend"),
        ("sql", "a2a_sql", "SqlBackend"),
    ):
        backend = getattr(pytest.importorskip(module), cls)
        names[name] = set(inspect.signature(backend).parameters)
    assert all("task_ttl" in params for params in names.values()), names
    assert InMemoryBackend(task_ttl=5.0).store._ttl == 5.0
    with pytest.warns(DeprecationWarning, match="task_ttl"):
        old = InMemoryBackend(ttl=7.0)
    assert old.store._ttl == 7.0
