"""The protobuf codec as a measured choice: ours against upb with a conversion (a2a-go's way).

    uv run python bench/grpc_codec.py [--repeats 7] [--target-ms 30] [--kinds message,task-3,...]
        [--markdown] [--no-pin]

The gRPC binding needs the v1.0 messages as protobuf bytes, and our Structs (`a2a_core.types`)
on the other side. Two ways to get there, timed here on the same values:

- ``ours``: ``a2a_core._protocol.grpc.codec``: ``encode(struct)`` (``msgspec.to_builtins``,
  then one walk of the tree writes the bytes) and ``decode(bytes, Type)`` (one walk of the
  bytes builds the ProtoJSON tree, ``msgspec.convert`` builds and validates the Struct);
- ``upb+conv``: the official SDK's generated classes (``a2a.types.a2a_pb2``, protobuf's upb
  backend, in C) and a hand-written conversion, field by field, between those messages and
  our Structs, the pattern of a2a-go (``a2apb/pbconv``): encode fills the ``a2a_pb2``
  message from the Struct in place (sub-messages through their parent, repeated ones with
  ``add()``, only fields that differ from their default; ``metadata`` through the protobuf
  runtime's ``Struct.update``; ``Part.data`` into a ``Value``; timestamps as seconds and
  nanos: twice as fast as constructors with keyword arguments) and serializes it; decode
  parses with upb and builds the Struct with its constructors (its ``__post_init__``: the
  oneofs, a role that is not unspecified, timestamps in UTC), plus the checks that
  ``msgspec.convert`` makes and a constructor does not (non-empty ids, at least one part,
  known enum numbers, timestamps in range), so that it accepts and refuses what ours does;
- ``upb+convert`` (decode only): upb, then the message into a ProtoJSON tree field by field,
  then ``msgspec.convert``: the same validation as ours by construction;
- ``upb``: ``FromString`` / ``SerializeToString`` alone, no conversion: the floor of
  ``upb+conv``;
- ``json``: our JSON codec (``a2a_core.codec``), for reference.

Before timing, the script checks that the comparison is honest: for every value, ours and
the conversion encode bytes that upb parses into equal messages (and says whether they are
byte-identical: maps such as ``metadata`` may come out in another order), every decoder
gives back the very Struct encoded, from its own bytes and from the other's, and every
decoder refuses the same invalid messages.

Each cell is the time of one call (µs): ``time.perf_counter_ns`` over a loop of as many
calls as fill ``--target-ms``, the median of ``--repeats`` loops, the garbage collector on
(as in a server). Pinned to core 0 where possible (``--no-pin``: not).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import itertools
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Final

import msgspec
from a2a.types import a2a_pb2 as pb
from google.protobuf import message as pb_message
from google.protobuf import struct_pb2, timestamp_pb2
from google.protobuf.internal import api_implementation
from msgspec import UNSET

from a2a_core import codec as json_codec
from a2a_core._protocol.grpc import codec as grpc_codec
from a2a_core.codec import DecodeError
from a2a_core.types import (
    Artifact,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

# --- the values ----------------------------------------------------------------------------

TASK_ID: Final = "0f8a6c52-2d7e-4f61-9a7c-5c1f4ad1e8b3"
CONTEXT_ID: Final = "7d2b9e10-4c3a-4b8e-8f0d-2a6e1c9b5f47"
WHEN: Final = dt.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=dt.UTC)

_WORDS: Final = " ".join(
    (
        "the agent read the quarterly report and found that revenue grew in every region",
        "except the north, where a late shipment — expected in March — moved sales into the",
        "next quarter; costs stayed flat, margins improved, and the café chain reported a",
        "record month",
    )
).split()


def prose(size: int, seed: int = 0) -> str:
    """About ``size`` bytes of text (a few non-ASCII characters among them)."""
    words = itertools.cycle(_WORDS[seed % len(_WORDS) :] + _WORDS[: seed % len(_WORDS)])
    out: list[str] = []
    length = 0
    while length < size:
        word = next(words)
        out.append(word)
        length += len(word.encode()) + 1
    return " ".join(out)


def user_message() -> Message:
    return Message(
        message_id="9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d",
        context_id=CONTEXT_ID,
        role=Role.USER,
        parts=[Part(text="Summarize the attached quarterly report in three bullet points.")],
    )


def history() -> list[Message]:
    return [
        msgspec.structs.replace(
            user_message(),
            task_id=TASK_ID,
            metadata={"client": "bench", "locale": "en-US"},
        ),
        Message(
            message_id="1c6f2e7a-5d4b-4e0f-8a3c-6b9d2f1e0a57",
            context_id=CONTEXT_ID,
            task_id=TASK_ID,
            role=Role.AGENT,
            parts=[Part(text="Reading the report now; this takes a few seconds.")],
        ),
    ]


def task(artifacts: int) -> Task:
    """A completed task: two messages of history, a status with a message and a timestamp,
    ``artifacts`` artifacts (text of 200 B; markdown of 4 KB; a data part), metadata."""
    made = [
        Artifact(
            artifact_id="a1f3c9e2-7b64-4d0a-9e85-3c2b1d0f4a67",
            name="summary",
            parts=[Part(text=prose(200))],
        ),
        Artifact(
            artifact_id="b2e4d0f3-8c75-4e1b-af96-4d3c2e1f5b78",
            name="report",
            description="The full report, rewritten as markdown.",
            parts=[Part(text="# Report\n\n" + prose(4096, seed=7), media_type="text/markdown")],
            metadata={"model": "bench-1", "tokens": 1021},
        ),
        Artifact(
            artifact_id="c3f5e1a4-9d86-4f2c-b0a7-5e4d3f2a6c89",
            name="figures",
            parts=[
                Part(
                    data={
                        "quarter": "2025-Q4",
                        "regions": [
                            {"name": "north", "revenue": 1.25e6, "growth": -0.031},
                            {"name": "south", "revenue": 2.5e6, "growth": 0.084},
                            {"name": "east", "revenue": 1875000, "growth": 0.052},
                            {"name": "west", "revenue": 3125000, "growth": 0.117},
                        ],
                        "final": True,
                        "notes": None,
                    },
                    media_type="application/json",
                )
            ],
        ),
    ][:artifacts]
    return Task(
        id=TASK_ID,
        context_id=CONTEXT_ID,
        status=TaskStatus(
            state=TaskState.COMPLETED,
            message=Message(
                message_id="4e7a1b2c-3d5f-4a6b-8c9d-0e1f2a3b4c5d",
                context_id=CONTEXT_ID,
                task_id=TASK_ID,
                role=Role.AGENT,
                parts=[Part(text="Done: three bullet points and the figures.")],
            ),
            timestamp=WHEN,
        ),
        artifacts=made,
        history=history(),
        metadata={"tenant": "acme", "priority": 2, "labels": ["finance", "q4"]},
    )


def chunk() -> StreamResponse:
    """One chunk of a streamed artifact (~50 bytes of text)."""
    return StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(
            task_id=TASK_ID,
            context_id=CONTEXT_ID,
            artifact=Artifact(
                artifact_id="a1f3c9e2-7b64-4d0a-9e85-3c2b1d0f4a67",
                parts=[Part(text=" revenue grew in every region except the north, ")],
            ),
            append=True,
        )
    )


def status_update() -> StreamResponse:
    """The last event of a stream: completed, with a timestamp."""
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id=TASK_ID,
            context_id=CONTEXT_ID,
            status=TaskStatus(state=TaskState.COMPLETED, timestamp=WHEN),
        )
    )


def snapshot() -> StreamResponse:
    """The first event of a stream: the task as submitted, the user's message in history."""
    return StreamResponse(
        task=Task(
            id=TASK_ID,
            context_id=CONTEXT_ID,
            status=TaskStatus(state=TaskState.SUBMITTED, timestamp=WHEN),
            history=[msgspec.structs.replace(user_message(), task_id=TASK_ID)],
        )
    )


