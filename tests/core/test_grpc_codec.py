"""The protobuf codec of the v1.0 model, against the schema and against protobuf's own runtime.

The codec is ours (no protobuf import in the core); the official SDK's generated messages
(``a2a.types.a2a_pb2``, upb underneath) are the referee: what we write, upb reads with no
field left unknown and prints as the ProtoJSON our JSON codec prints; what upb writes, we
read back to the same value. Random and mutated bytes end in `DecodeError`, nothing else.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from a2a.types import a2a_pb2
from google.protobuf import json_format
from google.protobuf.message import Message as ProtoMessage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_core import codec as json_codec
from a2a_core import types as t
from a2a_core._protocol.grpc import codec
from a2a_core._protocol.grpc._schema import ENUMS, MESSAGES, RPCS
from a2a_core.codec import DecodeError
from a2a_core.testing import strategy_for

STRUCTS = sorted(t.ALL_STRUCTS, key=lambda cls: cls.__name__)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PROTO_DIR = Path(__file__).resolve().parents[2] / "packages" / "a2a-core" / "proto"
#: The enum values numbered 0 (proto3 never writes them).
ZEROS = frozenset(values[0] for values in ENUMS.values())
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("proto_generate", PROTO_DIR / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["proto_generate"] = module
    spec.loader.exec_module(module)
    return module


def test_the_generated_schema_is_up_to_date() -> None:
    generate = _generator()
    assert generate.TARGET.read_text() == generate.render(), (
        "run: uv run python packages/a2a-core/proto/generate.py"
    )


@pytest.mark.parametrize("type_", STRUCTS, ids=lambda cls: cls.__name__)
def test_schema_and_model_name_the_same_fields(type_: type[Any]) -> None:
    """Every Struct is the proto message of its name, field for field (JSON names)."""
    schema = {field[1] for field in MESSAGES[type_.__name__]}
    model = {f.encode_name for f in msgspec.structs.fields(type_)}
    assert schema == model


def test_enums_match_the_model() -> None:
    assert ENUMS["TaskState"] == tuple(s.value for s in t.TaskState)
    assert ENUMS["Role"] == tuple(r.value for r in t.Role)


def test_every_rpc_is_in_the_table() -> None:
    assert len(RPCS) == 11
    assert [r[0] for r in RPCS if r[3]] == ["SendStreamingMessage", "SubscribeToTask"]


# --- against upb -----------------------------------------------------------------------------


def _numbers(node: Any) -> Any:
    """A ProtoJSON tree as protobuf carries it: numbers of JSON values are doubles (an
    integral one within 2^53 compares as an int), timestamps compared as instants, and
    members at their default left out (our JSON writes a required ``""``, protobuf never
    writes a default)."""
    if isinstance(node, dict):
        pairs = ((key, _numbers(value)) for key, value in node.items())
        return {
            key: value
            for key, value in pairs
            if value is None or value is True or (value and value != 0 and not _zero_enum(value))
        }
    if isinstance(node, list):
        return [_numbers(value) for value in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, (int, float)):
        number = float(node)
        return int(number) if number.is_integer() and abs(number) < 2**53 else number
    if isinstance(node, str) and _TIMESTAMP.match(node):
        return dt.datetime.fromisoformat(node.replace("Z", "+00:00"))
    return node


def _zero_enum(value: Any) -> bool:
    return isinstance(value, str) and value in ZEROS


def _proto_class(type_: type[Any]) -> type[ProtoMessage]:
    cls: type[ProtoMessage] = getattr(a2a_pb2, type_.__name__)
    return cls


@pytest.mark.parametrize("type_", STRUCTS, ids=lambda cls: cls.__name__)
@SETTINGS
@given(data=st.data())
def test_upb_reads_what_we_write(type_: type[Any], data: st.DataObject) -> None:
    value = data.draw(strategy_for(type_))
    wire = codec.encode(value)
    parsed = _proto_class(type_)()
    parsed.ParseFromString(wire)
    theirs = json_format.MessageToDict(parsed)
    ours = json.loads(json_codec.encode(value))
    assert _numbers(theirs) == _numbers(ours)
    # Nothing we wrote was unknown to upb: its own encoding is as long as ours.
    assert len(parsed.SerializeToString()) == len(wire)


@pytest.mark.parametrize("type_", STRUCTS, ids=lambda cls: cls.__name__)
@SETTINGS
@given(data=st.data())
def test_we_read_what_upb_writes(type_: type[Any], data: st.DataObject) -> None:
    value = data.draw(strategy_for(type_))
    message = json_format.Parse(json_codec.encode(value), _proto_class(type_)())
    decoded = codec.decode(message.SerializeToString(), type_)
    assert _numbers(json.loads(json_codec.encode(decoded))) == _numbers(
        json.loads(json_codec.encode(value))
    )


@pytest.mark.parametrize("type_", STRUCTS, ids=lambda cls: cls.__name__)
@SETTINGS
@given(data=st.data())
def test_round_trip(type_: type[Any], data: st.DataObject) -> None:
    value = data.draw(strategy_for(type_))
    wire = codec.encode(value)
    decoded = codec.decode(wire, type_)
    assert codec.encode(decoded) == wire  # canonical: a second turn writes the same bytes


# --- what is refused -------------------------------------------------------------------------


@pytest.mark.parametrize("type_", STRUCTS, ids=lambda cls: cls.__name__)
@settings(max_examples=60, deadline=None)
@given(raw=st.binary(max_size=64))
def test_random_bytes_decode_or_fail_cleanly(type_: type[Any], raw: bytes) -> None:
    assert _outcome(raw, type_) in ("decoded", "refused")


def _outcome(wire: bytes, type_: type[Any]) -> str:
    """``decoded`` (a value of the type), ``refused`` (a DecodeError that says why); any
    other exception escapes and fails the test."""
    try:
        decoded = codec.decode(wire, type_)
    except DecodeError as exc:
        return "refused" if exc.message else "refused without a message"
    return "decoded" if isinstance(decoded, type_) else f"decoded as {type(decoded)}"


@settings(max_examples=200, deadline=None)
@given(value=strategy_for(t.SendMessageRequest), data=st.data())
def test_mutated_requests_decode_or_fail_cleanly(
    value: t.SendMessageRequest, data: st.DataObject
) -> None:
    wire = bytearray(codec.encode(value))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, max(0, len(wire) - 1)))
        action = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        if action == "flip" and wire:
            wire[at] ^= data.draw(st.integers(1, 255))
        elif action == "cut":
            del wire[at:]
        else:
            wire[at:at] = data.draw(st.binary(min_size=1, max_size=4))
    assert _outcome(bytes(wire), t.SendMessageRequest) in ("decoded", "refused")


def _message(**changes: Any) -> a2a_pb2.Message:
    fields = {"message_id": "m1", "role": a2a_pb2.ROLE_USER, "parts": [a2a_pb2.Part(text="hi")]}
    fields.update(changes)
    return a2a_pb2.Message(**fields)


def test_a_missing_required_field_fails_as_in_json() -> None:
    wire = _message(message_id="").SerializeToString()
    with pytest.raises(DecodeError, match=r"length >= 1 - at `\$.messageId`") as caught:
        codec.decode(wire, t.Message)
    assert not caught.value.malformed_json


def test_an_unset_role_fails_as_in_json() -> None:
    wire = _message(role=a2a_pb2.ROLE_UNSPECIFIED).SerializeToString()
    with pytest.raises(DecodeError, match="ROLE_USER or ROLE_AGENT"):
        codec.decode(wire, t.Message)


def test_unknown_fields_are_skipped() -> None:
    extra = b"\xf8\x07\x01" + b"\x82\x08\x03abc"  # field 127 varint, field 128 bytes
    decoded = codec.decode(_message().SerializeToString() + extra, t.Message)
    assert decoded.message_id == "m1"


def test_a_varint_written_in_more_bytes_than_needed_is_read() -> None:
    # TaskStatus.state = 3 in two bytes: valid protobuf, if no encoder writes it so.
    assert codec.decode(b"\x08\x83\x00", t.TaskStatus).state is t.TaskState.COMPLETED
    # A string's length in two bytes.
    provider = codec.decode(b"\x0a\x81\x00u\x12\x01o", t.AgentProvider)
    assert (provider.url, provider.organization) == ("u", "o")


def test_an_unknown_enum_number_is_refused() -> None:
    wire = b"\x08\x63"  # TaskStatus.state = 99
    with pytest.raises(DecodeError, match="unknown TaskState value 99"):
        codec.decode(wire, t.TaskStatus)


@pytest.mark.parametrize(
    ("wire", "why"),
    [
        (b"\x0a\x05ab", "truncated"),
        (b"\x0a", "truncated varint"),
        (b"\x08\x01", "wire type 0, expected 2"),
        (b"\x0a\x02\xff\xfe", "invalid UTF-8"),
        (b"\xa3\x06", "unsupported wire type 3"),  # field 100, a group
        (b"\x00", "field number 0"),
        (b"\x0a" + b"\xff" * 11, "overlong varint"),
    ],
)
def test_malformed_bytes_are_refused(wire: bytes, why: str) -> None:
    with pytest.raises(DecodeError, match=why) as caught:
        codec.decode(wire, t.Message)
    assert caught.value.malformed_json


def test_nesting_is_bounded() -> None:
    deep = {"a": [[[[[[[[[[[[1]]]]]]]]]]]]}
    part = t.Part(data=deep)
    wire = codec.encode(part)
    assert codec.decode(wire, t.Part).data == deep
    with pytest.raises(DecodeError, match="nesting too deep"):
        codec.decode(wire, t.Part, max_depth=8)


def test_values_keep_json_numbers_and_timestamps() -> None:
    stamp = dt.datetime(1969, 7, 20, 20, 17, 40, 123456, tzinfo=dt.UTC)
    status = t.TaskStatus(state=t.TaskState.WORKING, timestamp=stamp)
    assert codec.decode(codec.encode(status), t.TaskStatus).timestamp == stamp
    part = t.Part(data={"int": 3, "float": 2.5, "big": 2**60, "neg": -1, "none": None})
    decoded = codec.decode(codec.encode(part), t.Part).data
    assert decoded == {"int": 3, "float": 2.5, "big": float(2**60), "neg": -1, "none": None}
    assert type(decoded["int"]) is int


def test_int32_negatives_use_ten_bytes() -> None:
    wire = codec.encode_tree({"code": -1}, "Status")
    assert wire == b"\x08" + b"\xff" * 9 + b"\x01"
    assert codec.decode_tree(wire, "Status") == {"code": -1}


def test_empty_is_no_bytes() -> None:
    assert codec.encode(None) == b""
    assert codec.decode(b"", None) is None
