"""The names a Certification or WorkloadRun file hands to the cluster, checked against their grammars.

A nodeSelector key the API server would refuse used to select nothing and end the run as "no node
matches spec.target" (exit 3), and an image such as ``busybox; touch x`` reached the Job. Each is
refused here instead, while the file is read: one line naming the field (exit 2).
"""

from __future__ import annotations

from collections.abc import Iterator

from shared import errors, grammars
from shared.certify import models

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
"""The NodeSelectorRequirement operators a target takes (Gt and Lt are not taken: render.py)."""


def _operator(text: str) -> str | None:
    if text in OPERATORS:
        return None
    return f"invalid operator {text!r}: one of {', '.join(OPERATORS)}"


def _target(target: models.TargetSpec, at: str) -> Iterator[tuple[str, str | None]]:
    for key, value in target.nodeSelector.items():
        yield f"{at}.nodeSelector", grammars.label_key(key)
        yield f"{at}.nodeSelector[{key}]", grammars.label_value(value)
    for i, expression in enumerate(target.matchExpressions):
        yield f"{at}.matchExpressions[{i}].key", grammars.label_key(expression.key)
        yield f"{at}.matchExpressions[{i}].operator", _operator(expression.operator)
        for j, value in enumerate(expression.values):
            yield f"{at}.matchExpressions[{i}].values[{j}]", grammars.label_value(value)
    for i, name in enumerate(target.nodeNames):
        yield f"{at}.nodeNames[{i}]", grammars.node_name(name)
    for i, taint in enumerate(target.taintSelectors):
        yield f"{at}.taintSelectors[{i}].key", grammars.taint_key(taint.key)
        if taint.value is not None:
            yield f"{at}.taintSelectors[{i}].value", grammars.taint_value(taint.value)
        if taint.effect is not None:
            yield f"{at}.taintSelectors[{i}].effect", grammars.taint_effect(taint.effect)


def check(target: models.TargetSpec, images: dict[str, str | None], *, where: str) -> None:
    """Raise InvalidInput for the first target name or image (by field path) that fails its grammar."""
    found = list(_target(target, "spec.target"))
    found += [(field, grammars.image_reference(image)) for field, image in images.items() if image is not None]
    for field, problem in found:
        if problem is not None:
            raise errors.InvalidInput(f"{field}: {problem}", where=where)
