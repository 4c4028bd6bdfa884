"""Side-by-side HTTP benchmarks: our adapters, the official a2a-sdk, bare framework endpoints.

    uv run --group bench python bench/run.py [--duration 5] [--connections 32]
        [--servers ours-h11,bare-h11,...] [--scenarios rpc-v1,card,...]
        [--loadgen auto|wrk|python] [--update-docs] [--wait-idle 600]

Each server runs in its own process on 127.0.0.1, pinned to core 0; the load generator
(wrk with a Lua script when installed, else ``bench/loadgen.py``) runs pinned to core 1.
One server is up at a time; it serves every scenario, then stops. The table gives, per
scenario, requests/s (or events/s for streams), p50 and p99 latency (for streams: the time
to receive a whole stream), and each row's ratio to every other row of the same run.

``--update-docs`` rewrites the table in ``docs/benchmarks.md`` and the plot
``docs/benchmarks.png``; ``--json`` keeps the raw results (default
``bench/results/latest.json``, not committed).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import http.client
import json
import math
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

# The messageId of the request templates, which the load generators replace in each request
# (`loadgen.fresh_ids`, the wrk script): every request is new work.
from harness import FRESH_IDS_LUA, MESSAGE_ID

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DOCS_PAGE = ROOT / "docs" / "benchmarks.md"
DOCS_PLOT = ROOT / "docs" / "benchmarks.png"
SERVER_CPU, LOAD_CPU = 0, 1


@dataclass(frozen=True)
class Server:
    key: str
    """Short name used on the command line and in the ratio columns."""
    kind: str
    """``bench/servers.py`` kind."""
    stack: str
    """uvicorn stack (h11 or httptools); ignored by aiohttp."""
    family: str
    """ours, bare or sdk."""
    label: str
    baseline: bool = False
    """Runs the packages of ``--baseline`` (the code before a change), for before/after."""


SERVERS: tuple[Server, ...] = (
    Server(
        "ours-h11", "a2aserve-starlette", "h11", "ours", "a2aserve-starlette, uvicorn h11+asyncio"
    ),
    Server("bare-h11", "bare-starlette", "h11", "bare", "bare Starlette, uvicorn h11+asyncio"),
    Server("sdk-h11", "sdk", "h11", "sdk", "a2a-sdk, uvicorn h11+asyncio"),
    Server(
        "ours-ht",
        "a2aserve-starlette",
        "httptools",
        "ours",
        "a2aserve-starlette, uvicorn httptools+uvloop",
    ),
    Server(
        "bare-ht", "bare-starlette", "httptools", "bare", "bare Starlette, uvicorn httptools+uvloop"
    ),
    Server("sdk-ht", "sdk", "httptools", "sdk", "a2a-sdk, uvicorn httptools+uvloop"),
    Server("ours-aio", "a2aserve-aiohttp", "-", "ours", "a2aserve-aiohttp, aiohttp"),
    # The SDK's own executor (the same agent as the sdk rows) on our server, through
    # a2a_bridges.sdk: what an SDK user gets by moving over without rewriting the agent.
    Server(
        "bridged-h11",
        "a2aserve-bridged",
        "h11",
        "ours",
        "a2aserve-starlette + the SDK's executor (a2a_bridges.sdk), uvicorn h11+asyncio",
    ),
    Server("bare-aio", "bare-aiohttp", "-", "bare", "bare aiohttp"),
)
#: The stack a server runs on: ratios to "bare" and "sdk" compare rows of the same stack.
STACK_OF = {
    "ours-h11": "h11",
    "bare-h11": "h11",
    "sdk-h11": "h11",
    "ours-ht": "ht",
    "bare-ht": "ht",
    "sdk-ht": "ht",
    "ours-aio": "aio",
    "bare-aio": "aio",
    "bridged-h11": "h11",
}


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    mode: str
    """requests, stream or fanout."""
    unit: str


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("rpc-v1", "SendMessage, JSON-RPC v1.0 (blocking echo)", "requests", "req/s"),
    Scenario(
        "rpc-v03", "SendMessage, JSON-RPC v0.3 message/send (blocking echo)", "requests", "req/s"
    ),
    Scenario("rest", "SendMessage, REST POST /message:send (blocking echo)", "requests", "req/s"),
    Scenario("card", "Agent card GET (200)", "requests", "req/s"),
    Scenario("card-304", "Agent card conditional GET (304)", "requests", "req/s"),
    Scenario("stream-1", "Stream of {chunks} artifact chunks to one client", "stream", "events/s"),
    Scenario(
        "stream-fan",
        "{chunks} chunks to {subscribers} concurrent subscribers",
        "fanout",
        "events/s",
    ),
)

CARD_PATH = "/.well-known/agent-card.json"
JSON_V1 = {"Content-Type": "application/json", "A2A-Version": "1.0"}
SSE_V1 = {**JSON_V1, "Accept": "text/event-stream"}


def _message(text: str, *, v03: bool = False) -> dict[str, Any]:
    if v03:
        return {
            "kind": "message",
            "messageId": MESSAGE_ID,
            "role": "user",
            "parts": [{"kind": "text", "text": text}],
        }
    return {"messageId": MESSAGE_ID, "role": "ROLE_USER", "parts": [{"text": text}]}


def _rpc(method: str, params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


def _post(path: str, body: str, headers: dict[str, str]) -> dict[str, Any]:
    return {"method": "POST", "path": path, "headers": headers, "body": body}


def _get(path: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    return {"method": "GET", "path": path, "headers": headers or {}}


@dataclass
class Check:
    """What a correct reply looks like (checked once before the load)."""

    status: int
    marker: bytes = b""


def request_template(scenario: str, etag: str | None) -> tuple[dict[str, Any], Check]:
    """The request of a request/response scenario (the same bytes for every server)."""
    if scenario == "rpc-v1":
        body = _rpc("SendMessage", {"message": _message("hello")})
        return _post("/", body, JSON_V1), Check(200, b"TASK_STATE_COMPLETED")
    if scenario == "rpc-v03":
        body = _rpc("message/send", {"message": _message("hello", v03=True)})
        return _post("/", body, {"Content-Type": "application/json"}), Check(200, b'"completed"')
    if scenario == "rest":
        body = json.dumps({"message": _message("hello")})
        return _post("/message:send", body, JSON_V1), Check(200, b"TASK_STATE_COMPLETED")
    if scenario == "card":
        return _get(CARD_PATH), Check(200, b'"skills"')
    if scenario == "card-304":
        return _get(CARD_PATH, {"If-None-Match": etag or '"none"'}), Check(304)
    raise ValueError(scenario)


def stream_templates(family: str) -> dict[str, dict[str, Any]]:
    """The requests of the stream scenarios; bare endpoints have their own routes."""
    if family == "bare":
        return {
            "stream": _get("/bare/stream?n={n}"),
            "hold": _post("/bare/hold", "", {}),
            "subscribe": _get("/bare/subscribe/{id}"),
            "release": _post("/bare/release/{id}?n={n}", "", {}),
        }
    return {
        "stream": _post(
            "/", _rpc("SendStreamingMessage", {"message": _message("stream {n}")}), SSE_V1
        ),
        "hold": _post(
            "/",
            _rpc(
                "SendMessage",
                {"message": _message("hold {n}"), "configuration": {"returnImmediately": True}},
            ),
            JSON_V1,
        ),
        "subscribe": _post("/", _rpc("SubscribeToTask", {"id": "{id}"}), SSE_V1),
        "release": _post("/", _rpc("SendMessage", {"message": _message("release {id}")}), JSON_V1),
    }


# --- results -----------------------------------------------------------------------------


@dataclass
class Row:
    server: str
    scenario: str
    rate: float | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    errors: int = 0
    count: int = 0
    loadgen: str = ""
    note: str = ""
    seconds: float = 0.0
    durations_ms: list[float] = field(default_factory=list)
    round_rates: list[float] = field(default_factory=list)
    """The rate of each round (a combined row's), for the round-to-round spread."""


@dataclass
class Run:
    started: str
    command: str
    settings: dict[str, Any]
    machine: dict[str, Any]
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    seconds: float = 0.0
    rows: list[Row] = field(default_factory=list)
    baseline_rows: list[Row] = field(default_factory=list)
    """Rows of the ``--baseline`` servers (key suffix ``-before``), same run."""


# --- processes ---------------------------------------------------------------------------


def can_pin() -> bool:
    return hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) >= 2


