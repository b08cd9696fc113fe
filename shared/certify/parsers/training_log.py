"""The training launcher's log (``train-bench``, docs/formats.md) → step times, TFLOP/s per GPU, goodput.

Iteration lines are Megatron-LM's (``iteration 12/ 50 | … | elapsed time per iteration (ms): 3512.4 |
throughput per GPU (TFLOP/s/GPU): 447.1 | …``), so logs of real Megatron/NeMo runs parse too. The
launcher adds a header (``[train-bench] model=… nodes=… world_size=…``), a summary
(``[train-bench] done: … goodput=…``) or an error line. Averages leave out the first iteration
(it carries warm-up and compilation). Verdict ``pass`` with a summary and no error, else ``error``.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

Verdict = Literal["pass", "fail", "error"]

_ITERATION = re.compile(
    r"iteration\s+(\d+)\s*/\s*(\d+)\s*\|.*?elapsed time per iteration \(ms\):\s*([\d.]+)"
    r"(?:.*?throughput per GPU \(TFLOP/s/GPU\):\s*([\d.]+))?"
)
_FIELDS = re.compile(r"(\w+)=(\S+)")
_ERROR = re.compile(
    r"\[train-bench\] error:|Traceback \(most recent call last\)|CUDA error|NCCL error|"
    r"ChildFailedError"
)


class Step(BaseModel):
    iteration: int
    step_time_s: float
    tflops_per_gpu: float | None = None


class TrainingResult(BaseModel):
    verdict: Verdict
    model: str | None = None
    nodes: int | None = None
    world_size: int | None = None
    steps_planned: int | None = None
    steps: list[Step] = Field(default_factory=list)
    avg_step_time_s: float | None = Field(default=None, description="Mean over iterations after the first.")
    avg_tflops_per_gpu: float | None = None
    goodput: float | None = Field(default=None, description="Ideal over spent time, from the summary line.")
    errors: list[str] = Field(default_factory=list)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def parse(text: str) -> TrainingResult:
    """Parse a whole log; never raises on odd input."""
    header: dict[str, str] = {}
    summary: dict[str, str] = {}
    steps: list[Step] = []
    errors: list[str] = []
    planned: int | None = None
    for line in text.splitlines():
        if "[train-bench] done:" in line:
            summary = dict(_FIELDS.findall(line))
        elif line.startswith("[train-bench]") and "model=" in line:
            header = dict(_FIELDS.findall(line))
        elif (match := _ITERATION.search(line)) is not None:
            planned = int(match[2])
            steps.append(
                Step(
                    iteration=int(match[1]),
                    step_time_s=float(match[3]) / 1000,
                    tflops_per_gpu=float(match[4]) if match[4] else None,
                )
            )
        elif _ERROR.search(line):
            errors.append(line.strip())
    later = steps[1:] if len(steps) > 1 else steps
    goodput: float | None = None
    try:
        goodput = float(summary["goodput"]) if "goodput" in summary else None
    except ValueError:
        errors.append(f"unreadable goodput {summary['goodput']!r}")
    if not summary and not errors:
        errors.append("the log ends before the '[train-bench] done:' summary")
    if not steps and not errors:
        errors.append("no iteration lines")

    def number(value: str | None) -> int | None:
        return int(value) if value is not None and value.isdigit() else None

    return TrainingResult(
        verdict="error" if errors or not steps else "pass",
        model=header.get("model"),
        nodes=number(header.get("nodes")),
        world_size=number(header.get("world_size")),
        steps_planned=number(header.get("steps")) or planned,
        steps=steps,
        avg_step_time_s=_mean([s.step_time_s for s in later]),
        avg_tflops_per_gpu=_mean([s.tflops_per_gpu for s in later if s.tflops_per_gpu is not None]),
        goodput=goodput,
        errors=errors,
    )
