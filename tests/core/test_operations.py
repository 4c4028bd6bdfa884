"""The operations table: one row per operation, and every binding's table derived from it."""

from __future__ import annotations

import typing

import msgspec
import pytest

from a2a_core import jsonrpc, rest
from a2a_core.call import Call
from a2a_core.operations import OPERATIONS, CallRequest, Operation
from a2a_core.types import AgentCapabilities
from helpers.protocol import CARD, V1_PARAMS, body_of, envelope, make_protocol, rpc

V1 = ("A2A-Version", "1.0")


def test_every_operation_has_one_row() -> None:
    assert set(OPERATIONS) == set(Operation)
    assert all(spec.operation is op for op, spec in OPERATIONS.items())


def test_the_request_union_is_the_params_of_every_row() -> None:
    assert set(typing.get_args(CallRequest)) == {spec.params for spec in OPERATIONS.values()}


@pytest.mark.parametrize("op", list(Operation), ids=lambda op: op.value)
def test_a_row_is_consistent(op: Operation) -> None:
    spec = OPERATIONS[op]
    # A streaming operation has events, not results; every other one has a result type.
    assert bool(spec.results) is not spec.streaming
    # A v0.3 method name comes with its params struct and conversion, or none of the three.
    v03 = (spec.v0_3_method, spec.v0_3_params, spec.v0_3_to_v1)
    assert all(v is None for v in v03) or all(v is not None for v in v03)


def test_jsonrpc_methods_are_derived_from_the_table() -> None:
    assert {(s.name, s.operation, s.streaming) for s in jsonrpc.V1_METHODS.values()} == {
        (op.value, op, spec.streaming) for op, spec in OPERATIONS.items()
    }
    assert {(s.name, s.operation, s.streaming) for s in jsonrpc.V0_3_METHODS.values()} == {
        (spec.v0_3_method, op, spec.streaming)
        for op, spec in OPERATIONS.items()
        if spec.v0_3_method is not None
    }
    assert Operation.LIST_TASKS not in {s.operation for s in jsonrpc.V0_3_METHODS.values()}


def test_rest_routes_take_streaming_from_the_table() -> None:
    assert {route.operation for route in rest.ROUTES} == set(Operation)
    for route in rest.ROUTES:
        assert route.streaming is OPERATIONS[route.operation].streaming, route.template


@pytest.mark.parametrize("op", list(Operation), ids=lambda op: op.value)
def test_the_gate_is_the_capability_refused_when_off(op: Operation) -> None:
    # With every capability off, exactly the gated operations are refused, through bytes.
    protocol = make_protocol(
        msgspec.structs.replace(CARD, capabilities=AgentCapabilities()),
        extended_card_configured=False,
    )
    outcome = protocol.receive_request(rpc(envelope(op.value, V1_PARAMS[op.value]), V1))
    gate = OPERATIONS[op].gate
    if gate is None:
        assert isinstance(outcome, Call), outcome
        return
    assert not isinstance(outcome, Call)
    code = body_of(outcome)["error"]["code"]
    assert code == (-32003 if gate == "push_notifications" else -32004), gate
