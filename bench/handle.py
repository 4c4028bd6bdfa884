"""The whole server in process: blocking SendMessage through ``A2AServer.handle`` (L1 + L2).

    uv run python bench/handle.py [--requests 20000] [--warmup 2000] [--no-gc] [--uvloop]
        [--observer none|noop|otel] [--binding jsonrpc|grpc]

No HTTP: each request is the ``HttpRequest`` an adapter would build (``--binding grpc``: the
one ``a2a_grpc`` builds for a gRPC SendMessage, the request message in protobuf), answered by the
benchmarks' echo agent (``bench/servers.py``) with the default in-memory store and log, so
the task is created, the agent runs in the background, the artifact and the completion are
logged and stored, and the reply is encoded. Prints CPU microseconds per request and the
garbage collector's share (time in collections, per generation, and the longest pause).

Timings on a shared VM drift by tens of percent; for a before/after of a change, count
instructions instead, which do not vary: run under callgrind with two request counts and
divide the difference (``--no-gc``, so that collections falling in one run and not the
other do not count)::

    for n in 100 600; do valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$n \\
        .venv/bin/python bench/handle.py --requests $n --warmup 500 --no-gc; done
    # instructions per request = (total of 600 - total of 100) / 500
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import servers

from a2a_core.http import Headers, HttpRequest

BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": "m-0000000000",
                "role": "ROLE_USER",
                "parts": [{"text": "hello"}],
            }
        },
    }
).encode()
#: Each request gets a messageId of its own (the same one again is answered from the store:
#: idempotent sends), of the same length: this marker's place, a count.
MARKER = b"m-0000000000"
_count = itertools.count()


def fresh_id(body: bytes) -> bytes:
    """``body`` with the next messageId in place of `MARKER`."""
    return body.replace(MARKER, b"m-%010d" % next(_count))


RAW_HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"content-type", b"application/json"),
    (b"content-length", str(len(BODY)).encode()),
    (b"a2a-version", b"1.0"),
]


def request() -> HttpRequest:
    body = fresh_id(BODY)
    return HttpRequest(method="POST", path="/", query="", headers=Headers(RAW_HEADERS), body=body)


def grpc_request_factory() -> Any:
    """The ``HttpRequest`` of a gRPC SendMessage, as ``a2a_grpc`` builds it."""
    from a2a_core.grpc import encode_message
    from a2a_core.types import Message, Part, Role, SendMessageRequest

    body = encode_message(
        SendMessageRequest(
            message=Message(message_id=MARKER.decode(), role=Role.USER, parts=[Part(text="hello")])
        )
    )
    pairs = [("content-type", "application/grpc"), ("a2a-version", "1.0")]

    def grpc_request() -> HttpRequest:
        return HttpRequest(
            "POST",
            "/lf.a2a.v1.A2AService/SendMessage",
            headers=Headers(pairs),
            body=fresh_id(body),
            peer="127.0.0.1",
        )

    return grpc_request


class GcTimer:
    """Time spent in collections, per generation (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self.longest = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
            return
        spent = time.perf_counter() - self._start
        generation = info["generation"]
        self.count[generation] += 1
        self.seconds[generation] += spent
        self.longest = max(self.longest, spent)


async def measure(requests: int, warmup: int, binding: str = "jsonrpc") -> None:
    # The observer comes from A2A_BENCH_OBSERVER (`--observer` sets it; servers.py).
    make_request = grpc_request_factory() if binding == "grpc" else request
    server = servers.our_server("http://127.0.0.1:8000")
    async with server:
        for _ in range(warmup):
            response = await server.handle(make_request())
        timer = GcTimer()
        gc.callbacks.append(timer)
        started = time.process_time()
        for _ in range(requests):
            response = await server.handle(make_request())
        spent = time.process_time() - started
        gc.callbacks.remove(timer)
    assert response.status == 200, response
    if binding == "grpc":
        assert dict(response.trailers).get("grpc-status") == "0", response
    print(f"{spent / requests * 1e6:.1f} µs CPU per request ({requests / spent:,.0f}/s)")
    if gc.isenabled():
        per_request = [s / requests * 1e6 for s in timer.seconds]
        print(
            "garbage collector: "
            + ", ".join(
                f"gen{g} {timer.count[g]} runs {per_request[g]:.1f} µs/request" for g in range(3)
            )
            + f"; longest pause {timer.longest * 1e3:.1f} ms;"
            + f" {len(gc.get_objects()):,} objects tracked"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--warmup", type=int, default=2_000)
    parser.add_argument("--no-gc", action="store_true", help="disable the garbage collector")
    parser.add_argument("--uvloop", action="store_true", help="run on uvloop")
    parser.add_argument(
        "--observer",
        choices=("none", "noop", "otel", "otel-sampled", "otel-floor"),
        default="none",
        help="observe the server: not at all, with a no-op observer, or with OpenTelemetry",
    )
    parser.add_argument(
        "--binding",
        choices=("jsonrpc", "grpc"),
        default="jsonrpc",
        help="the request: JSON-RPC v1.0 SendMessage, or gRPC SendMessage (protobuf)",
    )
    args = parser.parse_args()
    os.environ[servers.OBSERVER_ENV] = args.observer
    if args.no_gc:
        gc.disable()
    if args.uvloop:
        import uvloop

        uvloop.run(measure(args.requests, args.warmup, args.binding))
    else:
        asyncio.run(measure(args.requests, args.warmup, args.binding))


if __name__ == "__main__":
    main()
