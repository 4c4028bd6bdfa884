"""What the command line prints: v1.0 ProtoJSON for ``-o json``, readable text otherwise."""

from __future__ import annotations

from typing import Any, TextIO

from a2a_core._protocol import codec
from a2a_core._protocol.client import AgentError, ReceivedEvent
from a2a_core.types import (
    AgentCard,
    ListTasksResponse,
    Message,
    Part,
    Task,
    TaskState,
)

__all__ = ["Printer"]


def _part_text(part: Part) -> str:
    if isinstance(part.text, str):
        return part.text
    label = part.filename or part.media_type or "file"
    if isinstance(part.url, str):
        return f"[{label}: {part.url}]"
    if isinstance(part.raw, bytes):
        return f"[{label}: {len(part.raw)} bytes]"
    return f"[data: {codec.encode(part.data).decode()}]"


def _parts_text(parts: list[Part]) -> str:
    return "\n".join(_part_text(part) for part in parts)


def _state(state: TaskState) -> str:
    return state.value.removeprefix("TASK_STATE_").lower().replace("_", "-")


class Printer:
    """Prints results in the chosen format; a stream's events one by one."""

    def __init__(self, out: TextIO, err: TextIO, *, json_output: bool) -> None:
        self.out = out
        self.err = err
        self.json = json_output

    def value(self, value: Any) -> None:
        """A result: its ProtoJSON, or a readable summary."""
        if self.json:
            self.out.write(codec.encode(value).decode() + "\n")
        elif isinstance(value, AgentCard):
            self._card(value)
        elif isinstance(value, Task):
            self._task(value)
        elif isinstance(value, Message):
            self.out.write(_parts_text(value.parts) + "\n")
        elif isinstance(value, ListTasksResponse):
            self._list(value)
        else:
            self.out.write(codec.encode(value).decode() + "\n")
        self.out.flush()

    def event(self, received: ReceivedEvent) -> None:
        """One stream event: a line of JSON (with ``eventId`` when the server gave one), or
        its text as it arrives."""
        if self.json:
            encoded = codec.encode(received.event)
            if received.event_id is not None:
                encoded = b'{"eventId":' + codec.encode(received.event_id) + b"," + encoded[1:]
            self.out.write(encoded.decode() + "\n")
            self.out.flush()
            return
        event = received.event
        if event.message is not None:
            self.out.write(_parts_text(event.message.parts) + "\n")
        elif event.task is not None:
            task = event.task
            self.out.write(f"task {task.id} {_state(task.status.state)}\n")
            if task.status.message is not None:
                self.out.write(_parts_text(task.status.message.parts) + "\n")
        elif event.status_update is not None:
            status = event.status_update.status
            line = f"[{_state(status.state)}]"
            if status.message is not None:
                line += " " + _parts_text(status.message.parts)
            self.out.write(line + "\n")
        elif event.artifact_update is not None:
            self.out.write(_parts_text(event.artifact_update.artifact.parts) + "\n")
        self.out.flush()

    def agent_error(self, error: AgentError) -> None:
        """The agent's error on stderr: its reason, its code and its message."""
        parts = [
            p for p in (error.reason, str(error.code) if error.code is not None else None) if p
        ]
        label = " ".join(parts) if parts else f"HTTP {error.http_status}"
        self.err.write(f"error: {label}: {error.message}\n")

    def _task(self, task: Task) -> None:
        texts = []
        if task.status.message is not None:
            texts.append(_parts_text(task.status.message.parts))
        texts.extend(_parts_text(artifact.parts) for artifact in task.artifacts)
        for text in texts:
            if text:
                self.out.write(text + "\n")
        self.out.write(f"task {task.id} {_state(task.status.state)}")
        self.out.write(f" (context {task.context_id})\n" if task.context_id else "\n")

    def _card(self, card: AgentCard) -> None:
        write = self.out.write
        write(f"{card.name} {card.version}\n{card.description}\n")
        for interface in card.supported_interfaces:
            tenant = f" tenant {interface.tenant}" if interface.tenant else ""
            write(
                f"  {interface.protocol_binding} {interface.protocol_version} "
                f"{interface.url}{tenant}\n"
            )
        capabilities = card.capabilities
        offered = [
            name
            for name, on in (
                ("streaming", capabilities.streaming),
                ("push notifications", capabilities.push_notifications),
                ("extended card", capabilities.extended_agent_card),
            )
            if on
        ]
        if offered:
            write(f"capabilities: {', '.join(offered)}\n")
        for skill in card.skills:
            write(f"skill {skill.id}: {skill.name} - {skill.description}\n")

    def _list(self, page: ListTasksResponse) -> None:
        for task in page.tasks:
            context = f"  context {task.context_id}" if task.context_id else ""
            self.out.write(f"{task.id}  {_state(task.status.state)}{context}\n")
        shown = f"{len(page.tasks)} of {page.total_size} tasks"
        self.out.write(
            shown + (f"; next page: {page.next_page_token}\n" if page.next_page_token else "\n")
        )
