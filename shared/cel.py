"""CEL expressions: the only module that imports celpy.

Every expression is compiled when its configuration loads, so a typo fails the load with the rule's
name, the expression and the position, never later on a live event. One Environment per process
(the first costs ~80 ms to build its parser); programs are kept and reused. celpy's interpreted
runner is used: it is safe to call from any thread, and the string extensions of cel-go that
upstream rules use are added as functions. Callers still evaluate on one thread, as the design says,
and convert each input once with ``to_cel``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from shared import errors

logging.getLogger("celpy").setLevel(logging.CRITICAL)

_ENVIRONMENT: Any = None


class EvaluationError(Exception):
    """An expression failed on this input (a missing field, a type mismatch); not a config error."""


def _environment() -> Any:
    global _ENVIRONMENT  # noqa: PLW0603 - one parser per process, built on first use
    if _ENVIRONMENT is None:
        import celpy

        _ENVIRONMENT = celpy.Environment()
    return _ENVIRONMENT


def _string_extensions() -> dict[str, Callable[..., Any]]:
    """The cel-go ``ext.Strings()`` functions rules are written with."""
    from celpy import celtypes

    def text(value: Any) -> celtypes.StringType:
        return celtypes.StringType(value)

    return {
        "lowerAscii": lambda s: text(str(s).lower()),
        "upperAscii": lambda s: text(str(s).upper()),
        "trim": lambda s: text(str(s).strip()),
        "replace": lambda s, old, new, *n: text(str(s).replace(str(old), str(new), *(int(x) for x in n))),
        "split": lambda s, sep, *n: celtypes.ListType([text(p) for p in str(s).split(str(sep), *(
            int(x) - 1 for x in n if int(x) > 0))]),
        "join": lambda items, sep="": text(str(sep).join(str(i) for i in items)),
        "indexOf": lambda s, sub: celtypes.IntType(str(s).find(str(sub))),
    }


@dataclass(frozen=True)
class Program:
    """A compiled expression, ready to evaluate many times."""

    name: str
    expression: str
    runner: Any

    def evaluate(self, activation: Mapping[str, Any]) -> Any:
        """The result as a Python value; EvaluationError when the input does not fit the expression."""
        from celpy.evaluation import CELEvalError

        try:
            result = self.runner.evaluate(dict(activation))
        except CELEvalError as exc:
            raise EvaluationError(_eval_message(exc)) from None
        if isinstance(result, CELEvalError):
            raise EvaluationError(_eval_message(result))
        return _to_python(result)

    def evaluate_bool(self, activation: Mapping[str, Any]) -> bool:
        result = self.evaluate(activation)
        if not isinstance(result, bool):
            raise EvaluationError(f"rule {self.name!r} returned {type(result).__name__}, not a boolean")
        return result


def _eval_message(exc: Any) -> str:
    args = getattr(exc, "args", ())
    return str(args[0]) if args else str(exc)


def compile(expression: str, *, name: str, where: str | None = None) -> Program:
    """Compile and prepare ``expression``; a syntax error names the rule, the position and a caret."""
    from celpy.celparser import CELParseError

    env = _environment()
    try:
        ast = env.compile(expression)
    except CELParseError as exc:
        line, column = getattr(exc, "line", None), getattr(exc, "column", None)
        position = f" at line {line}, column {column}" if line is not None else ""
        raise errors.InvalidInput(f"rule {name!r}: invalid CEL{position}: {expression!r}",
                                  where=where) from None
    return Program(name=name, expression=expression, runner=env.program(ast, functions=_string_extensions()))


def to_cel(value: Any) -> Any:
    """Convert plain JSON-like data once, before evaluating any number of programs on it."""
    from celpy.adapter import json_to_cel

    return json_to_cel(value)


def _to_python(value: Any) -> Any:
    from celpy import celtypes

    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, celtypes.IntType | celtypes.UintType):
        return int(value)
    if isinstance(value, celtypes.DoubleType):
        return float(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    if isinstance(value, celtypes.ListType):
        return [_to_python(v) for v in value]
    if isinstance(value, celtypes.MapType):
        return {_to_python(k): _to_python(v) for k, v in value.items()}
    return value
