"""Run every ``bench_*.py`` module and rewrite its section of docs/benchmarks.md.

Each module exposes ``NAME`` (the section marker) and ``run() -> str`` (markdown). Sections are
replaced between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``; the rest of the file, with
the baselines and commentary, is left alone. Each block's first line names the machine and its
yardstick (the CPU seconds of a fixed loop), so figures of different days can be set side by
side. ``python -m benches recipe`` runs one.
"""

from __future__ import annotations

import importlib
import platform
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = subprocess.run(["nproc"], capture_output=True, text=True, check=False).stdout.strip() or "?"
    return (
        f"{date.today().isoformat()}, {cores} cores ({cpu}), Python {platform.python_version()}; "
        f"yardstick {yardstick():.2f} s"
    )


YARDSTICK_LOOPS = 10_000_000


def yardstick() -> float:
    """Seconds of CPU for a fixed pure-Python loop, best of three: the same machine is not equally
    fast every day (a shared host), and this says how fast it was when a block was measured, so
    blocks of different days compare by more than their date."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for _ in range(YARDSTICK_LOOPS):
            pass
        best = min(best, time.process_time() - start)
    return best


def main(selected: list[str]) -> int:
    modules = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Benchmarks\n"
    for module_name in modules:
        module = importlib.import_module(f"benches.{module_name}")
        if selected and module.NAME not in selected:
            continue
        print(f"running {module_name} ...", flush=True)
        body = f"_Measured {machine()}._\n\n{module.run().strip()}\n"
        start, end = f"<!-- bench:{module.NAME} -->", f"<!-- /bench:{module.NAME} -->"
        block = f"{start}\n{body}{end}"
        if start in text:
            before, rest = text.split(start, 1)
            text = before + block + rest.split(end, 1)[1]
        else:
            text = text.rstrip() + f"\n\n{block}\n"
        print(body)
    DOC.write_text(text.rstrip() + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
