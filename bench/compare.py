"""Before/after table of two ``bench/run.py`` results (the rows both runs have).

    uv run python bench/compare.py bench/results/before.json bench/results/latest.json

Prints a Markdown table: per server and scenario, the rate before, after, and the ratio.
Use it with the same command run on two versions of the code (for example the previous
commit's packages first on ``PYTHONPATH``), on the same idle machine.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    before_path, after_path = (Path(p) for p in sys.argv[1:3])
    before = json.loads(before_path.read_text())
    after = json.loads(after_path.read_text())
    old = {(r["server"], r["scenario"]): r for r in before["rows"]}
    print("| server | scenario | before | after | after / before | p99 ms before / after |")
    print("|---|---|---:|---:|---:|---:|")
    for row in after["rows"]:
        prior = old.get((row["server"], row["scenario"]))
        if prior is None or not prior["rate"] or not row["rate"]:
            continue
        p99 = f"{prior['p99_ms']:,.1f} / {row['p99_ms']:,.1f}"
        print(
            f"| {row['server']} | {row['scenario']} | {prior['rate']:,.0f} | "
            f"{row['rate']:,.0f} | {row['rate'] / prior['rate']:.2f}x | {p99} |"
        )


if __name__ == "__main__":
    main()
