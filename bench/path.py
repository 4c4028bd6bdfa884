"""Which files of the core one blocking SendMessage passes through, and how often it returns.

    uv run python bench/path.py [--binding jsonrpc|rest] [--version 1.0|0.3]

Runs the request through ``A2AServer.handle`` (no HTTP: the adapter's part is not counted)
with the benchmarks' echo agent and default in-memory backend, after a warm-up, and follows
it with ``sys.setprofile``: every Python function it calls, in the core and beyond. Prints

- the files of ``a2a_core`` it enters, in the order first entered (the list
  docs/architecture.md gives, and ``tests/docs/test_architecture.py`` checks);
- the number of Python function calls, in the core and in all;
- how many times control comes back to a core file it had left, and to which: each step
  from one core file into another counts one entry, and an entry into a file seen before is
  a return to it. A short, single path goes down once and comes back once.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import servers

import a2a_core
from a2a_core.http import Headers, HttpRequest

CORE = Path(a2a_core.__file__).parent


def send_request(binding: str = "jsonrpc", version: str = "1.0") -> HttpRequest:
    """A blocking SendMessage of a small text message, as an adapter would build it; a new
    ``messageId`` each time (the same one again is answered from the store: idempotent
    sends)."""
    if version == "0.3":
        message: dict[str, Any] = {
            "kind": "message",
            "messageId": uuid.uuid4().hex,
            "role": "user",
            "parts": [{"kind": "text", "text": "hello"}],
        }
    else:
        message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    params = {"message": message}
    if binding == "rest":
        path = "/message:send" if version == "1.0" else "/v1/message:send"
        body = json.dumps(params).encode()
    else:
        path = "/"
        method = "SendMessage" if version == "1.0" else "message/send"
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    headers = [(b"content-type", b"application/json"), (b"a2a-version", version.encode())]
    return HttpRequest("POST", path, headers=Headers(headers), body=body)


class Trace:
    """The Python calls of one request: the core files entered, in order, and counts."""

    def __init__(self) -> None:
        self.files: list[str] = []  # the core file of each step, consecutive repeats merged
        self.calls = 0
        self.core_calls = 0

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        self.calls += 1
        name = frame.f_code.co_filename
        if not name.startswith(str(CORE)):
            return
        self.core_calls += 1
        relative = Path(name).relative_to(CORE).as_posix()
        if not self.files or self.files[-1] != relative:
            self.files.append(relative)

    def first_entered(self) -> list[str]:
        return list(dict.fromkeys(self.files))

    def returns(self) -> collections.Counter[str]:
        """Entries into a core file that had been entered before, per file."""
        seen: set[str] = set()
        counts: collections.Counter[str] = collections.Counter()
        for name in self.files:
            if name in seen:
                counts[name] += 1
            seen.add(name)
        return counts


async def trace_send(request: Callable[[], HttpRequest], warmup: int = 50) -> Trace:
    """The trace of one blocking send, after ``warmup`` of them."""
    server = servers.our_server("http://127.0.0.1:8000")
    trace = Trace()
    async with server:
        for _ in range(warmup):
            await server.handle(request())
        sys.setprofile(trace)
        try:
            response = await server.handle(request())
            # An agent run in a task of its own (Python 3.11) ends at the next turns.
            for _ in range(3):
                await asyncio.sleep(0)
        finally:
            sys.setprofile(None)
    assert response.status == 200, response
    return trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--binding", choices=("jsonrpc", "rest"), default="jsonrpc")
    parser.add_argument("--version", choices=("1.0", "0.3"), default="1.0")
    args = parser.parse_args()
    trace = asyncio.run(trace_send(lambda: send_request(args.binding, args.version)))
    returns = trace.returns()
    print(f"{len(trace.first_entered())} core files, in the order first entered:")
    for name in trace.first_entered():
        print(f"  {name}")
    print(f"{trace.core_calls} calls of core functions, {trace.calls} Python calls in all")
    print(f"{sum(returns.values())} returns to a core file left before:")
    for name, count in returns.most_common():
        print(f"  {count:3d}  {name}")


if __name__ == "__main__":
    main()
