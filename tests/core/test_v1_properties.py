"""Properties of the v1.0 model, for every struct, on values drawn by a2a_core.testing."""

from __future__ import annotations

import functools
import json
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_core import codec
from a2a_core import types as t
from a2a_core.testing import strategy_for
from helpers.schema_v1 import DEFINITIONS, validator_for

STRUCTS = sorted(t.ALL_STRUCTS, key=lambda cls: cls.__name__)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_model_covers_every_proto_message() -> None:
    proto_messages = {name for name in DEFINITIONS if name not in {"Struct", "Timestamp", "Value"}}
    assert {cls.__name__ for cls in STRUCTS} == proto_messages
    assert len(STRUCTS) == 44


@pytest.mark.parametrize("type_", STRUCTS, ids=lambda cls: cls.__name__)
@SETTINGS
@given(data=st.data())
def test_round_trip(type_: type[Any], data: st.DataObject) -> None:
    value = data.draw(strategy_for(type_))
    encoded = codec.encode(value)
    assert codec.decode(encoded, type_) == value
    # one more turn gives the same bytes: the encoding is canonical
    assert codec.encode(codec.decode(encoded, type_)) == encoded


@pytest.mark.parametrize("type_", STRUCTS, ids=lambda cls: cls.__name__)
@SETTINGS
@given(data=st.data())
def test_encoding_matches_the_strict_v1_schema(type_: type[Any], data: st.DataObject) -> None:
    value = data.draw(strategy_for(type_))
    errors = list(validator_for(type_.__name__).iter_errors(json.loads(codec.encode(value))))
    assert not errors, errors[0].message


def _rewrite(node: Any, info: Any, *, snake: bool = False, int_enums: bool = False) -> Any:
    """Rewrite a parsed document by its declared structure, leaving free-form maps alone:
    declared field names to snake_case, and/or enum names to their proto numbers."""
    mi = msgspec.inspect
    again = functools.partial(_rewrite, snake=snake, int_enums=int_enums)
    if isinstance(info, mi.Metadata):
        return again(node, info.type)
    if isinstance(info, mi.UnionType):
        inner = [i for i in info.types if not isinstance(i, mi.NoneType)]
        return again(node, inner[0]) if len(inner) == 1 else node
    if isinstance(info, mi.StructType) and isinstance(node, dict):
        fields = {f.encode_name: f for f in info.fields}
        return {
            (fields[k].name if snake else k): again(v, fields[k].type) if k in fields else v
            for k, v in node.items()
        }
    if isinstance(info, mi.ListType) and isinstance(node, list):
        return [again(v, info.item_type) for v in node]
    if isinstance(info, mi.DictType) and isinstance(node, dict):
        return {k: again(v, info.value_type) for k, v in node.items()}
    if isinstance(info, mi.EnumType) and int_enums:
        return [m.value for m in info.cls].index(node)
    return node


def _rewritten(value: Any, **how: bool) -> bytes:
    info = msgspec.inspect.type_info(type(value))
    return json.dumps(_rewrite(json.loads(codec.encode(value)), info, **how)).encode()


@pytest.mark.parametrize(
    "type_",
    [t.Task, t.SendMessageRequest, t.AgentCard, t.ListTasksRequest, t.StreamResponse],
    ids=lambda cls: cls.__name__,
)
@SETTINGS
@given(data=st.data())
def test_snake_case_input_decodes_to_the_same_value(type_: type[Any], data: st.DataObject) -> None:
    value = data.draw(strategy_for(type_))
    assert codec.decode(_rewritten(value, snake=True), type_) == value


@pytest.mark.parametrize(
    "type_", [t.Task, t.StreamResponse, t.ListTasksRequest], ids=lambda cls: cls.__name__
)
@SETTINGS
@given(data=st.data())
def test_integer_enums_decode_to_the_same_value(type_: type[Any], data: st.DataObject) -> None:
    value = data.draw(strategy_for(type_))
    assert codec.decode(_rewritten(value, int_enums=True), type_) == value
    assert codec.decode(_rewritten(value, int_enums=True, snake=True), type_) == value


@SETTINGS
@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_decode_error(body: bytes) -> None:
    messages = []
    for type_ in (t.SendMessageRequest, t.Task, t.ListTasksRequest):
        try:
            codec.decode(body, type_)
        except codec.DecodeError as exc:
            messages.append(exc.message)
    assert all(messages)


@SETTINGS
@given(artifact=strategy_for(t.Artifact))
def test_an_artifacts_text_is_its_text_parts_concatenated(artifact: t.Artifact) -> None:
    texts = [part.text for part in artifact.parts if isinstance(part.text, str)]
    assert artifact.text == "".join(texts)
    # Streamed chunks are parts of one text: split anywhere, they read back whole.
    parts = artifact.parts
    first = next((i for i, part in enumerate(parts) if isinstance(part.text, str)), None)
    if first is not None:
        text = str(parts[first].text)
        halves = [t.Part(text=text[:1]), t.Part(text=text[1:])]
        split = msgspec.structs.replace(
            artifact, parts=[*parts[:first], *halves, *parts[first + 1 :]]
        )
        assert split.text == artifact.text


@SETTINGS
@given(message=strategy_for(t.Message))
def test_a_messages_text_is_its_text_parts_joined_by_newlines(message: t.Message) -> None:
    texts = [part.text for part in message.parts if isinstance(part.text, str)]
    assert message.text == "\n".join(texts)
    assert "text" not in json.loads(codec.encode(message))  # a property, not a field
