"""The training launcher's log parser (format in docs/formats.md).

Covers: header, iterations, summary and goodput are read; the first (warm-up) iteration is left
out of the averages; real Megatron-LM iteration lines parse; an error line or a log without its
summary is an error; generated logs give back the step times that were printed (property test).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.certify.parsers import training_log

HEADER = (
    "[train-bench] model=nemotron5-8b nodes=2 gpus_per_node=8 world_size=16 global_batch_size=128 "
    "seq_length=4096 steps=3"
)


def _line(n: int, ms: float, tflops: float) -> str:
    return (
        f" [2026-11-29 18:00:0{n}] iteration {n:8d}/{3:8d} | consumed samples: {n * 128:12d} | elapsed time per "
        f"iteration (ms): {ms:.1f} | throughput per GPU (TFLOP/s/GPU): {tflops:.1f} | learning rate: "
        "1.000000E-04 | global batch size:   128 | lm loss: 1.067000E+01 | loss scale: 1.0 |"
    )


def test_a_complete_log_gives_steps_averages_and_goodput() -> None:
    text = "\n".join(
        [
            HEADER,
            _line(1, 9000.0, 150.0),
            _line(2, 3000.0, 450.0),
            _line(3, 3200.0, 430.0),
            "[train-bench] done: steps=3 avg_step_time_s=3.1000 avg_tflops_per_gpu=440.0 goodput=0.9012 elapsed_s=75.2",
        ]
    )
    result = training_log.parse(text)
    assert (result.verdict, result.model, result.nodes, result.world_size, result.steps_planned) == (
        "pass",
        "nemotron5-8b",
        2,
        16,
        3,
    )
    assert result.avg_step_time_s == pytest.approx(3.1) and result.avg_tflops_per_gpu == pytest.approx(440.0)
    assert result.goodput == 0.9012 and [s.iteration for s in result.steps] == [1, 2, 3]


def test_real_megatron_iteration_lines_parse() -> None:
    line = (
        " [2024-05-01 12:00:00] iteration       10/     100 | consumed samples:         1280 | elapsed time per "
        "iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 456.7 | learning rate: 1.000000E-04 | global "
        "batch size:   128 | lm loss: 9.876543E+00 | loss scale: 1.0 | grad norm: 1.234 | number of skipped "
        "iterations:   0 | number of nan iterations:   0 |"
    )
    result = training_log.parse(line)
    assert result.steps[0].step_time_s == pytest.approx(1.2345) and result.steps[0].tflops_per_gpu == 456.7
    assert result.steps_planned == 100 and result.verdict == "error"  # no summary: not a finished run


def test_a_crashed_run_is_an_error_naming_the_rank() -> None:
    text = "\n".join(
        [
            HEADER,
            _line(1, 9000.0, 150.0),
            "[train-bench] error: rank 9 on node-001 failed: CUDA error: unspecified launch failure",
        ]
    )
    result = training_log.parse(text)
    assert result.verdict == "error" and "rank 9 on node-001" in result.errors[0]


@given(
    st.lists(
        st.floats(min_value=1, max_value=99999, allow_nan=False).map(lambda v: round(v, 1)), min_size=2, max_size=30
    )
)
def test_generated_logs_give_back_the_printed_step_times(times: list[float]) -> None:
    lines = [HEADER] + [_line(n + 1, ms, 100.0) for n, ms in enumerate(times)]
    lines.append("[train-bench] done: steps=3 avg_step_time_s=1 avg_tflops_per_gpu=1 goodput=0.5 elapsed_s=1")
    result = training_log.parse("\n".join(lines))
    assert [s.step_time_s for s in result.steps] == [pytest.approx(ms / 1000) for ms in times]
    assert result.avg_step_time_s == pytest.approx(sum(times[1:]) / len(times[1:]) / 1000)
