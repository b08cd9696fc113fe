"""``aicr snapshot``, ``validate`` and ``diff`` against a 1,000-node simulated cluster.

The simulated cluster runs in its own process (``python -m shared.sim serve --nodes 1000 --gpu h100``)
and is seeded with the 19-component recipe of the seed example (``python -m shared.sim seed``). Each
command is the real console script in a fresh process, so the figures include start-up; median of 5.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NAME = "cluster"
NODES = 1000
RUNS = 5
BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent
SEED = ["--service", "eks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "inference", "--platform", "dynamo"]


def _timed(argv: list[str], *, ok: tuple[int, ...] = (0,)) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    if done.returncode not in ok:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-500:]}")
    return time.perf_counter() - start


def _median(argv: list[str], **kwargs: tuple[int, ...]) -> str:
    times = [_timed(argv, **kwargs) for _ in range(RUNS)]
    return f"{statistics.median(times):.2f} s (max {max(times):.2f})"


def run() -> str:
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as folder:
        work = Path(folder)
        config, recipe = work / "kubeconfig", work / "recipe.yaml"
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "shared.sim",
                "serve",
                "--port",
                "0",
                "--nodes",
                str(NODES),
                "--gpu",
                "h100",
                "--racks",
                "16",
                "--kubeconfig-out",
                str(config),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            if not server.stdout.readline().startswith("ready "):
                raise RuntimeError("the simulated cluster did not start")
            subprocess.run([str(BIN / "aicr"), "recipe", *SEED, "-o", str(recipe)], check=True)
            subprocess.run(
                [sys.executable, "-m", "shared.sim", "seed", "--kubeconfig", str(config), "--recipe", str(recipe)],
                check=True,
                stdout=subprocess.DEVNULL,
                cwd=ROOT,
            )
            kc = ["--kubeconfig", str(config)]
            baseline = work / "baseline.yaml"
            subprocess.run([str(BIN / "aicr"), "snapshot", *kc, "-o", str(baseline)], check=True)
            rows = [
                ("`aicr snapshot`", _median([str(BIN / "aicr"), "snapshot", *kc, "-o", str(work / "s.yaml")]), "≤ 5 s"),
                (
                    "`aicr validate` (19 components, live snapshot)",
                    _median([str(BIN / "aicr"), "validate", "--recipe", str(recipe), *kc]),
                    "≤ 5 s",
                ),
                (
                    "`aicr diff` of two snapshot files",
                    _median([str(BIN / "aicr"), "diff", "--baseline", str(baseline), "--target", str(baseline)]),
                    "≤ 1 s",
                ),
                (
                    "`aicr diff` baseline file vs live cluster",
                    _median([str(BIN / "aicr"), "diff", "--baseline", str(baseline), *kc]),
                    "—",
                ),
            ]
        finally:
            server.terminate()
            server.communicate(timeout=60)
    lines = [
        f"{NODES} simulated H100 nodes, 19 seeded components; real console scripts, median of {RUNS}.",
        "",
        "| command | ours | target |",
        "|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)