@dataclass(frozen=True)
class Kind:
    key: str
    title: str
    make: Callable[[], Any]


KINDS: Final = (
    Kind("message", "Message, one short text part", user_message),
    Kind(
        "send",
        "SendMessageRequest (what SendMessage decodes)",
        lambda: SendMessageRequest(message=user_message()),
    ),
    Kind(
        "task-1",
        "Task: 2-message history, status message + timestamp, 1 artifact (200 B)",
        lambda: task(1),
    ),
    Kind(
        "task-3",
        "Task: as task-1, 3 artifacts (200 B text, 4 KB markdown, a data part)",
        lambda: task(3),
    ),
    Kind("chunk", "StreamResponse: artifact-update chunk, ~50 B text", chunk),
    Kind("status", "StreamResponse: status update (completed, timestamp)", status_update),
    Kind("snapshot", "StreamResponse: task snapshot (submitted, 1 message)", snapshot),
)


# --- upb + conversion: our Structs -> a2a_pb2 -------------------------------------------------

_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_ROLE_TO_PB: Final[dict[Role, Any]] = {role: pb.Role.Value(role.value) for role in Role}
_STATE_TO_PB: Final[dict[TaskState, Any]] = {
    state: pb.TaskState.Value(state.value) for state in TaskState
}
_ROLE_FROM_PB: Final = {number: role for role, number in _ROLE_TO_PB.items()}
_STATE_FROM_PB: Final = {number: state for state, number in _STATE_TO_PB.items()}


# Each ``fill_*`` writes a Struct into an a2a_pb2 message in place: the message a parent hands
# out (``out.status``, ``out.parts.add()``), so that no sub-message is built and then copied
# (upb copies a message given to a constructor or appended), and only fields that differ from
# their default are set. That is twice as fast as building each message from keyword
# arguments, and the fastest form of the conversion found.


def fill_value(out: struct_pb2.Value, value: Any) -> None:
    """A JSON value into a ``google.protobuf.Value``."""
    if value is None:
        out.null_value = struct_pb2.NULL_VALUE
    elif value is True or value is False:
        out.bool_value = value
    elif isinstance(value, (int, float)):
        out.number_value = value
    elif isinstance(value, str):
        out.string_value = value
    elif isinstance(value, dict):
        out.struct_value.update(value)  # the protobuf runtime's own dict -> Struct
    elif isinstance(value, (list, tuple)):
        out.list_value.extend(value)
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")


def fill_timestamp(out: timestamp_pb2.Timestamp, value: dt.datetime) -> None:
    delta = value - _EPOCH
    out.seconds = delta.days * 86400 + delta.seconds
    out.nanos = delta.microseconds * 1000


