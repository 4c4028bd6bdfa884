"""What observation costs over HTTP: SendMessage and a one-client stream, per observer mode.

    uv run python bench/observe.py [--baseline DIR] [--servers ours-h11,ours-aio]
        [--rounds 3] [--duration 2] [--chunks 1000]

One run, four modes of the same server (``bench/servers.py``, chosen by
``A2A_BENCH_OBSERVER``), each in its own process on 127.0.0.1 (pinned to core 0, the load
generator to core 1), rotating through the modes in every round so that a machine that
gets busier affects them alike:

- ``before``: the code before the seam (``--baseline DIR``: ``git archive REV packages |
  tar -x -C DIR``), no observer;
- ``none``: this code, no observer (the target: within 2 % of ``before``);
- ``noop``: the seam with an observer that does nothing (`NoOpObserver`);
- ``otel``: `OpenTelemetryObserver` on the SDK, a ``BatchSpanProcessor`` exporting to
  nowhere and a ``MeterProvider`` with a periodic reader (the target: at most 15 % below
  ``none``);
- ``otel-floor``: the same SDK set-up under the least an instrumentation could ask of it
  (two bare spans per blocking call and one duration measurement: ``bench/servers.py``,
  ``_floor_observer``), to tell the SDK's own cost from the observer's;
- ``otel-sampled``: the same with ``ParentBased(TraceIdRatioBased(0.1))``: one trace in ten
  recorded (metrics: all), as a busy deployment samples.

Rates on a shared 2-core machine drift by several percent between rounds (by far more when
other work runs on it); the tables give the median round and each mode's ratio to ``none``:
the rates, and the server process's CPU time (user + system, from ``/proc``) per request or
per event, which another process's load disturbs much less than the rate. For a
deterministic comparison, count instructions (``bench/handle.py --observer``, under
callgrind: see its docstring).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import run as bench_run

MODES = ("before", "none", "noop", "otel-floor", "otel", "otel-sampled")
SCENARIOS = {s.key: s for s in bench_run.SCENARIOS}
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (``/proc/PID/stat``)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--baseline", type=Path, help="packages before the change")
    parser.add_argument("--servers", default="ours-h11,ours-aio")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=2, help="seconds per round")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--stream-repeat", type=int, default=5)
    parser.add_argument("--no-pin", action="store_true")
    args = parser.parse_args()
    args.loadgen = "auto"
    modes = [m for m in MODES if m != "before" or args.baseline is not None]
    servers = {s.key: s for s in bench_run.SERVERS}
    chosen = [servers[key] for key in args.servers.split(",")]
    pin = not args.no_pin and bench_run.can_pin()
    load_cpu = bench_run.LOAD_CPU if pin else None
    rates: dict[tuple[str, str, str], list[float]] = {}
    cpu: dict[tuple[str, str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as logs:
        for round_ in range(args.rounds):
            for server in chosen:
                for mode in modes:
                    baseline = None
                    if mode == "before":
                        server_run = bench_run.dataclasses.replace(server, baseline=True)
                        baseline = args.baseline
                    else:
                        server_run = server
                    env = {"A2A_BENCH_OBSERVER": "none" if mode == "before" else mode}
                    with bench_run.running_server(
                        server_run, pin=pin, log_dir=Path(logs), baseline=baseline, env=env
                    ) as (port, pid):
                        # A warm-up of each scenario, then the measured run, whose CPU time
                        # the server spent is read around it.
                        scenario = SCENARIOS["rpc-v1"]
                        bench_run.measure_requests(
                            port, scenario, None, args, load_cpu, seconds=1, warmup=0
                        )
                        before = cpu_seconds(pid)
                        row = bench_run.measure_requests(
                            port, scenario, None, args, load_cpu, seconds=args.duration, warmup=0
                        )
                        spent = cpu_seconds(pid) - before
                        key = (server.key, "rpc-v1", mode)
                        rates.setdefault(key, []).append(row.rate or 0)
                        cpu.setdefault(key, []).append(spent / max(row.count, 1) * 1e6)
                        scenario = SCENARIOS["stream-1"]
                        bench_run.measure_stream(
                            port, server, scenario, args, load_cpu, seconds=1, warmup=False
                        )
                        before = cpu_seconds(pid)
                        row = bench_run.measure_stream(
                            port,
                            server,
                            scenario,
                            args,
                            load_cpu,
                            seconds=args.duration,
                            warmup=False,
                        )
                        spent = cpu_seconds(pid) - before
                        key = (server.key, "stream-1", mode)
                        rates.setdefault(key, []).append(row.rate or 0)
                        cpu.setdefault(key, []).append(spent / max(row.count, 1) * 1e6)
                    print(f"round {round_ + 1} {server.key} {mode} done", file=sys.stderr)
    for title, table, units, digits in (
        ("rate (median round)", rates, ("req/s", "events/s"), 0),
        ("server CPU (median round)", cpu, ("µs/request", "µs/event"), 1),
    ):
        print(f"\n**{title}**\n")
        print("| server | scenario | " + " | ".join(modes) + " | " + " | ".join(
            f"{m} ÷ none" for m in modes if m != "none"
        ) + " |")  # fmt: skip
        print("|---|---|" + "---:|" * (2 * len(modes) - 1))
        for server in chosen:
            for scenario, unit in zip(("rpc-v1", "stream-1"), units, strict=True):
                medians = {m: statistics.median(table[server.key, scenario, m]) for m in modes}
                cells = [f"{medians[m]:,.{digits}f}" for m in modes]
                ratios = [f"{medians[m] / medians['none']:.3f}" for m in modes if m != "none"]
                row = " | ".join(cells + ratios)
                print(f"| {server.key} | {scenario} ({unit}) | {row} |")


if __name__ == "__main__":
    main()
