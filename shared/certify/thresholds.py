"""Threshold expressions: CEL over ``value``, one per metric key, compiled when a spec loads.

Upstream's registry of keys (research/nvcre.md §4) is kept: an unknown key or an expression that
does not compile is invalid input before any workload runs, never a surprise an hour into a run.
Evaluation follows upstream: keys in sorted order, the first violation gives the message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shared import errors

KEYS: dict[str, str] = {
    "busBandwidthGBps": "GB/s, peak out-of-place bus bandwidth over message sizes",
    "algBandwidthGBps": "GB/s, peak out-of-place algorithm bandwidth",
    "goodputRatio": "0-1, ideal over spent time of a training run",
    "avgTFLOPsPerGPU": "TFLOP/s per GPU, mean over iterations after the first",
    "avgStepTimeSec": "seconds, mean step time after the first iteration",
}


@dataclass(frozen=True)
class Violation:
    key: str
    value: float | None
    message: str


@dataclass(frozen=True)
class Thresholds:
    """Compiled expressions of one category; empty means "report only"."""

    programs: tuple[tuple[str, Any], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.programs)

    def check(self, measured: Mapping[str, float]) -> Violation | None:
        """The first violated (or unmeasurable) key in sorted order, or None when all hold."""
        from shared import cel

        for key, program in self.programs:
            value = measured.get(key)
            if value is None:
                return Violation(key, None, f"Threshold {key!r}: no measured value")
            try:
                ok = program.evaluate_bool({"value": cel.to_cel(float(value))})
            except cel.EvaluationError as exc:
                return Violation(key, value, f"Threshold {key!r}: {exc}")
            if not ok:
                return Violation(
                    key, value, f"Threshold {key!r} violated: measured {value:.4f}, expression: {program.expression}"
                )
        return None


def require_measured(
    thresholds: Mapping[str, str] | None, *, measures: Sequence[str], category: str, where: str
) -> None:
    """InvalidInput when a key is one ``category`` never measures (a DCGM diagnostic has no bandwidth).

    Upstream would wait ``measurementTimeout`` after the workload and then fail the category with
    ``MeasurementTimeout`` (research/nvcre.md §4); the outcome is certain before the run, so it is
    refused before anything is created.
    """
    unmeasured = sorted(set(thresholds or ()) - set(measures))
    if unmeasured:
        offered = ", ".join(measures) if measures else "nothing (pass/fail only)"
        raise errors.InvalidInput(
            f"threshold key(s) {unmeasured} not measured by {category}; measured: {offered}", where=where
        )


def compile_all(thresholds: Mapping[str, str] | None, *, where: str) -> Thresholds:
    """Compile every expression; InvalidInput names the key and lists the valid ones."""
    if not thresholds:
        return Thresholds()
    unknown = sorted(set(thresholds) - set(KEYS))
    if unknown:
        raise errors.InvalidInput(f"unknown threshold key(s) {unknown}; valid keys: {sorted(KEYS)}", where=where)
    from shared import cel

    programs = []
    for key in sorted(thresholds):
        program = cel.compile(str(thresholds[key]), name=key, where=f"{where}.{key}")
        try:  # a type error (a string compared with a number) shows on a probe value, before the run
            program.evaluate_bool({"value": cel.to_cel(1.0)})
        except cel.EvaluationError as exc:
            raise errors.InvalidInput(f"threshold {key!r}: {exc}: {thresholds[key]!r}", where=where) from None
        programs.append((key, program))
    return Thresholds(tuple(programs))
