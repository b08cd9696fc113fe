"""``aicr`` start-up per command, whole processes, against the start-up issue's targets.

Each command runs as the real console script in a fresh process, median of 10 (the machine is
shared, so medians, with the maximum beside them, and the median CPU time of the process, which
other work on the machine changes much less than the wall time). ``python -c pass`` is the floor: the interpreter
alone. For each command one more run under ``python -X importtime`` names where its imports spend
their time: the self time of every imported module summed per top-level package (``networkx``,
``pydantic``, ``typer`` with the ``click`` it brings counted as ``click``; ours per sub-package,
``shared.bundle``), the five largest shown.

The recipe is the seed's training recipe (eks/h100/ubuntu/training); "memo empty" drops the
memoised recipe output before each run but keeps the compiled catalog (the steady state after a
catalog change); bundle runs with the user cache warm (parsed catalog and recipe, compiled
templates), once per deployer.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

NAME = "startup"
RUNS = 10
AICR = str(Path(sys.executable).parent / "aicr")
CRITERIA = ["--service", "eks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]
DEPLOYERS = ("helm", "argocd", "argocd-helm", "flux", "helmfile")
SELECTOR = "components.gpu-operator.values.driver.version"
TOP = 5
OURS = ("shared", "aicr")
"""Our packages, whose time is shown per sub-package or module (``shared.bundle``, ``aicr.main``)."""


def _median_ms(
    argv: list[str], env: dict[str, str], before: Callable[[], None] | None = None
) -> tuple[float, float, float]:
    """(median wall ms, max wall ms, median CPU ms): the CPU time (user + system of the child)
    hardly moves when other work shares the machine, the wall time does."""
    times, cpu = [], []
    for _ in range(RUNS):
        if before is not None:
            before()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime) * 1000)
    return statistics.median(times), max(times), statistics.median(cpu)


def top_imports(stderr: str, count: int = TOP) -> list[tuple[str, float]]:
    """The ``count`` top-level packages with the most import self time (ms), from ``-X importtime``."""
    totals: dict[str, float] = defaultdict(float)
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        fields = line.split(":", 1)[1].split("|")
        if len(fields) != 3 or not fields[0].strip().isdigit():
            continue  # the header line
        parts = fields[2].strip().split(".")
        name = ".".join(parts[:2]) if parts[0] in OURS else parts[0]
        totals[name] += int(fields[0]) / 1000
    return sorted(totals.items(), key=lambda item: -item[1])[:count]


def _importtime(argv: list[str], env: dict[str, str], before: Callable[[], None] | None = None) -> str:
    if before is not None:
        before()
    # The console script is a Python file: run it under -X importtime with the same interpreter.
    cmd = [sys.executable, "-X", "importtime", *argv] if argv[0] == AICR else [argv[0], "-X", "importtime", *argv[1:]]
    proc = subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return ", ".join(f"{name} {ms:.0f}" for name, ms in top_imports(proc.stderr))


def run() -> str:
    # Bytecode cached, as an installed program runs: a run that compiles every module it imports
    # measures the compiler (about 50 ms for aicr recipe), not the start-up.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cache = Path(tempfile.mkdtemp(prefix="bench-cache-"))
    env["XDG_CACHE_HOME"] = str(cache)
    work = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    recipe = work / "recipe.yaml"
    recipe_argv = [AICR, "recipe", *CRITERIA, "-o", str(recipe)]
    subprocess.run(recipe_argv, env=env, check=True)  # compiles the catalog and fills the memo

    def drop_memo() -> None:
        shutil.rmtree(cache / "aicr" / "recipes", ignore_errors=True)

    def drop_bundle() -> None:
        shutil.rmtree(work / "bundle", ignore_errors=True)

    cases: list[tuple[str, list[str], Callable[[], None] | None, str]] = [
        ("`python -c pass`", [sys.executable, "-c", "pass"], None, "— (≈ 23 ms)"),
        ("`aicr --help`", [AICR, "--help"], None, "≤ 90 ms"),
        ("`aicr recipe … -o F`, memo empty", recipe_argv, drop_memo, "≤ 160 ms"),
        ("`aicr recipe … -o F`, memo warm", recipe_argv, None, "≤ 70 ms"),
        (
            "`aicr query --selector …`, memo empty",
            [AICR, "query", *CRITERIA, "--selector", SELECTOR],
            drop_memo,
            "≤ 160 ms",
        ),
        (
            "`aicr query --selector …`, memo warm",
            [AICR, "query", *CRITERIA, "--selector", SELECTOR],
            None,
            "≤ 160 ms",
        ),
    ]
    for deployer in DEPLOYERS:
        argv = [AICR, "bundle", "-r", str(recipe), "-d", deployer, "--repo", "https://git.example.com/r.git"]
        argv += ["-o", str(work / "bundle")]
        drop_bundle()
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cases.append((f"`aicr bundle -d {deployer}`", argv, drop_bundle, "≤ 200 ms"))
    cases.append(("`aicr verify D`", [AICR, "verify", str(work / "bundle")], None, "—"))
    cases.append(("`aicr completion bash`", [AICR, "completion", "bash"], None, "—"))

    lines = [
        "| command | median of 10 | CPU (median) | target | top imports (self time summed per package, ms) |",
        "|---|---|---|---|---|",
    ]
    for label, argv, before, target in cases:
        median, worst, cpu = _median_ms(argv, env, before)
        imports = _importtime(argv, env, before)
        lines.append(f"| {label} | {median:.0f} ms (max {worst:.0f}) | {cpu:.0f} ms | {target} | {imports} |")
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    return "\n".join(lines)