def fill_part(out: pb.Part, part: Part) -> None:
    if part.text is not UNSET:
        out.text = part.text
    elif part.raw is not UNSET:
        out.raw = part.raw
    elif part.url is not UNSET:
        out.url = part.url
    else:
        fill_value(out.data, part.data)
    if part.metadata:
        out.metadata.update(part.metadata)
    if part.filename:
        out.filename = part.filename
    if part.media_type:
        out.media_type = part.media_type


def fill_message(out: pb.Message, message: Message) -> None:
    out.message_id = message.message_id
    if message.context_id:
        out.context_id = message.context_id
    if message.task_id:
        out.task_id = message.task_id
    out.role = _ROLE_TO_PB[message.role]
    parts = out.parts
    for part in message.parts:
        fill_part(parts.add(), part)
    if message.metadata:
        out.metadata.update(message.metadata)
    if message.extensions:
        out.extensions.extend(message.extensions)
    if message.reference_task_ids:
        out.reference_task_ids.extend(message.reference_task_ids)


def fill_status(out: pb.TaskStatus, status: TaskStatus) -> None:
    out.state = _STATE_TO_PB[status.state]
    if status.message is not None:
        fill_message(out.message, status.message)
    if status.timestamp is not None:
        fill_timestamp(out.timestamp, status.timestamp)


def fill_artifact(out: pb.Artifact, artifact: Artifact) -> None:
    out.artifact_id = artifact.artifact_id
    if artifact.name:
        out.name = artifact.name
    if artifact.description:
        out.description = artifact.description
    parts = out.parts
    for part in artifact.parts:
        fill_part(parts.add(), part)
    if artifact.metadata:
        out.metadata.update(artifact.metadata)
    if artifact.extensions:
        out.extensions.extend(artifact.extensions)


def fill_task(out: pb.Task, task: Task) -> None:
    out.id = task.id
    if task.context_id:
        out.context_id = task.context_id
    fill_status(out.status, task.status)
    artifacts = out.artifacts
    for artifact in task.artifacts:
        fill_artifact(artifacts.add(), artifact)
    history = out.history
    for message in task.history:
        fill_message(history.add(), message)
    if task.metadata:
        out.metadata.update(task.metadata)


def message_to_pb(message: Message) -> pb.Message:
    out = pb.Message()
    fill_message(out, message)
    return out


def task_to_pb(task: Task) -> pb.Task:
    out = pb.Task()
    fill_task(out, task)
    return out


def stream_response_to_pb(event: StreamResponse) -> pb.StreamResponse:
    out = pb.StreamResponse()
    if event.artifact_update is not None:
        a, update = event.artifact_update, out.artifact_update
        update.task_id = a.task_id
        update.context_id = a.context_id
        fill_artifact(update.artifact, a.artifact)
        if a.append:
            update.append = True
        if a.last_chunk:
            update.last_chunk = True
        if a.metadata:
            update.metadata.update(a.metadata)
    elif event.status_update is not None:
        s, change = event.status_update, out.status_update
        change.task_id = s.task_id
        change.context_id = s.context_id
        fill_status(change.status, s.status)
        if s.metadata:
            change.metadata.update(s.metadata)
    elif event.task is not None:
        fill_task(out.task, event.task)
    else:
        assert event.message is not None
        fill_message(out.message, event.message)
    return out


def send_request_to_pb(request: SendMessageRequest) -> pb.SendMessageRequest:
    out = pb.SendMessageRequest()
    if request.tenant:
        out.tenant = request.tenant
    fill_message(out.message, request.message)
    if request.configuration is not None:
        c, config = request.configuration, out.configuration
        if c.task_push_notification_config is not None:
            raise NotImplementedError("push configs: not in the measured values")
        config.SetInParent()  # present even when every field is at its default
        if c.accepted_output_modes:
            config.accepted_output_modes.extend(c.accepted_output_modes)
        if c.history_length is not None:
            config.history_length = c.history_length
        if c.return_immediately:
            config.return_immediately = True
    if request.metadata:
        out.metadata.update(request.metadata)
    return out


# --- upb + conversion: a2a_pb2 -> our Structs (constructors + msgspec.convert's checks) -------

_INT_DOUBLE_LIMIT: Final = 2**53
_MIN_SECONDS: Final = -62135596800
_MAX_SECONDS: Final = 253402300799


class _InvalidError(Exception):
    """A valid encoding of an invalid value (answered as DecodeError)."""


def _required(value: str, name: str) -> str:
    if not value:
        raise _InvalidError(f"Expected `str` of length >= 1 - at `$.{name}`")
    return value


