"""The values a values file holds as text that something parses later: durations, selectors, labels.

Each is a plain string to pydantic, so a ``duration: 5x`` or a ``gpuNodeLabel: "a=b=c"`` loads and
then fails when the controller first uses it (or silently selects nothing). Checked here with the
parsers the code uses at run time (``shared.durations``, ``shared.kube.labelselector``) and the
label and taint rules of ``shared.grammars``, each problem as (dotted path of the value, message);
``rulecheck`` adds the file position, and ``config.load`` refuses the first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from shared import durations, errors, grammars
from shared.kube import labelselector

Check = Callable[[str], str | None]
"""A value's text → what is wrong with it, or None."""


def duration(text: str) -> str | None:
    try:
        durations.parse(text)
    except errors.InvalidInput as exc:
        return exc.message
    return None


def whole_seconds(text: str) -> str | None:
    return None if text.strip().isdigit() else f"invalid number of seconds {text!r} (a whole number, e.g. 60)"


def selector(text: str) -> str | None:
    try:
        labelselector.parse(text)
    except ValueError as exc:
        return str(exc)
    return None


label_key = grammars.label_key
label_value = grammars.label_value


def label_prefix(text: str) -> str | None:
    """A prefix the quarantine puts before its own label names (``<prefix>cordon-by``)."""
    problem = label_key(f"{text}cordon-by")
    return None if problem is None else f"invalid label prefix {text!r}: {problem.split(': ', 1)[1]}"


CHECKS: tuple[tuple[str, Check], ...] = (
    ("fault-quarantine.circuitBreaker.duration", duration),
    ("fault-quarantine.gpuNodeLabel", selector),
    ("fault-quarantine.labelPrefix", label_prefix),
    ("fault-quarantine.skipNodeLabels[].key", label_key),
    ("fault-quarantine.skipNodeLabels[].value", label_value),
    ("fault-quarantine.ruleSets[].taint.key", grammars.taint_key),
    ("fault-quarantine.ruleSets[].taint.value", grammars.taint_value),
    ("fault-quarantine.ruleSets[].label.key", label_key),
    ("fault-quarantine.ruleSets[].label.value", label_value),
    ("nvsentinel.retention", duration),
    ("node-drainer.evictionTimeoutInSeconds", whole_seconds),
    ("node-drainer.requeueBackoffBase", duration),
    ("node-drainer.requeueBackoffMax", duration),
    ("node-drainer.podDrainPolicies[].podSelector", selector),
    ("health-events-analyzer.rules[].timeWindow", duration),
    ("lifecycle-manager.config.schedulingGate.taints[].key", grammars.taint_key),
    ("lifecycle-manager.config.schedulingGate.taints[].value", grammars.taint_value),
)
"""Every such value by its path (``[]``: each item of a list) and the parser it must pass."""


def problems(user: Any) -> list[tuple[str, str]]:
    """(dotted path, message) for every value in ``user`` (the file as written) that fails its check."""
    found: list[tuple[str, str]] = []
    for pattern, check in CHECKS:
        for dotted, value in _values(user, pattern.split("."), ""):
            if not isinstance(value, str | int | float) or isinstance(value, bool):
                continue  # a wrong type is the model's to report
            message = check(str(value))
            if message is not None:
                found.append((dotted, f"{dotted}: {message}"))
    return found


def _values(data: Any, parts: list[str], prefix: str) -> Iterator[tuple[str, Any]]:
    if not parts:
        yield prefix, data
        return
    head, rest = parts[0], parts[1:]
    each = head.endswith("[]")
    key = head.removesuffix("[]")
    if not isinstance(data, dict) or key not in data:
        return
    path = f"{prefix}.{key}" if prefix else key
    value = data[key]
    if not each:
        yield from _values(value, rest, path)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _values(item, rest, f"{path}[{i}]")