def pinned(cpu: int | None) -> Any:
    if cpu is None:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http_get(
    port: int, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        conn.close()


def http_send(port: int, template: dict[str, Any]) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(
            template["method"],
            template["path"],
            body=template.get("body") or None,
            headers=template.get("headers") or {},
        )
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@contextlib.contextmanager
def running_server(
    server: Server,
    *,
    pin: bool,
    log_dir: Path,
    baseline: Path | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[tuple[int, int]]:
    """Start one server process, wait until it answers, stop it on exit: (port, pid).

    A ``server.baseline`` server imports our packages from ``baseline`` (a checkout of the
    code before a change: ``git archive REV packages | tar -x -C DIR``) instead. ``env``:
    more environment variables for the server (``bench/observe.py`` picks its observer so).
    """
    if server.baseline:
        if baseline is None:
            raise ValueError("a baseline server needs --baseline")
        folders = ("a2a-core", "a2a-starlette", "a2a-aiohttp")  # folders under packages/
        paths = [str(baseline / "packages" / folder / "src") for folder in folders]
        env = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join(paths)}
    elif env is not None:
        env = {**os.environ, **env}
    port = free_port()
    command = [sys.executable, str(BENCH / "servers.py"), server.kind, "--port", str(port)]
    if server.stack != "-":
        command += ["--stack", server.stack]
    if pin:
        command += ["--cpu", str(SERVER_CPU)]
    log_path = log_dir / f"{server.key}.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{server.key} exited: {log_path.read_text()[-2000:]}")
            try:
                if http_get(port, CARD_PATH)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{server.key} did not start: {log_path.read_text()[-2000:]}")
            time.sleep(0.1)
        yield port, process.pid
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# --- load generators ---------------------------------------------------------------------

