"""Profile one server under one scenario's load with py-spy (sampling, no code changes).

    uv run --group bench python bench/profile.py ours-ht rpc-v1 [--seconds 8] [--top 40]
        [--raw out.txt]

Starts the server pinned to core 0 as ``bench/run.py`` does, drives the scenario from core 1
for ``--seconds`` while ``py-spy record`` samples the server, then prints the functions with
the most samples: inclusive (the function or anything it calls is running) and self (the
function's own code). ``--raw`` keeps the collapsed stacks (flamegraph.pl / speedscope input).
py-spy needs ptrace rights over the server process (root, or CAP_SYS_PTRACE).
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import run as bench


def summarize(raw: str, top: int) -> str:
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = [_short(f) for f in stack.split(";")]
        total += count
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    lines = [f"{total} samples", "", "inclusive %  function"]
    lines += [f"{100 * n / total:10.1f}  {name}" for name, n in inclusive.most_common(top)]
    lines += ["", "self %       function"]
    lines += [f"{100 * n / total:10.1f}  {name}" for name, n in own.most_common(top)]
    return "\n".join(lines)


def _short(frame: str) -> str:
    # py-spy frames look like "function (path/to/module.py:123)"; keep the function and the
    # last two path components, drop the line number so that one function is one entry.
    name, _, where = frame.partition(" (")
    path = where.rstrip(")").rsplit(":", 1)[0]
    parts = Path(path).parts
    return f"{name} ({'/'.join(parts[-2:])})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("server", choices=[s.key for s in bench.SERVERS])
    parser.add_argument("scenario", choices=[s.key for s in bench.SCENARIOS])
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--raw", type=Path, help="keep the collapsed stacks here")
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    args = parser.parse_args()
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    server = next(s for s in bench.SERVERS if s.key == args.server)
    scenario = next(s for s in bench.SCENARIOS if s.key == args.scenario)
    pin = bench.can_pin()
    load_cpu = bench.LOAD_CPU if pin else None
    load_args = bench.parse_args(
        [
            *("--duration", str(args.seconds), "--warmup", "1"),
            *("--connections", str(args.connections), "--stream-repeat", "1000"),
        ]
    )
    with (
        tempfile.TemporaryDirectory() as tmp,
        bench.running_server(server, pin=pin, log_dir=Path(tmp)) as (port, pid),
    ):
        out = Path(tmp) / "stacks.txt"
        spy = [
            py_spy,
            "record",
            "--pid",
            str(pid),
            "--format",
            "raw",
            "--rate",
            str(args.rate),
            "--duration",
            str(args.seconds + 1),
            "--output",
            str(out),
        ]
        etag = bench.http_get(port, bench.CARD_PATH)[1].get("etag")
        sampler = threading.Thread(
            target=subprocess.run, args=(spy,), kwargs={"capture_output": True}
        )
        sampler.start()
        if scenario.mode == "requests":
            row = bench.measure_requests(
                port, scenario, etag, load_args, load_cpu, seconds=args.seconds, warmup=1
            )
        else:
            row = bench.measure_stream(
                port, server, scenario, load_args, load_cpu, seconds=args.seconds, warmup=True
            )
        sampler.join()
        print(
            f"{server.label}, {scenario.key}: {bench._fmt_rate(row.rate)} {scenario.unit}"
            " (under the profiler)\n"
        )
        raw = out.read_text() if out.exists() else ""
        if args.raw:
            args.raw.write_text(raw)
        print(summarize(raw, args.top))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    main()