def value_from_pb(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value
    if kind == "number_value":
        number = value.number_value
        if number.is_integer() and abs(number) < _INT_DOUBLE_LIMIT:
            return int(number)
        return number
    if kind == "bool_value":
        return value.bool_value
    if kind == "struct_value":
        return struct_from_pb(value.struct_value)
    if kind == "list_value":
        return [value_from_pb(v) for v in value.list_value.values]
    return None


def struct_from_pb(value: struct_pb2.Struct) -> dict[str, Any]:
    return {key: value_from_pb(v) for key, v in value.fields.items()}


def timestamp_from_pb(value: timestamp_pb2.Timestamp) -> dt.datetime:
    seconds, nanos = value.seconds, value.nanos
    if not (_MIN_SECONDS <= seconds <= _MAX_SECONDS and 0 <= nanos < 1_000_000_000):
        raise _InvalidError("timestamp out of range")
    return _EPOCH + dt.timedelta(seconds=seconds, microseconds=nanos // 1000)


def part_from_pb(part: pb.Part) -> Part:
    kind = part.WhichOneof("content")
    metadata = struct_from_pb(part.metadata) if part.HasField("metadata") else {}
    if kind == "text":
        return Part(
            text=part.text, metadata=metadata, filename=part.filename, media_type=part.media_type
        )
    if kind == "raw":
        return Part(
            raw=part.raw, metadata=metadata, filename=part.filename, media_type=part.media_type
        )
    if kind == "url":
        return Part(
            url=part.url, metadata=metadata, filename=part.filename, media_type=part.media_type
        )
    if kind == "data":
        return Part(
            data=value_from_pb(part.data),
            metadata=metadata,
            filename=part.filename,
            media_type=part.media_type,
        )
    # No member set: the constructor's oneof check refuses it, as convert does.
    return Part(metadata=metadata, filename=part.filename, media_type=part.media_type)


def _parts(parts: Any, name: str) -> list[Part]:
    if not parts:
        raise _InvalidError(f"Expected `array` of length >= 1 - at `$.{name}`")
    return [part_from_pb(p) for p in parts]


def message_from_pb(message: pb.Message) -> Message:
    role = _ROLE_FROM_PB.get(message.role)
    if role is None:
        raise _InvalidError(f"unknown Role value {message.role}")
    return Message(  # __post_init__ refuses ROLE_UNSPECIFIED
        message_id=_required(message.message_id, "messageId"),
        context_id=message.context_id,
        task_id=message.task_id,
        role=role,
        parts=_parts(message.parts, "parts"),
        metadata=struct_from_pb(message.metadata) if message.HasField("metadata") else {},
        extensions=list(message.extensions),
        reference_task_ids=list(message.reference_task_ids),
    )


def status_from_pb(status: pb.TaskStatus) -> TaskStatus:
    state = _STATE_FROM_PB.get(status.state)
    if state is None:
        raise _InvalidError(f"unknown TaskState value {status.state}")
    return TaskStatus(
        state=state,
        message=message_from_pb(status.message) if status.HasField("message") else None,
        timestamp=timestamp_from_pb(status.timestamp) if status.HasField("timestamp") else None,
    )


def artifact_from_pb(artifact: pb.Artifact) -> Artifact:
    return Artifact(
        artifact_id=_required(artifact.artifact_id, "artifactId"),
        name=artifact.name,
        description=artifact.description,
        parts=_parts(artifact.parts, "parts"),
        metadata=struct_from_pb(artifact.metadata) if artifact.HasField("metadata") else {},
        extensions=list(artifact.extensions),
    )


def task_from_pb(task: pb.Task) -> Task:
    if not task.HasField("status"):
        raise _InvalidError("Object missing required field `status`")
    return Task(
        id=_required(task.id, "id"),
        context_id=task.context_id,
        status=status_from_pb(task.status),
        artifacts=[artifact_from_pb(a) for a in task.artifacts],
        history=[message_from_pb(m) for m in task.history],
        metadata=struct_from_pb(task.metadata) if task.HasField("metadata") else {},
    )


def stream_response_from_pb(event: pb.StreamResponse) -> StreamResponse:
    kind = event.WhichOneof("payload")
    if kind == "artifact_update":
        a = event.artifact_update
        if not a.HasField("artifact"):
            raise _InvalidError("Object missing required field `artifact`")
        return StreamResponse(
            artifact_update=TaskArtifactUpdateEvent(
                task_id=_required(a.task_id, "taskId"),
                context_id=_required(a.context_id, "contextId"),
                artifact=artifact_from_pb(a.artifact),
                append=a.append,
                last_chunk=a.last_chunk,
                metadata=struct_from_pb(a.metadata) if a.HasField("metadata") else {},
            )
        )
    if kind == "status_update":
        s = event.status_update
        if not s.HasField("status"):
            raise _InvalidError("Object missing required field `status`")
        return StreamResponse(
            status_update=TaskStatusUpdateEvent(
                task_id=_required(s.task_id, "taskId"),
                context_id=_required(s.context_id, "contextId"),
                status=status_from_pb(s.status),
                metadata=struct_from_pb(s.metadata) if s.HasField("metadata") else {},
            )
        )
    if kind == "task":
        return StreamResponse(task=task_from_pb(event.task))
    if kind == "message":
        return StreamResponse(message=message_from_pb(event.message))
    return StreamResponse()  # none set: the oneof check refuses it


def send_request_from_pb(request: pb.SendMessageRequest) -> SendMessageRequest:
    if not request.HasField("message"):
        raise _InvalidError("Object missing required field `message`")
    configuration = None
    if request.HasField("configuration"):
        c = request.configuration
        if c.HasField("task_push_notification_config"):
            raise NotImplementedError("push configs: not in the measured values")
        history_length = c.history_length if c.HasField("history_length") else None
        if history_length is not None and history_length < 0:
            raise _InvalidError("Expected `int` >= 0 - at `$.configuration.historyLength`")
        configuration = SendMessageConfiguration(
            accepted_output_modes=list(c.accepted_output_modes),
            history_length=history_length,
            return_immediately=c.return_immediately,
        )
    return SendMessageRequest(
        tenant=request.tenant,
        message=message_from_pb(request.message),
        configuration=configuration,
        metadata=struct_from_pb(request.metadata) if request.HasField("metadata") else {},
    )


# --- upb + convert: a2a_pb2 -> ProtoJSON tree -> msgspec.convert ------------------------------


def part_tree(part: pb.Part) -> dict[str, Any]:
    kind = part.WhichOneof("content")
    tree: dict[str, Any] = {}
    if kind == "text":
        tree["text"] = part.text
    elif kind == "raw":
        tree["raw"] = part.raw
    elif kind == "url":
        tree["url"] = part.url
    elif kind == "data":
        tree["data"] = value_from_pb(part.data)
    if part.HasField("metadata"):
        tree["metadata"] = struct_from_pb(part.metadata)
    if part.filename:
        tree["filename"] = part.filename
    if part.media_type:
        tree["mediaType"] = part.media_type
    return tree


def message_tree(message: pb.Message) -> dict[str, Any]:
    names = pb.Role.Name
    try:
        role = names(message.role)
    except ValueError:
        raise _InvalidError(f"unknown Role value {message.role}") from None
    tree: dict[str, Any] = {
        "messageId": message.message_id,
        "contextId": message.context_id,
        "taskId": message.task_id,
        "role": role,
        "parts": [part_tree(p) for p in message.parts],
        "extensions": list(message.extensions),
        "referenceTaskIds": list(message.reference_task_ids),
    }
    if message.HasField("metadata"):
        tree["metadata"] = struct_from_pb(message.metadata)
    return tree


def status_tree(status: pb.TaskStatus) -> dict[str, Any]:
    try:
        tree: dict[str, Any] = {"state": pb.TaskState.Name(status.state)}
    except ValueError:
        raise _InvalidError(f"unknown TaskState value {status.state}") from None
    if status.HasField("message"):
        tree["message"] = message_tree(status.message)
    if status.HasField("timestamp"):
        tree["timestamp"] = timestamp_from_pb(status.timestamp)
    return tree


def artifact_tree(artifact: pb.Artifact) -> dict[str, Any]:
    tree: dict[str, Any] = {
        "artifactId": artifact.artifact_id,
        "name": artifact.name,
        "description": artifact.description,
        "parts": [part_tree(p) for p in artifact.parts],
        "extensions": list(artifact.extensions),
    }
    if artifact.HasField("metadata"):
        tree["metadata"] = struct_from_pb(artifact.metadata)
    return tree


def task_tree(task: pb.Task) -> dict[str, Any]:
    tree: dict[str, Any] = {
        "id": task.id,
        "contextId": task.context_id,
        "artifacts": [artifact_tree(a) for a in task.artifacts],
        "history": [message_tree(m) for m in task.history],
    }
    if task.HasField("status"):
        tree["status"] = status_tree(task.status)
    if task.HasField("metadata"):
        tree["metadata"] = struct_from_pb(task.metadata)
    return tree


def stream_response_tree(event: pb.StreamResponse) -> dict[str, Any]:
    kind = event.WhichOneof("payload")
    if kind == "artifact_update":
        a = event.artifact_update
        update: dict[str, Any] = {
            "taskId": a.task_id,
            "contextId": a.context_id,
            "append": a.append,
            "lastChunk": a.last_chunk,
        }
        if a.HasField("artifact"):
            update["artifact"] = artifact_tree(a.artifact)
        if a.HasField("metadata"):
            update["metadata"] = struct_from_pb(a.metadata)
        return {"artifactUpdate": update}
    if kind == "status_update":
        s = event.status_update
        change: dict[str, Any] = {"taskId": s.task_id, "contextId": s.context_id}
        if s.HasField("status"):
            change["status"] = status_tree(s.status)
        if s.HasField("metadata"):
            change["metadata"] = struct_from_pb(s.metadata)
        return {"statusUpdate": change}
    if kind == "task":
        return {"task": task_tree(event.task)}
    if kind == "message":
        return {"message": message_tree(event.message)}
    return {}


def send_request_tree(request: pb.SendMessageRequest) -> dict[str, Any]:
    tree: dict[str, Any] = {"tenant": request.tenant}
    if request.HasField("message"):
        tree["message"] = message_tree(request.message)
    if request.HasField("configuration"):
        c = request.configuration
        if c.HasField("task_push_notification_config"):
            raise NotImplementedError("push configs: not in the measured values")
        config: dict[str, Any] = {
            "acceptedOutputModes": list(c.accepted_output_modes),
            "returnImmediately": c.return_immediately,
        }
        if c.HasField("history_length"):
            config["historyLength"] = c.history_length
        tree["configuration"] = config
    if request.HasField("metadata"):
        tree["metadata"] = struct_from_pb(request.metadata)
    return tree


# --- the codecs under test -----------------------------------------------------------------


@dataclass(frozen=True)
class Conversion:
    """The a2a_pb2 class of one of our Structs and its conversions both ways."""

    pb_class: Any
    to_pb: Callable[[Any], Any]
    from_pb: Callable[[Any], Any]
    tree: Callable[[Any], dict[str, Any]]


CONVERSIONS: Final[dict[type, Conversion]] = {
    Message: Conversion(pb.Message, message_to_pb, message_from_pb, message_tree),
    Task: Conversion(pb.Task, task_to_pb, task_from_pb, task_tree),
    StreamResponse: Conversion(
        pb.StreamResponse, stream_response_to_pb, stream_response_from_pb, stream_response_tree
    ),
    SendMessageRequest: Conversion(
        pb.SendMessageRequest, send_request_to_pb, send_request_from_pb, send_request_tree
    ),
}


def _wrap(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except pb_message.DecodeError as exc:
        raise DecodeError(f"Invalid protobuf message: {exc}", malformed_json=True) from None
    except (_InvalidError, ValueError, msgspec.ValidationError) as exc:
        raise DecodeError(str(exc), malformed_json=False) from None


def conv_encode(value: Any) -> bytes:
    data: bytes = CONVERSIONS[type(value)].to_pb(value).SerializeToString()
    return data


def conv_decode(data: bytes, type_: type) -> Any:
    conversion = CONVERSIONS[type_]
    try:
        return conversion.from_pb(conversion.pb_class.FromString(data))
    except pb_message.DecodeError as exc:
        raise DecodeError(f"Invalid protobuf message: {exc}", malformed_json=True) from None
    except (_InvalidError, ValueError) as exc:
        raise DecodeError(str(exc), malformed_json=False) from None


def convert_decode(data: bytes, type_: type) -> Any:
    conversion = CONVERSIONS[type_]
    try:
        return msgspec.convert(conversion.tree(conversion.pb_class.FromString(data)), type_)
    except pb_message.DecodeError as exc:
        raise DecodeError(f"Invalid protobuf message: {exc}", malformed_json=True) from None
    except (_InvalidError, msgspec.ValidationError) as exc:
        raise DecodeError(str(exc), malformed_json=False) from None


#: (key, label): the codecs of the tables, in order.
CODECS: Final = (
    ("ours", "ours"),
    ("conv", "upb+conv"),
    ("convert", "upb+convert"),
    ("upb", "upb alone"),
    ("json", "json"),
)


def encoders(value: Any) -> dict[str, tuple[Callable[[Any], Any], Any]]:
    """Per codec: (function, argument) that encodes ``value``."""
    message = CONVERSIONS[type(value)].pb_class.FromString(grpc_codec.encode(value))
    return {
        "ours": (grpc_codec.encode, value),
        "conv": (conv_encode, value),
        "upb": (type(message).SerializeToString, message),
        "json": (json_codec.encode, value),
    }


def decoders(value: Any) -> dict[str, tuple[Callable[[Any], Any], Any]]:
    """Per codec: (function, argument) that decodes ``value``'s encoding."""
    type_ = type(value)
    data = grpc_codec.encode(value)
    text = json_codec.encode(value)
    pb_class = CONVERSIONS[type_].pb_class
    return {
        "ours": (lambda d: grpc_codec.decode(d, type_), data),
        "conv": (lambda d: conv_decode(d, type_), data),
        "convert": (lambda d: convert_decode(d, type_), data),
        "upb": (pb_class.FromString, data),
        "json": (lambda d: json_codec.decode(d, type_), text),
    }


# --- the checks ------------------------------------------------------------------------------


@dataclass
class Checked:
    kind: str
    pb_bytes: int
    json_bytes: int
    identical: bool
    """ours and upb+conv encode the very same bytes (else: upb-equal, in another order)."""


def check_value(kind: Kind) -> Checked:
    """Ours and the conversion agree on ``kind``'s value, both ways; or raise."""
    value = kind.make()
    type_ = type(value)
    pb_class = CONVERSIONS[type_].pb_class
    ours, theirs = grpc_codec.encode(value), conv_encode(value)
    if pb_class.FromString(ours) != pb_class.FromString(theirs):
        raise AssertionError(f"{kind.key}: ours and upb+conv encode different messages")
    checks: tuple[tuple[str, Callable[[bytes], Any]], ...] = (
        ("ours", lambda d: grpc_codec.decode(d, type_)),
        ("upb+conv", lambda d: conv_decode(d, type_)),
        ("upb+convert", lambda d: convert_decode(d, type_)),
    )
    for name, decode in checks:
        for source, data in (("ours", ours), ("upb+conv", theirs)):
            got = decode(data)
            if got != value:
                raise AssertionError(f"{kind.key}: {name} decodes {source}'s bytes differently")
    if json_codec.decode(json_codec.encode(value), type_) != value:
        raise AssertionError(f"{kind.key}: the JSON codec does not round-trip")
    return Checked(kind.key, len(ours), len(json_codec.encode(value)), ours == theirs)


def _invalid_messages() -> list[tuple[str, type, bytes]]:
    """Valid encodings of invalid values: every decoder must refuse each one."""
    text = pb.Part(text="hi")
    good = pb.Message(message_id="m", role=pb.ROLE_USER, parts=[text])
    status = pb.TaskStatus(state=pb.TASK_STATE_WORKING)
    artifact = pb.Artifact(artifact_id="a", parts=[text])
    unknown_role: Any = 7  # numbers no enum of a2a.proto has
    unknown_state: Any = 42
    cases: list[tuple[str, type, Any]] = [
        ("empty messageId", Message, pb.Message(role=pb.ROLE_USER, parts=[text])),
        ("no parts", Message, pb.Message(message_id="m", role=pb.ROLE_USER)),
        ("role unspecified", Message, pb.Message(message_id="m", parts=[text])),
        ("unknown role", Message, pb.Message(message_id="m", role=unknown_role, parts=[text])),
        ("part without content", Message,
         pb.Message(message_id="m", role=pb.ROLE_USER, parts=[pb.Part(filename="f")])),
        ("empty task id", Task, pb.Task(status=status)),
        ("task without status", Task, pb.Task(id="t")),
        ("unknown state", Task, pb.Task(id="t", status=pb.TaskStatus(state=unknown_state))),
        ("timestamp out of range", Task, pb.Task(
            id="t", status=pb.TaskStatus(
                state=pb.TASK_STATE_WORKING,
                timestamp=timestamp_pb2.Timestamp(seconds=_MAX_SECONDS + 1)))),
        ("artifact without parts", Task,
         pb.Task(id="t", status=status, artifacts=[pb.Artifact(artifact_id="a")])),
        ("empty artifactId", Task,
         pb.Task(id="t", status=status, artifacts=[pb.Artifact(parts=[text])])),
        ("bad history message", Task,
         pb.Task(id="t", status=status, history=[pb.Message(message_id="m", parts=[text])])),
        ("empty stream response", StreamResponse, pb.StreamResponse()),
        ("chunk without taskId", StreamResponse, pb.StreamResponse(
            artifact_update=pb.TaskArtifactUpdateEvent(context_id="c", artifact=artifact))),
        ("chunk without artifact", StreamResponse, pb.StreamResponse(
            artifact_update=pb.TaskArtifactUpdateEvent(task_id="t", context_id="c"))),
        ("status update without contextId", StreamResponse, pb.StreamResponse(
            status_update=pb.TaskStatusUpdateEvent(task_id="t", status=status))),
        ("request without message", SendMessageRequest, pb.SendMessageRequest(tenant="x")),
        ("request with a bad message", SendMessageRequest,
         pb.SendMessageRequest(message=pb.Message(role=pb.ROLE_USER, parts=[text]))),
    ]  # fmt: skip
    out = [(name, type_, message.SerializeToString()) for name, type_, message in cases]
    out.append(("truncated", Message, good.SerializeToString()[:-3]))
    return out


def check_refusals() -> int:
    """Every decoder refuses each invalid message with a DecodeError; how many were tried."""
    invalid = _invalid_messages()
    for name, type_, data in invalid:
        for label, decode in (
            ("ours", grpc_codec.decode),
            ("upb+conv", conv_decode),
            ("upb+convert", convert_decode),
        ):
            try:
                decode(data, type_)
            except DecodeError:
                continue
            raise AssertionError(f"{label} accepts an invalid message: {name}")
    return len(invalid)


# --- timing ----------------------------------------------------------------------------------


def time_call(function: Callable[[Any], Any], argument: Any, target_ns: int, repeats: int) -> float:
    """µs per call: the median of ``repeats`` loops, each of as many calls as fill
    ``target_ns`` (found by a first, growing loop)."""
    clock = time.perf_counter_ns
    number = 1
    while True:
        started = clock()
        for _ in itertools.repeat(None, number):
            function(argument)
        elapsed = clock() - started
        if elapsed >= target_ns // 4:
            break
        number *= 4
    number = max(1, int(number * target_ns / max(elapsed, 1)))
    samples = []
    for _ in range(repeats):
        started = clock()
        for _ in itertools.repeat(None, number):
            function(argument)
        samples.append((clock() - started) / number)
    return statistics.median(samples) / 1000


@dataclass
class Result:
    kind: str
    encode_us: dict[str, float]
    decode_us: dict[str, float]


def measure(kinds: list[Kind], target_ms: float, repeats: int) -> list[Result]:
    target_ns = int(target_ms * 1e6)
    results = []
    for kind in kinds:
        value = kind.make()
        encode = {k: time_call(f, a, target_ns, repeats) for k, (f, a) in encoders(value).items()}
        decode = {k: time_call(f, a, target_ns, repeats) for k, (f, a) in decoders(value).items()}
        results.append(Result(kind.key, encode, decode))
        print(
            f"   {kind.key:9} encode "
            + "  ".join(f"{k} {v:6.2f}" for k, v in encode.items())
            + "  | decode "
            + "  ".join(f"{k} {v:6.2f}" for k, v in decode.items()),
            file=sys.stderr,
            flush=True,
        )
    return results


# --- output ----------------------------------------------------------------------------------


def _us(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _x(a: float | None, b: float | None) -> str:
    if not a or not b:
        return "-"
    r = a / b
    return f"{r:.2f}x" if r < 10 else f"{r:.0f}x"


def render_table(title: str, header: list[str], body: list[list[str]], markdown: bool) -> list[str]:
    if markdown:
        return [
            f"**{title}**",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|",
            *("| " + " | ".join(cells) + " |" for cells in body),
            "",
        ]
    widths = [max(len(c[i]) for c in [header, *body]) for i in range(len(header))]
    lines = [title]
    for cells in [header, *body]:
        lines.append(
            "  ".join(
                c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(cells)
            )
        )
    return [*lines, ""]


def render(results: list[Result], checked: dict[str, Checked], markdown: bool) -> str:
    lines: list[str] = []
    sizes = [
        [
            r.kind,
            f"{checked[r.kind].pb_bytes:,}",
            f"{checked[r.kind].json_bytes:,}",
            f"{checked[r.kind].pb_bytes / checked[r.kind].json_bytes:.2f}",
            "yes" if checked[r.kind].identical else "no (upb-equal)",
        ]
        for r in results
    ]
    lines += render_table(
        "Encoded sizes (bytes)",
        ["kind", "protobuf", "JSON", "pb ÷ JSON", "ours = upb+conv bytes"],
        sizes,
        markdown,
    )
    encode_keys = ["ours", "conv", "upb", "json"]
    labels = dict(CODECS)
    body = [
        [
            r.kind,
            *(_us(r.encode_us.get(k)) for k in encode_keys),
            _x(r.encode_us["conv"], r.encode_us["ours"]),
            _x(r.encode_us["upb"], r.encode_us["ours"]),
        ]
        for r in results
    ]
    lines += render_table(
        "Encode, Struct -> bytes (µs per call, median of the repeats)",
        ["kind", *(labels[k] for k in encode_keys), "upb+conv ÷ ours", "upb ÷ ours"],
        body,
        markdown,
    )
    decode_keys = ["ours", "conv", "convert", "upb", "json"]
    body = [
        [
            r.kind,
            *(_us(r.decode_us.get(k)) for k in decode_keys),
            _x(r.decode_us["conv"], r.decode_us["ours"]),
            _x(r.decode_us["convert"], r.decode_us["ours"]),
            _x(r.decode_us["upb"], r.decode_us["ours"]),
        ]
        for r in results
    ]
    lines += render_table(
        "Decode, bytes -> validated Struct (µs per call, median of the repeats; upb alone: "
        "bytes -> a2a_pb2 message, nothing validated or converted)",
        [
            "kind",
            *(labels[k] for k in decode_keys),
            "upb+conv ÷ ours",
            "upb+convert ÷ ours",
            "upb ÷ ours",
        ],
        body,
        markdown,
    )
    round_trip = [
        [
            r.kind,
            _us(r.encode_us["ours"] + r.decode_us["ours"]),
            _us(r.encode_us["conv"] + r.decode_us["conv"]),
            _us(r.encode_us["upb"] + r.decode_us["upb"]),
            _us(r.encode_us["json"] + r.decode_us["json"]),
            _x(
                r.encode_us["conv"] + r.decode_us["conv"], r.encode_us["ours"] + r.decode_us["ours"]
            ),
        ]
        for r in results
    ]
    lines += render_table(
        "Encode + decode (µs)",
        ["kind", "ours", "upb+conv", "upb alone", "json", "upb+conv ÷ ours"],
        round_trip,
        markdown,
    )
    return "\n".join(lines)


VERSIONS: Final = ("a2aserve-core", "a2a-sdk", "protobuf", "msgspec", "grpcio")


def describe(args: argparse.Namespace, pinned: bool, refusals: int, seconds: float) -> str:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(
                (line.split(":", 1)[1].strip() for line in f if line.startswith("model name")),
                cpu,
            )
    except OSError:
        pass
    versions = []
    for name in VERSIONS:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions.append(f"{name} {metadata.version(name)}")
    load = "/".join(f"{x:.2f}" for x in os.getloadavg())
    return "\n".join(
        [
            f"- Command: `{' '.join(['uv run python bench/grpc_codec.py', *sys.argv[1:]])}`",
            f"- Machine: {cpu}, {os.cpu_count()} cores, Linux {platform.release()}, "
            f"CPython {platform.python_version()}; load average after: {load}; "
            f"{'pinned to core 0' if pinned else 'not pinned'}; {seconds:.0f} s.",
            f"- protobuf backend: `api_implementation.Type()` = "
            f"{api_implementation.Type()!r}. Versions: {', '.join(versions)}.",
            f"- Each cell: µs per call, the median of {args.repeats} loops of "
            f"~{args.target_ms:g} ms each (time.perf_counter_ns), garbage collector on.",
            "- Checked first: ours and upb+conv encode upb-equal messages; ours, upb+conv and "
            "upb+convert decode both encodings into the very Struct encoded; JSON round-trips; "
            f"all three decoders refuse the same {refusals} invalid messages.",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="loops per cell (the median)")
    parser.add_argument("--target-ms", type=float, default=30, help="ms per loop")
    parser.add_argument(
        "--kinds", default=",".join(k.key for k in KINDS), help="message,send,task-1,..."
    )
    parser.add_argument("--markdown", action="store_true", help="Markdown tables")
    parser.add_argument("--no-pin", action="store_true", help="do not pin to core 0")
    parser.add_argument("--check-only", action="store_true", help="the checks, no timing")
    args = parser.parse_args(argv)
    by_key = {k.key: k for k in KINDS}
    unknown = [k for k in args.kinds.split(",") if k not in by_key]
    if unknown:
        parser.error(f"unknown kinds: {', '.join(unknown)} (known: {', '.join(by_key)})")
    kinds = [by_key[k] for k in args.kinds.split(",")]
    pinned = False
    if not args.no_pin and hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {0})
        pinned = True
    print(f"protobuf backend: {api_implementation.Type()}", file=sys.stderr)
    started = time.monotonic()
    checked = {k.key: check_value(k) for k in kinds}
    refusals = check_refusals()
    print(f"checks passed ({len(kinds)} values, {refusals} refusals)", file=sys.stderr)
    if args.check_only:
        return
    results = measure(kinds, args.target_ms, args.repeats)
    print()
    print(describe(args, pinned, refusals, time.monotonic() - started))
    print()
    print("Kinds: " + "; ".join(f"`{k.key}`: {k.title}" for k in kinds) + ".")
    print()
    print(render(results, checked, args.markdown))


if __name__ == "__main__":
    main()