WRK_SCRIPT = """\
wrk.method = {method}
wrk.body = {body}
{headers}
{fresh_ids}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRKJSON {{\\"requests\\":%d,\\"duration_us\\":%d,\\"p50_us\\":%d,\\"p99_us\\":%d," ..
    "\\"socket_errors\\":%d,\\"status_errors\\":%d}}\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status))
end
"""


def _lua_string(text: str) -> str:
    level = "="
    while f"]{level}]" in text:
        level += "="
    return f"[{level}[{text}]{level}]"


def run_wrk(
    port: int, template: dict[str, Any], seconds: int, connections: int, cpu: int | None
) -> dict[str, Any]:
    headers = "\n".join(
        f"wrk.headers[ {_lua_string(k)} ] = {_lua_string(v)}"
        for k, v in (template.get("headers") or {}).items()
    )
    script = WRK_SCRIPT.format(
        method=_lua_string(template["method"]),
        body=_lua_string(template.get("body") or ""),
        headers=headers,
        fresh_ids=FRESH_IDS_LUA,
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(script)
    try:
        url = f"http://127.0.0.1:{port}{template['path']}"
        command = [
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{seconds}s",
            "--latency",
            "--timeout",
            "10s",
            "-s",
            f.name,
            url,
        ]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            preexec_fn=pinned(cpu),
            timeout=seconds + 60,
            check=True,
        )
        out, err = done.stdout, done.stderr
    finally:
        os.unlink(f.name)
    match = re.search(r"WRKJSON (\{.*\})", out)
    if match is None:
        raise RuntimeError(f"wrk printed no result:\n{out}\n{err}")
    return dict(json.loads(match.group(1)))


