"""What the command line prints: v1.0 ProtoJSON for ``-o json``, readable text otherwise.

Everything printed comes from the agent, which may be hostile: a terminal obeys the escape
sequences in what it is given (OSC 52 writes the clipboard, others clear the screen, set
the window's title, hide a link behind text). So every line goes out through
`escape_controls`, and ``-o json`` escapes what JSON itself lets through (DEL, C1).
"""

from __future__ import annotations

from typing import Any, Final, TextIO

import msgspec

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

__all__ = ["Printer", "escape_controls"]

#: Every control character a terminal may act on (C0 but newline and tab, DEL, C1), and the
#: bidirectional overrides, shown as their Python escapes: ``\x1b]52;...`` prints as the
#: text ``\x1b]52;...``.
_VISIBLE: Final = {
    code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0)) if chr(code) not in "\n\t"
} | {
    # Bidirectional embeddings, overrides and isolates: a terminal does not act on them,
    # but they reorder what it shows ("Trojan Source"). Joiners and marks that scripts and
    # emoji need (U+200C, U+200D, U+200E...) are left alone.
    code: f"\\u{code:04x}"
    for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
}
#: What JSON leaves raw in a string (it escapes only C0): DEL and C1, as JSON escapes,
#: which decode to the same text.
_JSON_UNESCAPED: Final = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


def escape_controls(text: str) -> str:
    """``text`` with each control character a terminal would obey made visible, so that
    an agent's reply is read, never executed; newlines and tabs are kept for layout."""
    return text.translate(_VISIBLE)


def _json_line(value: Any) -> str:
    """``value``'s ProtoJSON, exact, with no raw control character left in it."""
    return codec.encode(value).decode().translate(_JSON_UNESCAPED) + "\n"


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
    """Prints results in the chosen format; a stream's events one by one. Every write,
    errors included, goes through `_say` or `error`, never straight to a stream."""

    def __init__(self, out: TextIO, err: TextIO, *, json_output: bool) -> None:
        self.out = out
        self.err = err
        self.json = json_output

    def value(self, value: Any) -> None:
        """A result: its ProtoJSON, or a readable summary."""
        if self.json:
            self.out.write(_json_line(value))
        elif isinstance(value, AgentCard):
            self._card(value)
        elif isinstance(value, Task):
            self._task(value)
        elif isinstance(value, Message):
            self._say(_parts_text(value.parts) + "\n")
        elif isinstance(value, ListTasksResponse):
            self._list(value)
        else:
            self._say(codec.encode(value).decode() + "\n")
        self.out.flush()

    def event(self, received: ReceivedEvent) -> None:
        """One stream event: a line of JSON (with ``eventId`` when the server gave one), or
        its text as it arrives."""
        if self.json:
            self.out.write(_json_line(_with_event_id(received)))
        else:
            self._event_text(received)
        self.out.flush()

    def agent_error(self, error: AgentError) -> None:
        """The agent's error on stderr: its reason, its code and its message."""
        parts = [
            p for p in (error.reason, str(error.code) if error.code is not None else None) if p
        ]
        label = " ".join(parts) if parts else f"HTTP {error.http_status}"
        self.error(f"error: {label}: {error.message}")

    def error(self, line: str) -> None:
        """One line on stderr (an error's text may quote the agent: escaped as any)."""
        self.err.write(escape_controls(line) + "\n")
        self.err.flush()

    def _say(self, text: str) -> None:
        self.out.write(escape_controls(text))

    def _event_text(self, received: ReceivedEvent) -> None:
        event = received.event
        if event.message is not None:
            self._say(_parts_text(event.message.parts) + "\n")
        elif event.task is not None:
            task = event.task
            self._say(f"task {task.id} {_state(task.status.state)}\n")
            if task.status.message is not None:
                self._say(_parts_text(task.status.message.parts) + "\n")
        elif event.status_update is not None:
            status = event.status_update.status
            line = f"[{_state(status.state)}]"
            if status.message is not None:
                line += " " + _parts_text(status.message.parts)
            self._say(line + "\n")
        elif event.artifact_update is not None:
            self._say(_parts_text(event.artifact_update.artifact.parts) + "\n")

    def _task(self, task: Task) -> None:
        texts = []
        if task.status.message is not None:
            texts.append(_parts_text(task.status.message.parts))
        texts.extend(_parts_text(artifact.parts) for artifact in task.artifacts)
        for text in texts:
            if text:
                self._say(text + "\n")
        self._say(f"task {task.id} {_state(task.status.state)}")
        self._say(f" (context {task.context_id})\n" if task.context_id else "\n")

    def _card(self, card: AgentCard) -> None:
        say = self._say
        say(f"{card.name} {card.version}\n{card.description}\n")
        for interface in card.supported_interfaces:
            tenant = f" tenant {interface.tenant}" if interface.tenant else ""
            say(
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
            say(f"capabilities: {', '.join(offered)}\n")
        for skill in card.skills:
            say(f"skill {skill.id}: {skill.name} - {skill.description}\n")

    def _list(self, page: ListTasksResponse) -> None:
        for task in page.tasks:
            context = f"  context {task.context_id}" if task.context_id else ""
            self._say(f"{task.id}  {_state(task.status.state)}{context}\n")
        shown = f"{len(page.tasks)} of {page.total_size} tasks"
        self._say(
            shown + (f"; next page: {page.next_page_token}\n" if page.next_page_token else "\n")
        )


def _with_event_id(received: ReceivedEvent) -> Any:
    """The event as JSON to print: its ``StreamResponse``, with the ``eventId`` the server
    gave it first (a client resumes from it with ``--last-event-id``)."""
    if received.event_id is None:
        return received.event
    encoded = codec.encode(received.event)
    return msgspec.Raw(b'{"eventId":' + codec.encode(received.event_id) + b"," + encoded[1:])