def run_loadgen(spec: dict[str, Any], cpu: int | None, timeout: float) -> dict[str, Any]:
    spec = {**spec, "cpu": cpu}
    out = subprocess.run(
        [sys.executable, str(BENCH / "loadgen.py"), json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    if out.returncode != 0:
        raise RuntimeError(f"load generator failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def measure_requests(
    port: int,
    scenario: Scenario,
    etag: str | None,
    args: argparse.Namespace,
    cpu: int | None,
    *,
    seconds: int,
    warmup: int,
) -> Row:
    """One round of a request scenario: ``warmup`` seconds unmeasured, then ``seconds``."""
    template, check = request_template(scenario.key, etag)
    status, body = http_send(port, template)
    if status != check.status or check.marker not in body:
        return Row("", scenario.key, note=f"unexpected reply {status}: {body[:120]!r}")
    use_wrk = args.loadgen == "wrk" or (args.loadgen == "auto" and shutil.which("wrk"))
    if use_wrk:
        if warmup > 0:
            run_wrk(port, template, warmup, args.connections, cpu)
        result = run_wrk(port, template, seconds, args.connections, cpu)
        return Row(
            "",
            scenario.key,
            rate=result["requests"] / (result["duration_us"] / 1e6),
            p50_ms=result["p50_us"] / 1000,
            p99_ms=result["p99_us"] / 1000,
            errors=result["socket_errors"] + result["status_errors"],
            count=result["requests"],
            loadgen="wrk",
        )
    spec = {
        "mode": "requests",
        "port": port,
        "request": template,
        "expect_status": check.status,
        "connections": args.connections,
        "warmup": warmup,
        "duration": seconds,
    }
    result = run_loadgen(spec, cpu, timeout=warmup + seconds + 60)
    return Row(
        "",
        scenario.key,
        rate=result["requests"] / result["seconds"],
        p50_ms=result["p50_ms"],
        p99_ms=result["p99_ms"],
        errors=result["errors"],
        count=result["requests"],
        loadgen="python",
    )


def measure_stream(
    port: int,
    server: Server,
    scenario: Scenario,
    args: argparse.Namespace,
    cpu: int | None,
    *,
    seconds: int,
    warmup: bool,
) -> Row:
    """One round of a stream scenario: streams (or fan-outs) for about ``seconds``."""
    templates = stream_templates(server.family)
    stream_time = max(seconds, 1)
    if scenario.mode == "stream":
        request = dict(templates["stream"])
        request["path"] = request["path"].replace("{n}", str(args.chunks))
        request["body"] = request.get("body", "").replace("{n}", str(args.chunks))
        spec = {
            "mode": "stream",
            "port": port,
            "request": request,
            "warmup": int(warmup),
            "repeat": args.stream_repeat,
            "time_limit": stream_time,
            "stream_timeout": 120,
            "min_events": args.chunks,
        }
    else:
        spec = {
            "mode": "fanout",
            "port": port,
            "hold": templates["hold"],
            "subscribe": templates["subscribe"],
            "release": templates["release"],
            "subscribers": args.subscribers,
            "chunks": args.chunks,
            "warmup_chunks": 20,
            "warmup": int(warmup),
            "repeat": args.fanout_repeat,
            "time_limit": stream_time,
            "stream_timeout": 180,
            "min_events": args.chunks,
        }
    result = run_loadgen(spec, cpu, timeout=600)
    durations = sorted(result["durations_ms"])
    return Row(
        "",
        scenario.key,
        rate=result["events"] / result["seconds"],
        p50_ms=_percentile(durations, 50),
        p99_ms=_percentile(durations, 99),
        errors=result["errors"],
        count=result["events"],
        loadgen="python",
        seconds=result["seconds"],
        durations_ms=durations,
    )


def combine(scenario: Scenario, rounds: list[Row]) -> Row:
    """One row from the rounds of one server: requests/s and latencies are the medians of
    the rounds; stream rates are all events over all stream time, latencies over all
    streams."""
    done = [r for r in rounds if r.rate]
    if not done:
        return Row("", scenario.key, note=next((r.note for r in rounds if r.note), "failed"))
    errors = sum(r.errors for r in rounds)
    count = sum(r.count for r in done)
    round_rates = [r.rate or 0.0 for r in done]
    if scenario.mode == "requests":
        return Row(
            "",
            scenario.key,
            rate=statistics.median(round_rates),
            p50_ms=statistics.median(r.p50_ms or 0.0 for r in done),
            p99_ms=statistics.median(r.p99_ms or 0.0 for r in done),
            errors=errors,
            count=count,
            loadgen=done[0].loadgen,
            round_rates=round_rates,
        )
    durations = sorted(d for r in done for d in r.durations_ms)
    return Row(
        "",
        scenario.key,
        rate=count / sum(r.seconds for r in done),
        p50_ms=_percentile(durations, 50),
        p99_ms=_percentile(durations, 99),
        errors=errors,
        count=count,
        loadgen=done[0].loadgen,
        seconds=sum(r.seconds for r in done),
        durations_ms=durations,
        round_rates=round_rates,
    )


def spread(row: Row) -> float:
    """How far apart the rounds of ``row`` were: (fastest - slowest) / median, 0 for one."""
    rates = row.round_rates
    if len(rates) < 2 or not statistics.median(rates):
        return 0.0
    return (max(rates) - min(rates)) / statistics.median(rates)


def _percentile(values: Sequence[float], pct: float) -> float | None:
    if not values:
        return None
    index = min(len(values) - 1, max(0, math.ceil(pct / 100 * len(values)) - 1))
    return values[index]


# --- the machine -------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = "unknown"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = 0
    with contextlib.suppress(OSError), open("/proc/meminfo") as f:
        memory = int(f.readline().split()[1]) * 1024
    versions = {}
    for name in (
        "a2aserve-core",
        "a2a-sdk",
        "starlette",
        "uvicorn",
        "httptools",
        "uvloop",
        "aiohttp",
        "msgspec",
        "anyio",
        "h11",
    ):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    wrk = shutil.which("wrk")
    wrk_version = ""
    if wrk:
        out = subprocess.run([wrk, "-v"], capture_output=True, text=True)
        wrk_version = " ".join((out.stdout or out.stderr).split()[:2])
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": round(memory / 2**30, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "versions": versions,
        "wrk": wrk_version,
    }


def wait_for_idle(limit: float, threshold: float) -> tuple[float, float, float]:
    """Wait (at most ``limit`` seconds) until the 1-minute load average is under ``threshold``."""
    deadline = time.monotonic() + limit
    load = os.getloadavg()
    while load[0] >= threshold and time.monotonic() < deadline:
        print(f"waiting for an idle machine: load {load[0]:.2f} >= {threshold}", flush=True)
        time.sleep(15)
        load = os.getloadavg()
    return load


# --- output ------------------------------------------------------------------------------


def _fmt_rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _fmt_ms(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _ratio(a: float | None, b: float | None) -> str:
    if not a or not b:
        return "-"
    r = a / b
    return f"{r:.2f}x" if r < 10 else f"{r:.0f}x" if r < 1000 else f"{r:,.0f}x"


def scenario_title(scenario: Scenario, args_like: dict[str, Any]) -> str:
    return scenario.title.format(chunks=args_like["chunks"], subscribers=args_like["subscribers"])


def table(run: Run, scenario: Scenario, markdown: bool) -> list[str]:
    rows = [r for r in run.rows if r.scenario == scenario.key]
    if not rows:
        return []
    keys = [r.server for r in rows]
    by_key = {r.server: r for r in rows}
    labels = {s.key: s.label for s in SERVERS}
    lat = "p50 / p99 ms" if scenario.mode == "requests" else "stream p50 / p99 ms"
    header = ["server", "key", scenario.unit, lat, *[f"÷{k}" for k in keys]]
    body = []
    for r in rows:
        rate = _fmt_rate(r.rate) + (f" ({r.errors} err)" if r.errors else "")
        if r.note:
            rate = r.note
        cells = [labels[r.server], r.server, rate, f"{_fmt_ms(r.p50_ms)} / {_fmt_ms(r.p99_ms)}"]
        cells += ["·" if k == r.server else _ratio(r.rate, by_key[k].rate) for k in keys]
        body.append(cells)
    title = scenario_title(scenario, run.settings)
    if markdown:
        lines = [
            f"**{title}**",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---:" if i >= 2 else "---" for i in range(len(header))) + "|",
        ]
        lines += ["| " + " | ".join(cells) + " |" for cells in body]
        return [*lines, ""]
    widths = [max(len(str(c[i])) for c in [header, *body]) for i in range(len(header))]
    lines = [title]
    for cells in [header, *body]:
        lines.append(
            "  ".join(
                str(c).ljust(widths[i]) if i < 2 else str(c).rjust(widths[i])
                for i, c in enumerate(cells)
            )
        )
    return [*lines, ""]


#: The share of the bare row (same stack) each scenario must reach (issue 23): blocking
#: sends half of a fast stack's bare endpoint and 0.8 of h11's; one-client streams 0.8;
#: the card 0.95. The fan-out is compared with the baseline only (no worse than before).
SHARE_GOALS: dict[tuple[str, str], float] = {
    **{(s, stack): 0.5 for s in ("rpc-v1", "rpc-v03", "rest") for stack in ("ht", "aio")},
    **{(s, "h11"): 0.8 for s in ("rpc-v1", "rpc-v03", "rest")},
    **{("stream-1", stack): 0.8 for stack in ("h11", "ht", "aio")},
    **{("card", stack): 0.95 for stack in ("h11", "ht", "aio")},
}
#: The p99 of a blocking send at 32 connections: at most this multiple of the bare row's.
P99_GOAL: float = 3.0


def targets(run: Run) -> list[str]:
    """Our rows against the issue's targets: the share of the bare row, the p99 against the
    bare row's, and (for information) the multiple of the SDK."""
    by_key = {(r.server, r.scenario): r for r in run.rows}
    rate = {key: r.rate for key, r in by_key.items()}
    lines = []
    for scenario in SCENARIOS:
        for ours in ("ours-h11", "ours-ht", "ours-aio"):
            value = rate.get((ours, scenario.key))
            if value is None:
                continue
            stack = STACK_OF[ours]
            short = ours.removeprefix("ours-")
            bare = next((k for k, s in STACK_OF.items() if s == stack and k.startswith("bare")), "")
            sdk = next((k for k, s in STACK_OF.items() if s == stack and k.startswith("sdk")), "")
            parts = []
            bare_rate = rate.get((bare, scenario.key))
            goal = SHARE_GOALS.get((scenario.key, short))
            if bare_rate and goal is not None:
                share = value / bare_rate
                verdict = "met" if share >= goal else "MISSED"
                parts.append(f"{share:.2f}x {bare} (goal {goal:.2f}x: {verdict})")
            ours_p99 = by_key[(ours, scenario.key)].p99_ms
            bare_row = by_key.get((bare, scenario.key))
            bare_p99 = bare_row.p99_ms if bare_row is not None else None
            if scenario.key in ("rpc-v1", "rpc-v03", "rest") and ours_p99 and bare_p99:
                times = ours_p99 / bare_p99
                verdict = "met" if times <= P99_GOAL else "MISSED"
                parts.append(f"p99 {times:.1f}x {bare}'s (goal <= {P99_GOAL:g}x: {verdict})")
            if scenario.key == "card-304":
                card = rate.get((ours, "card"))
                if card:
                    ok = value >= card
                    parts.append(
                        f"{value / card:.2f}x our 200 path (goal >= 1: {'met' if ok else 'MISSED'})"
                    )
            sdk_rate = rate.get((sdk, scenario.key))
            if sdk_rate and scenario.key in ("rpc-v1", "rpc-v03", "rest", "stream-1", "stream-fan"):
                parts.append(f"{value / sdk_rate:.1f}x {sdk}")
            if parts:
                lines.append(f"{scenario.key:10} {ours:8} " + "; ".join(parts))
    return lines


def render(run: Run, markdown: bool) -> str:
    out: list[str] = []
    for scenario in SCENARIOS:
        out += table(run, scenario, markdown)
    goal_lines = targets(run)
    if goal_lines:
        if markdown:
            out += [
                "**Targets** (issue 23; same stack: the bare row for the share and the p99, "
                "the SDK row for the multiple)",
                "",
                "```",
                *goal_lines,
                "```",
                "",
            ]
        else:
            out += ["Targets (same stack)", *goal_lines, ""]
    out += before_after(run, markdown)
    return "\n".join(out)


def before_after(run: Run, markdown: bool) -> list[str]:
    """Our rows next to the same servers on the ``--baseline`` code, from the same run."""
    before = {(r.server.removesuffix("-before"), r.scenario): r for r in run.baseline_rows}
    cells = []
    for row in run.rows:
        prior = before.get((row.server, row.scenario))
        if prior is None or not prior.rate or not row.rate:
            continue
        ratio = row.rate / prior.rate
        # The larger of the two rows' round-to-round spreads: a ratio within it is noise.
        # A run saved before the rounds' rates were kept has none: its spread is unknown.
        known = bool(prior.round_rates and row.round_rates)
        noise = max(spread(prior), spread(row))
        verdict = "ok" if ratio >= 0.95 or (known and 1 - ratio <= noise) else "SLOWER"
        cells.append(
            [
                row.server,
                row.scenario,
                _fmt_rate(prior.rate),
                _fmt_rate(row.rate),
                f"{ratio:.2f}x",
                f"{noise:.0%}" if known else "?",
                verdict,
                f"{_fmt_ms(prior.p99_ms)} / {_fmt_ms(row.p99_ms)}",
            ]
        )
    if not cells:
        return []
    header = [
        "server",
        "scenario",
        "before",
        "after",
        "after/before",
        "spread",
        "within 5% or spread",
        "p99 ms before/after",
    ]
    if markdown:
        lines = ["**Before / after** (the baseline code in the same run, same rounds)", ""]
        lines += ["| " + " | ".join(header) + " |", "|---|---|---:|---:|---:|---:|:-:|---:|"]
        return [*lines, *("| " + " | ".join(c) + " |" for c in cells), ""]
    widths = [max(len(c[i]) for c in [header, *cells]) for i in range(len(header))]
    lines = ["Before / after (baseline code, same run)"]
    for c in [header, *cells]:
        lines.append("  ".join(v.ljust(widths[i]) if i < 2 else v.rjust(widths[i])
                               for i, v in enumerate(c)))  # fmt: skip
    return [*lines, ""]


def describe(run: Run) -> str:
    m = run.machine
    versions = ", ".join(f"{k} {v}" for k, v in m["versions"].items())
    return "\n".join(
        [
            f"- When: {run.started}, {run.seconds / 60:.1f} minutes.",
            f"- Command: `{run.command}`",
            f"- Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, "
            f"Linux {m['kernel']}, CPython {m['python']}.",
            f"- Load average (1/5/15 min) before: {'/'.join(f'{x:.2f}' for x in run.load_before)}; "
            f"after: {'/'.join(f'{x:.2f}' for x in run.load_after)}.",
            f"- Pinning: servers on core {SERVER_CPU}, load generator on core {LOAD_CPU}"
            if run.settings["pinned"]
            else "- Pinning: none",
            f"- Load generator: {m['wrk'] or 'no wrk'} for requests "
            f"({run.settings['connections']} connections, 1 thread); bench/loadgen.py for "
            f"streams. Each scenario: {run.settings['duration']} s per server in "
            f"{run.settings.get('rounds', 1)} rounds rotating through the servers (all running "
            f"throughout), {run.settings['warmup']} s warm-up before the first; rates are the "
            "median round (streams: all events over all stream time).",
            f"- Versions: {versions}.",
        ]
    )


def plot(run: Run, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenarios = [s for s in SCENARIOS if any(r.scenario == s.key and r.rate for r in run.rows)]
    colors = {"ours": "#2b7bba", "bare": "#9a9a9a", "sdk": "#d9822b"}
    family = {s.key: s.family for s in SERVERS}
    labels = {s.key: s.label for s in SERVERS}
    fig, axes = plt.subplots(
        len(scenarios), 1, figsize=(10, 2.2 + 1.25 * len(scenarios) * 2.2 / 2), squeeze=False
    )
    for ax, scenario in zip(axes[:, 0], scenarios, strict=True):
        rows = [r for r in run.rows if r.scenario == scenario.key and r.rate]
        names = [labels[r.server] for r in rows]
        values = [r.rate or 0.0 for r in rows]
        bars = ax.barh(range(len(rows)), values, color=[colors[family[r.server]] for r in rows])
        ax.set_yticks(range(len(rows)), names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_title(
            f"{scenario_title(scenario, run.settings)} ({scenario.unit}, log scale)",
            fontsize=9,
            loc="left",
        )
        ax.tick_params(axis="x", which="both", labelsize=7)
        for bar, value in zip(bars, values, strict=True):
            ax.text(
                bar.get_width(),
                bar.get_y() + bar.get_height() / 2,
                f" {value:,.0f}",
                va="center",
                fontsize=7,
            )
        ax.set_xlim(right=max(values) * 4)
    fig.suptitle(
        "A2A servers side by side (blue: ours, grey: bare framework, orange: a2a-sdk)", fontsize=10
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def update_docs(run: Run) -> None:
    text = DOCS_PAGE.read_text()
    block = f"{describe(run)}\n\n{render(run, markdown=True)}"
    new, count = re.subn(
        r"(<!-- bench:begin -->\n).*?(\n<!-- bench:end -->)",
        lambda m: m.group(1) + block + m.group(2),
        text,
        flags=re.DOTALL,
    )
    if count != 1:
        raise RuntimeError(f"{DOCS_PAGE} has no <!-- bench:begin --> ... <!-- bench:end --> block")
    DOCS_PAGE.write_text(new)
    plot(run, DOCS_PLOT)


# --- main --------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--duration", type=int, default=6, help="seconds of load per scenario and server"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds the duration is split into (rotating)"
    )
    parser.add_argument("--warmup", type=int, default=1, help="warm-up seconds before each")
    parser.add_argument("--connections", type=int, default=32, help="concurrent connections")
    parser.add_argument(
        "--servers",
        default=",".join(s.key for s in SERVERS),
        help="comma-separated server keys (default: all)",
    )
    parser.add_argument(
        "--scenarios",
        default=",".join(s.key for s in SCENARIOS),
        help="comma-separated scenario keys (default: all)",
    )
    parser.add_argument("--chunks", type=int, default=1000, help="artifact chunks per stream")
    parser.add_argument("--subscribers", type=int, default=100, help="fan-out subscribers")
    parser.add_argument(
        "--stream-repeat", type=int, default=5, help="single streams per round (at most)"
    )
    parser.add_argument(
        "--fanout-repeat", type=int, default=1, help="fan-outs per round (at least one)"
    )
    parser.add_argument(
        "--render", type=Path, help="measure nothing: print a saved --json run (and --update-docs)"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="also run our servers on the packages in this directory (rows KEY-before)",
    )
    parser.add_argument("--loadgen", choices=("auto", "wrk", "python"), default="auto")
    parser.add_argument("--no-pin", action="store_true", help="do not pin processes to cores")
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=0,
        help="wait up to this many seconds for a 1-minute load under 0.5",
    )
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "latest.json")
    parser.add_argument("--markdown", action="store_true", help="print the tables as markdown")
    parser.add_argument(
        "--update-docs",
        action="store_true",
        help="rewrite the table in docs/benchmarks.md and docs/benchmarks.png",
    )
    args = parser.parse_args(argv)
    known_servers = {s.key for s in SERVERS}
    known_scenarios = {s.key for s in SCENARIOS}
    args.server_keys = [k for k in args.servers.split(",") if k]
    args.scenario_keys = [k for k in args.scenarios.split(",") if k]
    for key in args.server_keys:
        if key not in known_servers:
            parser.error(f"unknown server {key!r}; known: {', '.join(sorted(known_servers))}")
    for key in args.scenario_keys:
        if key not in known_scenarios:
            parser.error(f"unknown scenario {key!r}; known: {', '.join(sorted(known_scenarios))}")
    return args


def load_run(path: Path) -> Run:
    """A run saved by ``--json``."""
    data = json.loads(path.read_text())
    rows = [Row(**r) for r in data.pop("rows")]
    baseline_rows = [Row(**r) for r in data.pop("baseline_rows", [])]
    data["load_before"] = tuple(data["load_before"])
    data["load_after"] = tuple(data["load_after"])
    return Run(**data, rows=rows, baseline_rows=baseline_rows)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.render is not None:  # no measuring: print (and publish) a saved run again
        run = load_run(args.render)
        print(describe(run), "", render(run, markdown=args.markdown), sep="\n")
        if args.update_docs:
            update_docs(run)
        return
    pin = can_pin() and not args.no_pin
    load_cpu = LOAD_CPU if pin else None
    load = wait_for_idle(args.wait_idle, 0.5) if args.wait_idle else os.getloadavg()
    started = time.monotonic()
    command = "uv run --group bench python bench/run.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    run = Run(
        started=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        command=command.strip(),
        settings={
            "duration": args.duration,
            "rounds": args.rounds,
            "warmup": args.warmup,
            "connections": args.connections,
            "chunks": args.chunks,
            "subscribers": args.subscribers,
            "pinned": pin,
            "loadgen": args.loadgen,
        },
        machine=machine(),
        load_before=load,
    )
    servers = [s for s in SERVERS if s.key in args.server_keys]
    if args.baseline is not None:
        servers += [
            dataclasses.replace(s, key=f"{s.key}-before", label=f"{s.label} (before)",
                                baseline=True)
            for s in servers
            if s.family == "ours"
        ]  # fmt: skip
    scenarios = [s for s in SCENARIOS if s.key in args.scenario_keys]
    # Every server is up for the whole run (idle ones cost nothing), and each scenario is
    # measured in rounds that rotate through the servers: a machine whose speed drifts
    # (a shared host) then drifts under every row alike, not under the last ones.
    rounds = max(1, args.rounds)
    per_round = max(1, round(args.duration / rounds))
    with (
        tempfile.TemporaryDirectory(prefix="a2a-bench-") as logs,
        contextlib.ExitStack() as stack,
    ):
        running: dict[str, tuple[int, str | None]] = {}
        for server in servers:
            port, _ = stack.enter_context(
                running_server(server, pin=pin, log_dir=Path(logs), baseline=args.baseline)
            )
            running[server.key] = (port, http_get(port, CARD_PATH)[1].get("etag"))
        for scenario in scenarios:
            print(f"== {scenario_title(scenario, run.settings)}", flush=True)
            samples: dict[str, list[Row]] = {s.key: [] for s in servers}
            for index in range(rounds):
                shift = index % len(servers)
                for server in servers[shift:] + servers[:shift]:
                    port, etag = running[server.key]
                    first = index == 0
                    try:
                        if scenario.mode == "requests":
                            warmup = args.warmup if first else 0
                            row = measure_requests(
                                port,
                                scenario,
                                etag,
                                args,
                                load_cpu,
                                seconds=per_round,
                                warmup=warmup,
                            )
                        else:
                            row = measure_stream(
                                port,
                                server,
                                scenario,
                                args,
                                load_cpu,
                                seconds=per_round,
                                warmup=first,
                            )
                    except Exception as exc:  # one failed cell must not lose the run
                        print(f"   {server.key} failed: {exc}", file=sys.stderr, flush=True)
                        row = Row("", scenario.key, note="failed")
                    samples[server.key].append(row)
            for server in servers:
                row = combine(scenario, samples[server.key])
                row.server = server.key
                (run.baseline_rows if server.baseline else run.rows).append(row)
                print(
                    f"   {server.key:9} {_fmt_rate(row.rate):>10} {scenario.unit:8} "
                    f"p50 {_fmt_ms(row.p50_ms):>7} ms  p99 {_fmt_ms(row.p99_ms):>7} ms"
                    f"{'  errors ' + str(row.errors) if row.errors else ''}"
                    f"{'  ' + row.note if row.note else ''}",
                    flush=True,
                )
    run.load_after = os.getloadavg()
    run.seconds = time.monotonic() - started
    print()
    print(describe(run))
    print()
    print(render(run, markdown=args.markdown))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(asdict(run), indent=1))
    if args.update_docs:
        update_docs(run)
        print(f"updated {DOCS_PAGE.relative_to(ROOT)} and {DOCS_PLOT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
